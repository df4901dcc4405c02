package dev.tapedeck.serve;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;

import dev.tapedeck.capture.CaptureSettings;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.http.ServeOptions;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.lora.LoraSettings;
import dev.tapedeck.net.Transport;
import dev.tapedeck.tokens.ChatTemplate;
import dev.tapedeck.tokens.PromptTemplate;
import dev.tapedeck.tokens.Tokenizer;

/**
 * Everything {@link Serve#start(ServeContext)} needs, in the Aeron style: fluent setters, getters of the same name,
 * and {@link #conclude()}, which checks every value and fills the defaults. Each default is named on its setter; they
 * are those of {@code tapedeck serve}, except the port: 0 (free ports, for embedding) where the CLI uses 8000.
 * <p>
 * Not thread safe: fill it on one thread, then hand it to {@code start}, after which it must not change.
 */
public final class ServeContext
{
    /** The model served unless {@link #model(String)} says otherwise. */
    public static final String DEFAULT_MODEL = "Qwen/Qwen3-8B";
    /** The vLLM version {@code /version} reports unless {@link #vllmVersion(String)} says otherwise. */
    public static final String DEFAULT_VLLM_VERSION = "0.19.0";
    /** Largest request body by default: 4 MiB. */
    public static final int DEFAULT_MAX_REQUEST_BODY_BYTES = 4 << 20;
    /** How long in-flight requests may finish on SIGTERM by default: 10 s. */
    public static final long DEFAULT_SHUTDOWN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    /** Most data-parallel ranks per instance. */
    public static final int MAX_DATA_PARALLEL_SIZE = 1024;

    private String host = "127.0.0.1";
    private int port;
    private int instances = 1;
    private int dataParallelSize = 1;
    private String model = DEFAULT_MODEL;
    private List<String> servedModelNames;
    private ServeOptions.Mode mode = ServeOptions.Mode.RANDOM;
    private PromptTemplate chatTemplate = ChatTemplate.CHATML;
    private int maxRequestBodyBytes = DEFAULT_MAX_REQUEST_BODY_BYTES;
    private long shutdownTimeoutNs = DEFAULT_SHUTDOWN_TIMEOUT_NS;
    private boolean enablePromptTokensDetails;
    private String vllmVersion = DEFAULT_VLLM_VERSION;
    private String apiKey;
    private int socketSendBufferBytes;
    private Transport transport;
    private LoraSettings lora = LoraSettings.DISABLED;
    private dev.tapedeck.http.ConnectionLimits connectionLimits = dev.tapedeck.http.ConnectionLimits.defaults();
    private dev.tapedeck.fault.FaultSettings faults = dev.tapedeck.fault.FaultSettings.NONE;
    private boolean enableSleepMode;
    private int dataParallelRank = -1;
    private dev.tapedeck.http.ApiSurface api;
    private dev.tapedeck.http.TlsSettings tls = dev.tapedeck.http.TlsSettings.NONE;
    private long startupDurationNs;
    private EngineConfig engine = new EngineConfig();
    private Tokenizer tokenizer;
    private Path tokenizerFile;
    private KvEventsSettings kvEvents;
    private dev.tapedeck.kvtransfer.KvTransferSettings kvTransfer;
    private boolean llmdKvEventsTopic = true;
    private CaptureSettings capture = CaptureSettings.OFF;
    private NanoClock nanoClock = SystemNanoClock.INSTANCE;
    private EpochNanoClock epochClock = SystemEpochNanoClock.INSTANCE;
    private ServeOptions serveOptions;

