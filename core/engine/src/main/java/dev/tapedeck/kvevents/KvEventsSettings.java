package dev.tapedeck.kvevents;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How one engine publishes its KV-cache events, after vLLM's {@code KVEventsConfig}: the PUB endpoint (a given one is
 * bound when it holds a wildcard, {@code ::}, or is {@code ipc://}/{@code inproc://}, connected otherwise, as vLLM
 * does; tapedeck's default binds loopback only, {@link #DEFAULT_ENDPOINT}), the
 * optional replay endpoint (a ROUTER, always bound), the topic (the first frame of every message), whether events are
 * msgpack maps (vLLM 0.23 and newer) or positional arrays, the data-parallel rank carried in every batch, how many
 * batches the replay history keeps, and the bytes of the ring that carries events from the engine to the publisher.
 * Immutable.
 *
 * @param endpoint the PUB socket's ZeroMQ endpoint.
 * @param replayEndpoint the replay ROUTER's endpoint, or null for none.
 * @param topic the topic frame.
 * @param eventsAsMaps true for map-encoded events, false for positional arrays.
 * @param dataParallelRank the rank written in every batch.
 * @param bufferSteps batches kept for replay.
 * @param ringBytes capacity of the engine-to-publisher ring (a power of two).
 * @param bindsPublisher true when the PUB socket binds, false when it connects to a subscriber that binds.
 * @param extraKeys {@code BlockStored} carries {@code extra_keys} (and, as an array, {@code group_idx}): vLLM 0.19 and
 *     newer (the keys a block's hash covers: the LoRA name, the cache salt on the first block; nil for none).
 */
public record KvEventsSettings(
    String endpoint,
    String replayEndpoint,
    String topic,
    boolean eventsAsMaps,
    int dataParallelRank,
    int bufferSteps,
    int ringBytes,
    boolean bindsPublisher,
    boolean extraKeys)
{
    /** vLLM's default endpoint: every interface. */
    public static final String VLLM_DEFAULT_ENDPOINT = "tcp://*:5557";
    /**
     * tapedeck's default endpoint, bound on loopback only (vLLM's port; every interface is {@link
     * #VLLM_DEFAULT_ENDPOINT}, given explicitly).
     */
    public static final String DEFAULT_ENDPOINT = "tcp://127.0.0.1:5557";
    /** vLLM's default {@code buffer_steps}: batches kept for replay. */
    public static final int DEFAULT_BUFFER_STEPS = 10_000;
    /** Default ring between the engine and the publisher: 8 MiB, thousands of steps of events. */
    public static final int DEFAULT_RING_BYTES = 8 << 20;

    private static final Pattern TCP_PORT = Pattern.compile("^(tcp://.*:)(\\d+)$");

    /**
     * Settings whose PUB socket binds or connects by vLLM's rule ({@link #bindsByVllmsRule}).
     */
    public KvEventsSettings(final String endpoint, final String replayEndpoint, final String topic,
        final boolean eventsAsMaps, final int dataParallelRank, final int bufferSteps, final int ringBytes)
    {
        this(endpoint, replayEndpoint, topic, eventsAsMaps, dataParallelRank, bufferSteps, ringBytes,
            bindsByVllmsRule(endpoint), eventsAsMaps);
    }

    /**
     * Validates the values.
     */
    public KvEventsSettings
    {
        checkEndpoint("--kv-events-endpoint", endpoint);
        if (null != replayEndpoint)
        {
            checkEndpoint("--kv-events-replay-endpoint", replayEndpoint);
        }
        if (null == topic)
        {
            throw new IllegalArgumentException("the KV events topic is missing");
        }
        if (bufferSteps < 1)
        {
            throw new IllegalArgumentException("the KV events replay buffer needs at least one batch, got " +
                bufferSteps);
        }
        if (ringBytes < 4096 || 0 != (ringBytes & (ringBytes - 1)))
        {
            throw new IllegalArgumentException("the KV events ring must be a power of two of at least 4096 bytes, " +
                "got " + ringBytes);
        }
    }

    private static void checkEndpoint(final String flag, final String value)
    {
        if (null == value || !(value.startsWith("tcp://") || value.startsWith("ipc://") ||
            value.startsWith("inproc://")))
        {
            throw new IllegalArgumentException(flag + " must be a ZeroMQ endpoint such as tcp://*:5557, got '" +
                value + "'");
        }
    }

    /**
     * @param endpoint a PUB endpoint.
     * @return vLLM's rule: the PUB socket binds when the endpoint holds a wildcard ({@code *}, {@code ::}) or is
     *     {@code ipc://} or {@code inproc://}, and connects otherwise.
     */
    public static boolean bindsByVllmsRule(final String endpoint)
    {
        return null != endpoint && (endpoint.contains("*") || endpoint.contains("::") ||
            endpoint.startsWith("ipc://") || endpoint.startsWith("inproc://"));
    }

    /**
     * Settings with vLLM's defaults but the endpoint: no replay socket, topic {@code ""}, array events, rank 0,
     * {@link #DEFAULT_BUFFER_STEPS} batches kept, a {@link #DEFAULT_RING_BYTES} ring; the withers below change one
     * value each.
     *
     * @param endpoint the PUB socket's ZeroMQ endpoint.
     * @return the settings.
     */
    public static KvEventsSettings publishOn(final String endpoint)
    {
        return new KvEventsSettings(endpoint, null, "", false, 0, DEFAULT_BUFFER_STEPS, DEFAULT_RING_BYTES);
    }

    /**
     * @param value another replay endpoint, or null for none.
     * @return these settings with that replay endpoint.
     */
    public KvEventsSettings replayEndpoint(final String value)
    {
        return new KvEventsSettings(endpoint, value, topic, eventsAsMaps, dataParallelRank, bufferSteps, ringBytes,
            bindsPublisher, extraKeys);
    }

    /**
     * @param value true for map-encoded events (vLLM 0.23 and newer), false for positional arrays.
     * @return these settings with that encoding.
     */
    public KvEventsSettings eventsAsMaps(final boolean value)
    {
        return new KvEventsSettings(endpoint, replayEndpoint, topic, value, dataParallelRank, bufferSteps, ringBytes,
            bindsPublisher, extraKeys);
    }

    /**
     * @param value batches kept for replay.
     * @return these settings with that history.
     */
    public KvEventsSettings bufferSteps(final int value)
    {
        return new KvEventsSettings(endpoint, replayEndpoint, topic, eventsAsMaps, dataParallelRank, value, ringBytes,
            bindsPublisher, extraKeys);
    }

    /**
     * @param value capacity of the engine-to-publisher ring, a power of two of at least 4096 bytes.
     * @return these settings with that ring.
     */
    public KvEventsSettings ringBytes(final int value)
    {
        return new KvEventsSettings(endpoint, replayEndpoint, topic, eventsAsMaps, dataParallelRank, bufferSteps,
            value, bindsPublisher, extraKeys);
    }

    /**
     * @param value another topic.
     * @return these settings with that topic.
     */
    public KvEventsSettings topic(final String value)
    {
        return new KvEventsSettings(endpoint, replayEndpoint, value, eventsAsMaps, dataParallelRank, bufferSteps,
            ringBytes, bindsPublisher, extraKeys);
    }

    /**
     * @param rank the data-parallel rank to write in every batch.
     * @return these settings with that rank.
     */
    public KvEventsSettings dataParallelRank(final int rank)
    {
        return new KvEventsSettings(endpoint, replayEndpoint, topic, eventsAsMaps, rank, bufferSteps, ringBytes,
            bindsPublisher, extraKeys);
    }

    /**
     * The settings of replica {@code index}: tcp ports offset by the index (as vLLM offsets them by data-parallel
     * rank), inproc and ipc names suffixed {@code _dp<index>}; index 0 is unchanged.
     *
     * @param index replica index.
     * @return the replica's settings.
     */
    public KvEventsSettings forReplica(final int index)
    {
        if (0 == index)
        {
            return this;
        }
        return new KvEventsSettings(offset(endpoint, index), null == replayEndpoint ? null :
            offset(replayEndpoint, index), topic, eventsAsMaps, dataParallelRank, bufferSteps, ringBytes,
            bindsPublisher, extraKeys);
    }

    private static String offset(final String endpoint, final int index)
    {
        final Matcher tcp = TCP_PORT.matcher(endpoint);
        if (tcp.matches())
        {
            final int port = Integer.parseInt(tcp.group(2));
            return 0 == port ? endpoint : tcp.group(1) + (port + index);
        }
        return endpoint.startsWith("tcp://") ? endpoint : endpoint + "_dp" + index;
    }

    /**
     * llm-d's topic convention, {@code kv@<pod>@<model>}, with the pod named {@code host:port} as llm-d's
     * inference simulator does.
     *
     * @param host the pod's address.
     * @param port the serving port.
     * @param model the model name.
     * @return the topic.
     */
    public static String llmdTopic(final String host, final int port, final String model)
    {
        return "kv@" + host + ":" + port + "@" + model;
    }
}
