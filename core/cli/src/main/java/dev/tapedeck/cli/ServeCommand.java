package dev.tapedeck.cli;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.LongToIntFunction;

import picocli.CommandLine;

import dev.tapedeck.build.TapedeckVersion;
import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.http.ConnectionLimits;
import dev.tapedeck.http.ServeOptions;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.latency.Durations;
import dev.tapedeck.lora.LoraAdapter;
import dev.tapedeck.lora.LoraModules;
import dev.tapedeck.lora.LoraSettings;
import dev.tapedeck.net.Transport;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.serve.Serve;
import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.tokens.ChatTemplate;
import dev.tapedeck.tokens.JinjaChatTemplate;
import dev.tapedeck.tokens.PromptTemplate;
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
    public static final String DEFAULT_VLLM_VERSION = ServeContext.DEFAULT_VLLM_VERSION;

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

    @CommandLine.Option(names = "--chat-template", paramLabel = "chatml|llama3|plain|FILE",
        description = "How chat messages are rendered before tokenizing: a built-in template, or the model's own " +
            "Jinja template from FILE (a tokenizer_config.json or a .jinja file, as vLLM's flag). Default: the " +
            "chat_template of the tokenizer_config.json beside --tokenizer, else chatml.")
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

    @CommandLine.Option(names = "--enable-sleep-mode",
        description = "Serve vLLM's sleep routes: POST /sleep?level=0|1|2&mode=abort|wait|keep, POST " +
            "/wake_up?tags=weights|kv_cache, GET /is_sleeping, and expose vllm:engine_sleep_state. A sleeping " +
            "instance queues new requests until it is awake; level 1 and 2 release the KV cache.")
    boolean enableSleepMode;

    @CommandLine.Option(names = "--startup-duration", defaultValue = "0", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "How long the engine takes to become ready: until then the port accepts connections but " +
            "answers nothing (as vLLM's) except GET /health/ready, 503 (llm-d-inference-sim's flag; default: none).")
    long startupDurationNs;

    @CommandLine.Option(names = "--http-keep-alive-timeout", defaultValue = "5s", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "Close a connection idle this long (no request being read or answered), as vLLM's server " +
            "does; 0 = never (default: ${DEFAULT-VALUE}).")
    long keepAliveTimeoutNs;

    @CommandLine.Option(names = "--http-read-timeout", defaultValue = "30s", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "A request's head and body must arrive within this from its first byte, else 408 and the " +
            "connection is closed; 0 = never (default: ${DEFAULT-VALUE}).")
    long readTimeoutNs;

    @CommandLine.Option(names = "--max-connections", paramLabel = "N",
        description = "Open HTTP connections (all instances) beyond which a new one gets 503 and is closed; 0 = no " +
            "cap (default: the process's open-file limit less 256).")
    Integer maxConnections;

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
        description = "LoRA adapters served from the start (they turn --enable-lora on, as llm-d-inference-sim " +
            "does; vLLM wants both): NAME=PATH or JSON " +
            "'{\"name\":..,\"path\":..,\"base_model_name\":..}'; ids 1..K in this order.")
    List<String> loraModules;

    @CommandLine.Option(names = "--max-lora-rank", paramLabel = "R", defaultValue = "16",
        description = "Largest adapter rank (reported only: there are no weights; default: ${DEFAULT-VALUE}).")
    int maxLoraRank;

    @CommandLine.Option(names = "--max-cpu-loras", paramLabel = "N",
        description = "How many LoRA adapters may be registered at once, --lora-modules and runtime loads " +
            "(vLLM's flag, at least --max-loras; default: " + LoraSettings.DEFAULT_MAX_ADAPTERS + "); a load " +
            "beyond it is refused with 400.")
    Integer maxCpuLoras;

    @CommandLine.Mixin
    EngineOptions engine = new EngineOptions();

    @CommandLine.Mixin
    KvEventsOptions kvEvents = new KvEventsOptions();

    @CommandLine.Mixin
    CaptureOptions capture = new CaptureOptions();

    @CommandLine.Mixin
    KvTransferOptions kvTransfer = new KvTransferOptions();

    @CommandLine.Mixin
    FaultOptions faults = new FaultOptions();

    @CommandLine.Mixin
    CompatOptions compat = new CompatOptions();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    static boolean isServing()
    {
        return serving;
    }

    /**
     * The settings the flags describe (also used by {@code demo}, which adjusts them before it starts the fleet).
     *
     * @return a context for {@link Serve#start(ServeContext)}.
     * @throws IllegalArgumentException if a flag's value is invalid.
     */
    ServeContext context()
    {
        final String modelName = null != model ? model : null != positionalModel ? positionalModel :
            engine.latency.defaultModel(ServeContext.DEFAULT_MODEL);
        final List<String> names = null == servedModelNames || servedModelNames.isEmpty() ? List.of(modelName) :
            servedModelNames;
        engine.capacityModel(modelName);
        kvTransfer.offloadInto(engine.offload);
        fromModelDirectory(modelName);
        return new ServeContext()
            .host(host)
            .port(port)
            .instances(instances)
            .dataParallelSize(dataParallelSize)
            .model(modelName)
            .servedModelNames(names)
            .mode(mode)
            .chatTemplate(promptTemplate())
            .maxRequestBodyBytes(compat.maxRequestBodyBytes(maxRequestBodyBytes))
            .dataParallelRank(null == compat.dataParallelRank ? -1 : compat.dataParallelRank)
            .api(compat.api())
            .tls(compat.tls())
            .shutdownTimeoutNs(shutdownTimeoutNs)
            .enableSleepMode(enableSleepMode)
            .startupDurationNs(startupDurationNs)
            .connectionLimits(new ConnectionLimits(keepAliveTimeoutNs, readTimeoutNs,
                null == maxConnections ? ConnectionLimits.defaultMaxConnections() : maxConnections))
            .enablePromptTokensDetails(enablePromptTokensDetails)
            .vllmVersion(vllmVersion)
            .apiKey(apiKey)
            .socketSendBufferBytes(socketSendBufferBytes)
            .transport(Transport.select(transport))
            .lora(loraSettings(names))
            .engine(engine.template())
            .tokenizerFile(engine.tokenizerFile)
            .kvEvents(kvEvents.enabled ? kvEvents.settings(VllmLine.of(vllmVersion), "", 0) : null)
            .llmdKvEventsTopic(!kvEvents.hasTopic())
            .kvTransfer(kvTransfer.settings(modelName, engine.kvBytesPerToken))
            .capture(capture.settings().fingerprint(vllmVersion, engineConfigFingerprint(modelName)))
            .faults(faults.settings());
    }

    private LoraSettings loraSettings(final List<String> names)
    {
        // llm-d-inference-sim serves --lora-modules without --enable-lora (vLLM wants both): its deployments start
        final boolean enabled = enableLora || null != loraModules;
        final List<LoraAdapter> modules = null == loraModules ? List.of() : LoraModules.parse(loraModules, names);
        if (null != maxCpuLoras && maxCpuLoras < engine.maxLoras)
        {
            throw new IllegalArgumentException("max_cpu_loras (" + maxCpuLoras + ") must be greater than or equal " +
                "to max_loras (" + engine.maxLoras + ")");
        }
        return new LoraSettings(enabled, modules, maxLoraRank, null == maxCpuLoras ? 0 : maxCpuLoras);
    }

    /**
     * A model that is a local directory, as vLLM takes {@code --model /models/Qwen3-8B}: what it holds and the flags do
     * not give sets one consistent model: its {@code tokenizer.json} (and so the chat template of its
     * {@code tokenizer_config.json}) and its {@code config.json} (the dimensions of the physics step model and the KV
     * geometry on the GPU).
     */
    private void fromModelDirectory(final String modelName)
    {
        final Path directory;
        try
        {
            directory = Path.of(modelName);
        }
        catch (final java.nio.file.InvalidPathException ex)
        {
            return;
        }
        if (!java.nio.file.Files.isDirectory(directory))
        {
            return;
        }
        if (null == engine.tokenizerFile && java.nio.file.Files.isRegularFile(directory.resolve("tokenizer.json")))
        {
            engine.tokenizerFile = directory.resolve("tokenizer.json");
        }
        final Path config = directory.resolve("config.json");
        if (null == engine.latency.modelConfig && null == engine.latency.stepProfile &&
            java.nio.file.Files.isRegularFile(config))
        {
            try
            {
                dev.tapedeck.latency.ModelArchitecture.read(config);
                engine.latency.modelConfig = config;
            }
            catch (final java.io.IOException | IllegalArgumentException ex)
            {
                // not a decoder vLLM's dimensions read (GPT-2's names, say): the directory gives its tokenizer only
                LOG.log(System.Logger.Level.INFO, "{0}: not read as model dimensions ({1})", config,
                    ex.getMessage());
            }
        }
    }

    /**
     * @return the canonical engine configuration a capture records: the model, the engine flags that act, and the
     *     vLLM flags accepted without effect, as vLLM's names for them.
     */
    private String engineConfigFingerprint(final String modelName)
    {
        final java.util.Map<String, Object> settings = new java.util.TreeMap<>();
        final dev.tapedeck.engine.EngineConfig config = engine.template();
        settings.put("model", modelName);
        settings.put("max_num_seqs", config.maxNumSeqs());
        settings.put("max_num_batched_tokens", config.maxNumBatchedTokens());
        settings.put("max_model_len", config.maxModelLen());
        settings.put("block_size", config.blockSize());
        settings.put("enable_prefix_caching", config.enablePrefixCaching());
        settings.putAll(null == spec ? java.util.Map.of() : CompatOptions.noEffectSettings(spec.commandLine()
            .getParseResult()));
        return dev.tapedeck.trace.ConfigFingerprint.engineConfig(settings);
    }

    /**
     * @return the template {@code --chat-template} names, or the one beside {@code --tokenizer}, or ChatML.
     */
    private PromptTemplate promptTemplate()
    {
        try
        {
            if (null == chatTemplate)
            {
                final PromptTemplate beside = null == engine.tokenizerFile ? null :
                    JinjaChatTemplate.besideTokenizer(engine.tokenizerFile);
                return null == beside ? ChatTemplate.CHATML : beside;
            }
            if (List.of("chatml", "llama3", "plain").contains(chatTemplate.toLowerCase(java.util.Locale.ROOT)))
            {
                return ChatTemplate.of(chatTemplate);
            }
            final Path file = Path.of(chatTemplate);
            if (!java.nio.file.Files.isRegularFile(file))
            {
                throw new IllegalArgumentException("--chat-template " + chatTemplate + ": neither chatml, llama3, " +
                    "plain nor a file");
            }
            return JinjaChatTemplate.read(file);
        }
        catch (final java.io.IOException ex)
        {
            throw new IllegalArgumentException("--chat-template: cannot read " + ex.getMessage(), ex);
        }
    }

    @Override
    public Integer call() throws Exception
    {
        final long startNs = System.nanoTime();
        final List<String> noEffect = CompatOptions.noEffect(spec.commandLine().getParseResult());
        final Serve started = Serve.start(context());
        if (!noEffect.isEmpty())
        {
            LOG.log(System.Logger.Level.INFO, "accepted, with no effect in a simulator: {0}",
                String.join(", ", noEffect));
        }
        final ServeContext context = started.context();
        final ServeOptions options = context.serveOptions();
        final Tokenizer tokenizer = started.tokenizer();
        final TraceRecorder recorder = started.traceRecorder();
        final EngineConfig first = started.engineConfigs().get(0);
        onSignal("in-flight", context.shutdownTimeoutNs(), started::shutdown, recorder, context.capture().traceOut());
        StartupHeap.release();
        LOG.log(System.Logger.Level.INFO, "tapedeck {0} serving {1} on {2} (tokenizer: {3}; chat template: {10}; " +
            "{4}; {5}; {6} engine(s) per port, KV cache {7} blocks of {8} tokens each, max model len {11}) ready in " +
            "{9} ms",
            TapedeckVersion.version(), options.modelNameForResponses(), urls(started.baseUrls()), tokenizer.name(),
            first.latencyModel().describe(), options.transport().cliName(), context.dataParallelSize(),
            first.kvCacheBlocks(), first.blockSize(), (System.nanoTime() - startNs) / 1_000_000,
            options.chatTemplate().displayName(), first.maxModelLen());
        if (options.lora().enabled())
        {
            LOG.log(System.Logger.Level.INFO, "LoRA: adapters {0}, max-loras {1}, max-lora-rank {2}",
                options.lora().modules(), first.maxLoras(), options.lora().maxLoraRank());
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

    /**
     * Mark a long-running command as started (main must not exit when it returns) and, on SIGTERM/SIGINT, let its
     * requests finish for up to the timeout, then say what was aborted and what the trace holds.
     *
     * @param requests how the requests are called in the message ("in-flight", "running").
     * @param shutdownTimeoutNs how long they may finish.
     * @param shutdown the product's shutdown, returning the requests it aborted.
     * @param recorder the self-capture recorder, or null.
     * @param traceOut the trace file, or null.
     */
    static void onSignal(final String requests, final long shutdownTimeoutNs, final LongToIntFunction shutdown,
        final TraceRecorder recorder, final Path traceOut)
    {
        serving = true;
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            // JUL resets its handlers in its own shutdown hook, so shutdown messages go straight to stderr
            System.err.println("tapedeck: shutting down: " + requests + " requests may finish for up to " +
                Durations.format(shutdownTimeoutNs));
            final int aborted = shutdown.applyAsInt(shutdownTimeoutNs);
            if (aborted > 0)
            {
                System.err.println("tapedeck: shutdown aborted " + aborted + " request(s) still in flight");
            }
            if (null != recorder)
            {
                System.err.println("tapedeck: trace " + traceOut + ": " + recorder.writtenRecords() + " records");
            }
        }, "tapedeck-shutdown"));
    }

    private static String urls(final List<URI> baseUrls)
    {
        final StringBuilder out = new StringBuilder();
        for (final URI url : baseUrls)
        {
            out.append(out.length() > 0 ? ", " : "").append(url);
        }
        return out.toString();
    }
}