    /**
     * Check every value and fill the defaults. Called by {@link Serve#start}; calling it again does nothing new.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first invalid setting, in the words of its CLI flag.
     */
    public ServeContext conclude()
    {
        if (dataParallelSize < 1 || dataParallelSize > MAX_DATA_PARALLEL_SIZE)
        {
            throw new IllegalArgumentException("--data-parallel-size must be between 1 and " +
                MAX_DATA_PARALLEL_SIZE + ", got " + dataParallelSize);
        }
        if (null == model || model.isBlank())
        {
            throw new IllegalArgumentException("a model name is required");
        }
        if (dataParallelRank >= 0 && (instances > 1 || dataParallelSize > 1 && dataParallelRank >= dataParallelSize))
        {
            throw new IllegalArgumentException("--data-parallel-rank " + dataParallelRank + " is one rank of " +
                "--data-parallel-size " + dataParallelSize + " per process, and one instance");
        }
        if (dataParallelRank < -1 || dataParallelRank >= 1024)
        {
            throw new IllegalArgumentException("--data-parallel-rank must be 0 to 1023, got " + dataParallelRank);
        }
        if (null != tokenizer && null != tokenizerFile)
        {
            throw new IllegalArgumentException("give a tokenizer or a tokenizer file, not both");
        }
        if (null == engine || null == capture || null == nanoClock || null == epochClock || null == lora ||
            null == mode || null == chatTemplate)
        {
            throw new IllegalArgumentException("engine, capture, nanoClock, epochClock, lora, mode and chatTemplate " +
                "must not be null");
        }
        if (null != engine.kvEventSink() && (null != kvEvents || instances * dataParallelSize > 1))
        {
            throw new IllegalArgumentException("an engine template's KV event sink serves one engine only; with " +
                "several engines, or with kvEvents settings, leave it unset");
        }
        if (null != kvTransfer && null != engine.kvConnector())
        {
            throw new IllegalArgumentException("give kvTransfer settings or an engine template's KV connector, " +
                "not both");
        }
        if (null != kvTransfer && null != engine.kvOffload())
        {
            throw new IllegalArgumentException("one KV connector per engine: the CPU offloading tier and " +
                "prefill/decode disaggregation (vLLM's MultiConnector) are not modelled together");
        }
        if (shutdownTimeoutNs < 0)
        {
            throw new IllegalArgumentException("--shutdown-timeout must not be negative");
        }
        final List<String> names = null == servedModelNames || servedModelNames.isEmpty() ? List.of(model) :
            servedModelNames;
        serveOptions = new ServeOptions(host, port, instances, model, names, mode, chatTemplate, maxRequestBodyBytes,
            shutdownTimeoutNs, enablePromptTokensDetails, vllmVersion, apiKey, socketSendBufferBytes,
            null == transport ? Transport.select("auto") : transport, lora, nanoClock, epochClock, connectionLimits,
            faults, enableSleepMode, startupDurationNs, dataParallelRank, tls, env("POD_NAME"),
            env("POD_NAMESPACE"), api);
        servedModelNames = serveOptions.servedModelNames();
        transport = serveOptions.transport();
        return this;
    }

    /**
     * @return the HTTP face's settings, as concluded.
     * @throws IllegalStateException before {@link #conclude()}.
     */
    public ServeOptions serveOptions()
    {
        if (null == serveOptions)
        {
            throw new IllegalStateException("conclude() the context first");
        }
        return serveOptions;
    }

    /**
     * @param value address to bind (default 127.0.0.1; 0.0.0.0 accepts remote clients).
     * @return this.
     */
    public ServeContext host(final String value)
    {
        host = value;
        return this;
    }

    /**
     * @return address to bind.
     */
    public String host()
    {
        return host;
    }

    /**
     * @param value port of the first instance; instance i uses port + i (default 0: free ports).
     * @return this.
     */
    public ServeContext port(final int value)
    {
        port = value;
        return this;
    }

    /**
     * @return port of the first instance, 0 for free ports.
     */
    public int port()
    {
        return port;
    }

    /**
     * @param value independent replicas, each with its own port, engines, metrics and seeds (default 1).
     * @return this.
     */
    public ServeContext instances(final int value)
    {
        instances = value;
        return this;
    }

    /**
     * @return independent replicas.
     */
    public int instances()
    {
        return instances;
    }

    /**
     * @param value engines behind each instance's port, as vLLM's data-parallel ranks (default 1).
     * @return this.
     */
    public ServeContext dataParallelSize(final int value)
    {
        dataParallelSize = value;
        return this;
    }

