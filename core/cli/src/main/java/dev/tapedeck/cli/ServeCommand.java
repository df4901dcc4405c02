package dev.tapedeck.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.http.HttpServer;
import dev.tapedeck.http.ServeOptions;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.kvevents.KvEventStager;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.lora.LoraAdapter;
import dev.tapedeck.lora.LoraModules;
import dev.tapedeck.lora.LoraSettings;
import dev.tapedeck.net.Transport;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.tokens.ChatTemplate;
import dev.tapedeck.tokens.Tokenizer;

/**
 * {@code tapedeck serve}: an OpenAI-compatible vLLM server whose timing comes from a latency model.
 */
@CommandLine.Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Serve an OpenAI-compatible vLLM API (chat, completions, models, health, version, metrics) from a simulated " +
            "engine: vLLM V1 scheduling, a realistic latency model, no GPU.",
        "Example: tapedeck serve --model Qwen/Qwen3-8B --port 8000"})
public final class ServeCommand implements Callable<Integer>
{
    /** vLLM version reported by /version unless --vllm-version says otherwise. */
    public static final String DEFAULT_VLLM_VERSION = "0.19.0";

    private static final System.Logger LOG = System.getLogger(ServeCommand.class.getName());
    private static volatile boolean serving;

    @CommandLine.Parameters(index = "0", arity = "0..1", paramLabel = "MODEL",
        description = "Model name, as `vllm serve MODEL` (same as --model).")
    String positionalModel;

    @CommandLine.Option(names = "--model", paramLabel = "NAME", description = "Model name or path " +
        "(default: Qwen/Qwen3-8B).")
    String model;

    @CommandLine.Option(names = "--served-model-name", arity = "1..*", paramLabel = "NAME",
        description = "Names clients may use; the first is reported (default: the model name).")
    List<String> servedModelNames;

    @CommandLine.Option(names = "--host", defaultValue = "127.0.0.1",
        description = "Address to bind (default: ${DEFAULT-VALUE}; use 0.0.0.0 to accept remote clients).")
    String host;

    @CommandLine.Option(names = "--port", defaultValue = "8000",
        description = "Port of the first instance; instance i uses port + i (default: ${DEFAULT-VALUE}; 0 = free " +
            "ports, printed at start).")
    int port;

    @CommandLine.Option(names = "--instances", defaultValue = "1", paramLabel = "N",
        description = "Independent replicas (own engine, metrics, seed) on consecutive ports (default: " +
            "${DEFAULT-VALUE}).")
    int instances;

    @CommandLine.Option(names = {"--data-parallel-size", "-dp"}, defaultValue = "1", paramLabel = "N",
        description = "Engines behind each instance's port, as vLLM's data-parallel ranks: a request goes to the " +
            "rank its X-data-parallel-rank header names, else to the least loaded; each rank has its own KV cache, " +
            "metrics (label engine=rank) and KV event endpoint (port + rank) (default: ${DEFAULT-VALUE}).")
    int dataParallelSize;

    @CommandLine.Option(names = "--mode", defaultValue = "random", paramLabel = "random|echo",
        description = "Output tokens: random text-like tokens, or echo of the prompt (default: ${DEFAULT-VALUE}).")
    ServeOptions.Mode mode;

    @CommandLine.Option(names = "--chat-template", defaultValue = "chatml", paramLabel = "chatml|llama3|plain",
        description = "How chat messages are rendered before tokenizing (default: ${DEFAULT-VALUE}).")
    String chatTemplate;

    @CommandLine.Option(names = "--max-request-body-size", defaultValue = "4m", paramLabel = "SIZE",
        converter = Converters.ByteSize.class,
        description = "Largest request body; larger gets 413 (default: ${DEFAULT-VALUE}).")
    int maxRequestBodyBytes;

    @CommandLine.Option(names = "--shutdown-timeout", defaultValue = "10s", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "On SIGTERM/SIGINT, how long in-flight requests may finish before they are aborted " +
            "(default: ${DEFAULT-VALUE}).")
    long shutdownTimeoutNs;

    @CommandLine.Option(names = "--enable-prompt-tokens-details",
        description = "Report usage.prompt_tokens_details.cached_tokens (as vLLM's flag).")
    boolean enablePromptTokensDetails;

    @CommandLine.Option(names = "--vllm-version", defaultValue = DEFAULT_VLLM_VERSION, paramLabel = "VERSION",
        description = "Version GET /version reports (default: ${DEFAULT-VALUE}).")
    String vllmVersion;

    @CommandLine.Option(names = "--api-key", paramLabel = "KEY",
        description = "Require 'Authorization: Bearer KEY' on /v1 endpoints.")
    String apiKey;

