package dev.tapedeck.cli;

import java.util.Locale;

import picocli.CommandLine;

import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.protocol.enginecore.VllmLine;

/**
 * KV-cache event flags shared by {@code serve} and {@code play}: vLLM's {@code --kv-events-config} fields as flags.
 */
final class KvEventsOptions
{
    /** How events are encoded. */
    enum Format
    {
        /** As the selected vLLM line sends them: arrays up to 0.22, maps from 0.23. */
        AUTO,
        /** Positional arrays tagged by type. */
        ARRAY,
        /** Maps with a "type" key. */
        MAP
    }

    @CommandLine.Option(names = {"--enable-kv-cache-events", "--enable-kvcache"},
        description = "Publish KV-cache events (BlockStored, BlockRemoved, AllBlocksCleared) on a ZeroMQ PUB " +
            "socket, one msgpack batch per engine step that changed blocks, as vLLM does (--enable-kvcache: " +
            "llm-d-inference-sim's name; prefix caching is on by default).")
    boolean enabled;

    @CommandLine.Option(names = {"--kv-events-endpoint", "--zmq-endpoint"}, paramLabel = "ENDPOINT",
        description = "PUB endpoint; bound when it has a wildcard (tcp://*:5557 = every interface, vLLM's " +
            "default; tcp://127.0.0.1:* = a free port), connected otherwise; replica or rank i uses port + i " +
            "(default: " + KvEventsSettings.DEFAULT_ENDPOINT + ", bound on loopback only; --zmq-endpoint: " +
            "llm-d-inference-sim's name).")
    String endpoint;

    @CommandLine.Option(names = "--kv-events-topic", paramLabel = "TOPIC",
        description = "Topic frame of every message; {rank} is replaced by the data-parallel rank (default for " +
            "serve: llm-d's kv@<POD_IP or host>:<port>@<model>, shared by the ranks of an instance; " +
            "for play: empty, as vLLM).")
    String topic;

    @CommandLine.Option(names = "--kv-events-replay-endpoint", paramLabel = "ENDPOINT",
        description = "Bind a ROUTER here that replays missed batches from a requested sequence number " +
            "(replica or rank i uses port + i).")
    String replayEndpoint;

    @CommandLine.Option(names = "--kv-events-format", paramLabel = "auto|array|map", defaultValue = "auto",
        converter = FormatConverter.class,
        description = "Event encoding: auto follows the vLLM version (arrays up to 0.22, maps from 0.23; " +
            "default: ${DEFAULT-VALUE}).")
    Format format;

    @CommandLine.Option(names = "--use-vllm-map-event-format",
        description = "llm-d-inference-sim's flag: --kv-events-format map.")
    boolean mapEventFormat;

    @CommandLine.Option(names = {"--kv-events-buffer-steps", "--kv-events-replay-queue-size"}, paramLabel = "N",
        defaultValue = "" + KvEventsSettings.DEFAULT_BUFFER_STEPS,
        description = "Batches kept for replay (--kv-events-replay-queue-size: llm-d-inference-sim's name; " +
            "default: ${DEFAULT-VALUE}).")
    int bufferSteps;

    /** Case-insensitive {@link Format}. */
    static final class FormatConverter implements CommandLine.ITypeConverter<Format>
    {
        @Override
        public Format convert(final String value)
        {
            try
            {
                return Format.valueOf(value.toUpperCase(Locale.ROOT));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException("expected auto, array or map, got '" + value + "'");
            }
        }
    }

    /**
     * @param line the vLLM line whose encoding {@code auto} follows.
     * @param defaultTopic the topic when {@code --kv-events-topic} is absent.
     * @param dataParallelRank the rank in every batch.
     * @return the settings of replica 0 (see {@link KvEventsSettings#forReplica(int)}).
     */
    KvEventsSettings settings(final VllmLine line, final String defaultTopic, final int dataParallelRank)
    {
        final boolean maps = mapEventFormat || (Format.AUTO == format ? line.kvEventsAsMaps() : Format.MAP == format);
        return new KvEventsSettings(null == endpoint ? KvEventsSettings.DEFAULT_ENDPOINT : endpoint, replayEndpoint,
            null == topic ? defaultTopic : topic, maps, dataParallelRank, bufferSteps,
            KvEventsSettings.DEFAULT_RING_BYTES, null == endpoint || KvEventsSettings.bindsByVllmsRule(endpoint),
            maps || line.compareTo(VllmLine.V0_19) >= 0);
    }

    /**
     * @return whether a topic was given.
     */
    boolean hasTopic()
    {
        return null != topic;
    }
}