    /**
     * @return engines behind each instance's port.
     */
    public int dataParallelSize()
    {
        return dataParallelSize;
    }

    /**
     * @param value the model name or path, {@code root} in /v1/models (default {@value #DEFAULT_MODEL}).
     * @return this.
     */
    public ServeContext model(final String value)
    {
        model = value;
        return this;
    }

    /**
     * @return the model name.
     */
    public String model()
    {
        return model;
    }

    /**
     * @param value names clients may use; the first is reported (default: the model name).
     * @return this.
     */
    public ServeContext servedModelNames(final List<String> value)
    {
        servedModelNames = value;
        return this;
    }

    /**
     * @return names clients may use, after {@link #conclude()}.
     */
    public List<String> servedModelNames()
    {
        return servedModelNames;
    }

    /**
     * @param value random text-like output tokens, or an echo of the prompt (default random).
     * @return this.
     */
    public ServeContext mode(final ServeOptions.Mode value)
    {
        mode = value;
        return this;
    }

    /**
     * @return where output tokens come from.
     */
    public ServeOptions.Mode mode()
    {
        return mode;
    }

    /**
     * @param value how chat messages become prompt text (default chatml).
     * @return this.
     */
    public ServeContext chatTemplate(final PromptTemplate value)
    {
        chatTemplate = value;
        return this;
    }

    /**
     * @return how chat messages become prompt text.
     */
    public PromptTemplate chatTemplate()
    {
        return chatTemplate;
    }

    /**
     * @param value largest accepted request body; larger gets 413 (default 4 MiB, at least 1 KiB).
     * @return this.
     */
    public ServeContext maxRequestBodyBytes(final int value)
    {
        maxRequestBodyBytes = value;
        return this;
    }

    /**
     * @return largest accepted request body.
     */
    public int maxRequestBodyBytes()
    {
        return maxRequestBodyBytes;
    }

    /**
     * @param value how long in-flight requests may finish on SIGTERM before they are aborted (default 10 s).
     * @return this.
     */
    public ServeContext shutdownTimeoutNs(final long value)
    {
        shutdownTimeoutNs = value;
        return this;
    }

    /**
     * @return how long in-flight requests may finish on SIGTERM.
     */
    public long shutdownTimeoutNs()
    {
        return shutdownTimeoutNs;
    }

    /**
     * @param value report {@code usage.prompt_tokens_details.cached_tokens}, as vLLM's flag (default off).
     * @return this.
     */
    public ServeContext enablePromptTokensDetails(final boolean value)
    {
        enablePromptTokensDetails = value;
        return this;
    }

    /**
     * @return whether usage reports cached prompt tokens.
     */
    public boolean enablePromptTokensDetails()
    {
        return enablePromptTokensDetails;
    }

    /**
     * @param value the version {@code /version} reports and whose wire details are emulated (default
     *     {@value #DEFAULT_VLLM_VERSION}).
     * @return this.
     */
    public ServeContext vllmVersion(final String value)
    {
        vllmVersion = value;
        return this;
    }

    /**
     * @return the emulated vLLM version.
     */
    public String vllmVersion()
    {
        return vllmVersion;
    }

    /**
     * @param value when set, {@code /v1} requests need {@code Authorization: Bearer <key>} (default none).
     * @return this.
     */
    public ServeContext apiKey(final String value)
    {
        apiKey = value;
        return this;
    }

    /**
     * @return the API key, or null.
     */
    public String apiKey()
    {
        return apiKey;
    }

    /**
     * @param value SO_SNDBUF of accepted connections, 0 for the OS default (default 0).
     * @return this.
     */
    public ServeContext socketSendBufferBytes(final int value)
    {
        socketSendBufferBytes = value;
        return this;
    }

    /**
     * @return SO_SNDBUF of accepted connections.
     */
    public int socketSendBufferBytes()
    {
        return socketSendBufferBytes;
    }

    /**
     * @param value the Netty I/O transport (default: epoll where available, else NIO).
     * @return this.
     */
    public ServeContext transport(final Transport value)
    {
        transport = value;
        return this;
    }