    @CommandLine.Option(names = "--socket-send-buffer", defaultValue = "0", paramLabel = "SIZE",
        converter = Converters.ByteSize.class,
        description = "SO_SNDBUF of client connections; 0 = the OS default. Small values make slow readers " +
            "back-pressure sooner and save kernel memory with many thousands of streams.")
    int socketSendBufferBytes;

    @CommandLine.Option(names = "--transport", defaultValue = "auto", paramLabel = "auto|io_uring|epoll|nio",
        description = "Netty I/O transport; auto picks epoll, then NIO (default: ${DEFAULT-VALUE}).")
    String transport;

    @CommandLine.Option(names = "--enable-lora",
        description = "Serve LoRA adapters: requests whose model is an adapter's name run with it (as vLLM's flag).")
    boolean enableLora;

    @CommandLine.Option(names = "--lora-modules", arity = "1..*", paramLabel = "NAME=PATH",
        description = "LoRA adapters served from the start (needs --enable-lora): NAME=PATH or JSON " +
            "'{\"name\":..,\"path\":..,\"base_model_name\":..}'; ids 1..K in this order.")
    List<String> loraModules;

    @CommandLine.Option(names = "--max-lora-rank", paramLabel = "R", defaultValue = "16",
        description = "Largest adapter rank (reported only: there are no weights; default: ${DEFAULT-VALUE}).")
    int maxLoraRank;

    @CommandLine.Mixin
    EngineOptions engine = new EngineOptions();

    @CommandLine.Mixin
    KvEventsOptions kvEvents = new KvEventsOptions();

    @CommandLine.Mixin
    CaptureOptions capture = new CaptureOptions();

    static boolean isServing()
    {
        return serving;
    }

    /**
     * A long-running command started: main must not exit when the command returns.
     */
    static void markServing()
    {
        serving = true;
    }

    /** A server started in this process, with what must be closed with it. */
    record Started(HttpServer server, Tokenizer tokenizer, TraceRecorder recorder, ServeOptions options,
        List<EngineConfig> configs, List<KvEventPublisher> kvEventPublishers)
    {
        /**
         * Shut the server down, then stop the KV event publishers (so the last steps' events go out), close the trace
         * and the tokenizer.
         *
         * @param drainTimeoutNs how long in-flight requests may finish before they are aborted.
         * @return requests aborted.
         */
        int close(final long drainTimeoutNs)
        {
            final int aborted = server.shutdown(drainTimeoutNs);
            kvEventPublishers.forEach(KvEventPublisher::close);
            if (null != recorder)
            {
                recorder.close();
            }
            tokenizer.close();
            return aborted;
        }
    }

    /**
     * Start the server as configured by the flags (also used in-process by {@code demo}).
     *
     * @return the running server.
     * @throws Exception if it cannot start.
     */
    Started start() throws Exception
    {
        final String modelName = null != model ? model : null != positionalModel ? positionalModel : "Qwen/Qwen3-8B";
        final List<String> names = null == servedModelNames || servedModelNames.isEmpty() ? List.of(modelName) :
            servedModelNames;
        final ServeOptions options = new ServeOptions(host, port, instances, modelName, names,
            mode, ChatTemplate.of(chatTemplate), maxRequestBodyBytes, shutdownTimeoutNs, enablePromptTokensDetails,
            vllmVersion, apiKey, socketSendBufferBytes, Transport.select(transport), loraSettings(names));
        final KvEventsSettings kvSettings = kvEvents.enabled ?
            kvEvents.settings(VllmLine.of(vllmVersion), "", 0) : null;
        if (dataParallelSize < 1 || dataParallelSize > 1024)
        {
            throw new IllegalArgumentException("--data-parallel-size must be between 1 and 1024, got " +
                dataParallelSize);
        }
        engine.capacityModel(modelName);
        final Tokenizer tokenizer = engine.loadTokenizer();
        // engine e = instance * dataParallelSize + rank: its seed offset and its KV event endpoint offset
        final List<EngineConfig> configs = new ArrayList<>(instances * dataParallelSize);
        final List<List<EngineConfig>> rankConfigs = new ArrayList<>(instances);
        final List<KvEventStager> stagers = new ArrayList<>();
        for (int i = 0; i < instances; i++)
        {
            final List<EngineConfig> ranks = new ArrayList<>(dataParallelSize);
            for (int r = 0; r < dataParallelSize; r++)
            {
                final EngineConfig config = engine.build(i * dataParallelSize + r, tokenizer);
                if (null != kvSettings)
                {
                    final KvEventStager stager = new KvEventStager(kvSettings.ringBytes());
                    config.kvEventSink(stager);
                    stagers.add(stager);
                }
                ranks.add(config);
                configs.add(config);
            }
            rankConfigs.add(ranks);
        }
        final TraceRecorder recorder = capture.start("tapedeck-serve", modelName, configs, System.nanoTime());
        HttpServer server = null;
        final List<KvEventPublisher> publishers = new ArrayList<>();
        try
        {
            server = HttpServer.startRanks(options, rankConfigs, tokenizer);
            final List<Integer> ports = server.ports();
            for (int e = 0; e < stagers.size(); e++)
            {
                final int instance = e / dataParallelSize;
                final int rank = e % dataParallelSize;
                // the topic names the instance's HTTP port, known only once bound; every rank of an instance shares
                // it, as vLLM's ranks share one --kv-events-config, and writes its rank in each batch
                final String topic = kvEvents.hasTopic() ?
                    kvSettings.topic().replace("{rank}", Integer.toString(rank)) :
                    KvEventsSettings.llmdTopic(KvEventsOptions.podAddress(host), ports.get(instance), modelName);
                final KvEventsSettings replica = kvSettings.forReplica(e).dataParallelRank(rank).topic(topic);
                publishers.add(new KvEventPublisher(replica, stagers.get(e)).start());
            }
            return new Started(server, tokenizer, recorder, options, configs, publishers);
        }
        catch (final Exception ex)
        {
            publishers.forEach(KvEventPublisher::close);
            if (null != server)
            {
                server.shutdown(0);
            }
            if (null != recorder)
            {
                recorder.close();
            }
            throw ex;
        }
    }