    /**
     * @return the Netty I/O transport, after {@link #conclude()}.
     */
    public Transport transport()
    {
        return transport;
    }

    /**
     * @param value idle and read timeouts of HTTP connections and the connection cap (default
     *     {@link dev.tapedeck.http.ConnectionLimits#defaults()}: vLLM's 5 s keep-alive, 30 s to read a request, a cap
     *     below the process's file-descriptor limit; {@link dev.tapedeck.http.ConnectionLimits#NONE} for none).
     * @return this.
     */
    public ServeContext connectionLimits(final dev.tapedeck.http.ConnectionLimits value)
    {
        connectionLimits = java.util.Objects.requireNonNull(value, "connectionLimits");
        return this;
    }

    /**
     * @return the connection limits.
     */
    public dev.tapedeck.http.ConnectionLimits connectionLimits()
    {
        return connectionLimits;
    }

    /**
     * @param value fault injection: at a rate, through request headers, on a timeline (default none).
     * @return this.
     */
    public ServeContext faults(final dev.tapedeck.fault.FaultSettings value)
    {
        faults = java.util.Objects.requireNonNull(value, "faults");
        return this;
    }

    /**
     * @param value vLLM's {@code --enable-sleep-mode}: serve {@code /sleep}, {@code /wake_up}, {@code /is_sleeping}.
     * @return this.
     */
    public ServeContext enableSleepMode(final boolean value)
    {
        enableSleepMode = value;
        return this;
    }

    /**
     * @param value {@code --startup-duration}: nothing but {@code /health/ready} (503) is answered before (default 0).
     * @return this.
     */
    public ServeContext startupDurationNs(final long value)
    {
        startupDurationNs = value;
        return this;
    }

    /**
     * @param value {@code --data-parallel-rank}: this process is rank N of a fleet with one rank per pod (llm-d's
     *     layout; metrics and KV events say so); -1 for none (default). Needs one rank and one instance.
     * @return this.
     */
    public ServeContext dataParallelRank(final int value)
    {
        dataParallelRank = value;
        return this;
    }

    /**
     * @return the data-parallel rank of this process, or -1.
     */
    public int dataParallelRank()
    {
        return dataParallelRank;
    }

    /**
     * @param value HTTPS: a PEM certificate and key, or a self-signed certificate (default plain HTTP).
     * @return this.
     */
    public ServeContext tls(final dev.tapedeck.http.TlsSettings value)
    {
        tls = value;
        return this;
    }

    /**
     * @param value response headers, embedding sizes, tool calls and log-probabilities (default
     *     {@link dev.tapedeck.http.ApiSurface#DEFAULT}).
     * @return this.
     */
    public ServeContext api(final dev.tapedeck.http.ApiSurface value)
    {
        api = value;
        return this;
    }

    /**
     * @return the fault injection settings.
     */
    public dev.tapedeck.fault.FaultSettings faults()
    {
        return faults;
    }

    /**
     * @param value LoRA adapters (default none).
     * @return this.
     */
    public ServeContext lora(final LoraSettings value)
    {
        lora = value;
        return this;
    }

    /**
     * @return LoRA adapters.
     */
    public LoraSettings lora()
    {
        return lora;
    }

    /**
     * @param value the template every engine's configuration is copied from; engine e gets seed + e and the
     *     tokenizer's token space (default: {@code new EngineConfig()}, vLLM's defaults and the default step model).
     * @return this.
     */
    public ServeContext engine(final EngineConfig value)
    {
        engine = value;
        return this;
    }

    /**
     * @return the engines' template configuration.
     */
    public EngineConfig engine()
    {
        return engine;
    }

    /**
     * @param value a tokenizer the caller owns and closes after the server (default: the built-in o200k_base BPE,
     *     which the server owns).
     * @return this.
     */
    public ServeContext tokenizer(final Tokenizer value)
    {
        tokenizer = value;
        return this;
    }

    /**
     * @return the caller's tokenizer, or null.
     */
    public Tokenizer tokenizer()
    {
        return tokenizer;
    }

    /**
     * @param value a Hugging Face {@code tokenizer.json} the server loads and owns (default none).
     * @return this.
     */
    public ServeContext tokenizerFile(final Path value)
    {
        tokenizerFile = value;
        return this;
    }

    /**
     * @return the tokenizer file, or null.
     */
    public Path tokenizerFile()
    {
        return tokenizerFile;
    }

    /**
     * @param value KV event publishing of engine 0, the others offset from it as vLLM offsets data-parallel ranks;
     *     null for none (default null).
     * @return this.
     */
    public ServeContext kvEvents(final KvEventsSettings value)
    {
        kvEvents = value;
        return this;
    }

    /**
     * @return KV event settings of engine 0, or null.
     */
    public KvEventsSettings kvEvents()
    {
        return kvEvents;
    }

    /**
     * @param value prefill/decode disaggregation ({@code --kv-transfer-config} and the data-plane flags): every engine
     *     gets a NIXL connector with its own data plane and side channel (rank r on the side-channel port plus r);
     *     null for none (default null).
     * @return this.
     */
    public ServeContext kvTransfer(final dev.tapedeck.kvtransfer.KvTransferSettings value)
    {
        kvTransfer = value;
        return this;
    }

    /**
     * @return the KV transfer settings, or null.
     */
    public dev.tapedeck.kvtransfer.KvTransferSettings kvTransfer()
    {
        return kvTransfer;
    }

    /**
     * @param value true for llm-d's topic {@code kv@<pod>@<port>@<model>} per instance, false for the topic of
     *     {@link #kvEvents(KvEventsSettings)} with {@code {rank}} replaced by the rank (default true).
     * @return this.
     */
    public ServeContext llmdKvEventsTopic(final boolean value)
    {
        llmdKvEventsTopic = value;
        return this;
    }

    /**
     * @return whether KV events use llm-d's topic.
     */
    public boolean llmdKvEventsTopic()
    {
        return llmdKvEventsTopic;
    }

    /**
     * @param value self-capture of every finished request to a trace file (default off).
     * @return this.
     */
    public ServeContext capture(final CaptureSettings value)
    {
        capture = value;
        return this;
    }

    /**
     * @return self-capture settings.
     */
    public CaptureSettings capture()
    {
        return capture;
    }

    /**
     * @param value the face's one clock: arrivals, steps, writes, the capture's start, KV event batches (default the
     *     system's {@link System#nanoTime()}); it must advance as the event loop's timers do.
     * @return this.
     */
    public ServeContext nanoClock(final NanoClock value)
    {
        nanoClock = value;
        return this;
    }

    /**
     * @return the context's clock.
     */
    public NanoClock nanoClock()
    {
        return nanoClock;
    }

    /**
     * @param value the wall clock KV event batches are dated by (default the system's).
     * @return this.
     */
    public ServeContext epochClock(final EpochNanoClock value)
    {
        epochClock = value;
        return this;
    }

    /**
     * @return the wall clock KV event batches are dated by.
     */
    public EpochNanoClock epochClock()
    {
        return epochClock;
    }

    /** An environment variable's value, trimmed; null when unset or blank. */
    private static String env(final String name)
    {
        final String value = System.getenv(name);
        return null == value || value.isBlank() ? null : value.trim();
    }

    /**
     * @param bindHost the address serve binds.
     * @return how a router reaches this pod: {@code POD_IP} when set, else the bound address unless it is a wildcard,
     *     else this host's address.
     */
    public static String podAddress(final String bindHost)
    {
        if (null != env("POD_IP"))
        {
            return env("POD_IP");
        }
        if (!"0.0.0.0".equals(bindHost) && !"::".equals(bindHost) && !"*".equals(bindHost))
        {
            return bindHost;
        }
        try
        {
            return InetAddress.getLocalHost().getHostAddress();
        }
        catch (final UnknownHostException ex)
        {
            return "127.0.0.1";
        }
    }
}