    private LoraSettings loraSettings(final List<String> names)
    {
        if (null != loraModules && !enableLora)
        {
            throw new IllegalArgumentException("--lora-modules needs --enable-lora");
        }
        final List<LoraAdapter> modules = null == loraModules ? List.of() : LoraModules.parse(loraModules, names);
        return new LoraSettings(enableLora, modules, maxLoraRank);
    }

    @Override
    public Integer call() throws Exception
    {
        final long startNs = System.nanoTime();
        final Started started = start();
        final HttpServer server = started.server();
        final Tokenizer tokenizer = started.tokenizer();
        final TraceRecorder recorder = started.recorder();
        final ServeOptions options = started.options();
        final List<EngineConfig> configs = started.configs();
        serving = true;
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            // JUL resets its handlers in its own shutdown hook, so shutdown messages go straight to stderr
            System.err.println("tapedeck: shutting down: in-flight requests may finish for up to " +
                dev.tapedeck.latency.Durations.format(shutdownTimeoutNs));
            final int aborted = started.close(shutdownTimeoutNs);
            if (aborted > 0)
            {
                System.err.println("tapedeck: shutdown aborted " + aborted + " request(s) still in flight");
            }
            if (null != recorder)
            {
                System.err.println("tapedeck: trace " + capture.traceOut + ": " + recorder.writtenRecords() +
                    " records");
            }
        }, "tapedeck-shutdown"));
        final List<Integer> ports = server.ports();
        LOG.log(System.Logger.Level.INFO, "tapedeck {0} serving {1} on {2} (tokenizer: {3}; {4}; {5}; " +
            "{6} engine(s) per port, KV cache {7} blocks of {8} tokens each) ready in {9} ms",
            VersionProvider.version(), options.modelNameForResponses(), urls(host, ports), tokenizer.name(),
            configs.get(0).latencyModel().describe(), options.transport().cliName(), dataParallelSize,
            configs.get(0).kvCacheBlocks(), configs.get(0).blockSize(), (System.nanoTime() - startNs) / 1_000_000);
        if (options.lora().enabled())
        {
            LOG.log(System.Logger.Level.INFO, "LoRA: adapters {0}, max-loras {1}, max-lora-rank {2}",
                options.lora().modules(), configs.get(0).maxLoras(), options.lora().maxLoraRank());
        }
        for (final KvEventPublisher publisher : started.kvEventPublishers())
        {
            LOG.log(System.Logger.Level.INFO, "KV events on {0} (topic {1}, data-parallel rank {2}, {3}){4}",
                publisher.endpoint(), publisher.settings().topic(), publisher.settings().dataParallelRank(),
                publisher.settings().eventsAsMaps() ? "map events" : "array events",
                null == publisher.replayEndpoint() ? "" : ", replay on " + publisher.replayEndpoint());
        }
        return 0;
    }

    private static String urls(final String host, final List<Integer> ports)
    {
        final StringBuilder out = new StringBuilder();
        for (final int p : ports)
        {
            out.append(out.length() > 0 ? ", " : "").append("http://").append(host).append(':').append(p);
        }
        return out.toString();
    }
}
