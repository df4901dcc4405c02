package dev.tapedeck.load;

import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import dev.tapedeck.tokens.Tokenizer;

/**
 * Everything {@link Load#start(LoadContext)} needs, in the Aeron style: fluent setters, getters of the same name
 * (each returns what its setter set), and {@link #conclude()}, which checks that the settings describe a run that
 * ends. Each default is named on its setter; they are those of {@code tapedeck load}, whose flags have the same
 * names. Values with a grammar of their own (length distributions, arrivals, sweeps, objectives) take the flag's text.
 * <p>
 * Not thread safe: fill it on one thread, then hand it to {@code start}, after which it must not change.
 */
public final class LoadContext
{
    /** A request running longer fails as a timeout, by default: 10 minutes. */
    public static final long DEFAULT_REQUEST_TIMEOUT_NS = TimeUnit.MINUTES.toNanos(10);
    /** How long running requests may finish after the last send, by default: 60 s. */
    public static final long DEFAULT_DRAIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(60);

    private List<URI> urls;
    private URI prefillUrl;
    private URI decodeUrl;
    private Path workload;
    private String format = "auto";
    private double timeScale = 1.0;
    private Double rate;
    private String arrivals = "poisson";
    private Integer concurrency;
    private String sweep;
    private WorkloadReplay replay = WorkloadReplay.NONE;
    private Map<String, URI> sweepServers = Map.of();
    private int gpusPerServer = 1;
    private String promptTokens = "512";
    private String outputTokens;
    private Long durationNs;
    private int maxRequests = 0;
    private double maxSeconds = 0;
    private double warmupSeconds = 0;
    private String model;
    private RequestBodies.Endpoint endpoint = RequestBodies.Endpoint.COMPLETIONS;
    private boolean stream = true;
    private boolean ignoreEos = false;
    private boolean tokenPrompts = false;
    private boolean cacheResistant = false;
    private boolean inferSessions = true;
    private Tokenizer tokenizer;
    private Path tokenizerFile;
    private String apiKey;
    private List<String> headers = new ArrayList<>();
    private long requestTimeoutNs = DEFAULT_REQUEST_TIMEOUT_NS;
    private long drainTimeoutNs = DEFAULT_DRAIN_TIMEOUT_NS;
    private long rampUpNs = 0;
    private int clientThreads = 1;
    private boolean continuousUsage = true;
    private String slo;
    private long seed = 0;
    private Path report;
    private Path html;
    private List<URI> scrapeMetrics = List.of();
    private boolean insecure;
    private boolean progress = true;
    private PrintStream out = System.out;
    private PrintStream err = System.err;
    /**
     * Check that the settings describe a run that ends ({@link LoadContextRules}); {@link Load#start} calls it.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first problem, in the words of the CLI flags.
     */
    public LoadContext conclude()
    {
        LoadContextRules.check(this);
        return this;
    }

    /** True for a closed loop: a concurrency or a concurrency sweep. */
    boolean isClosedLoop()
    {
        return null != concurrency || (null != sweep && sweep.toLowerCase(Locale.ROOT).startsWith("concurrency"));
    }

    /**
     * @param value the servers, loaded in turn request by request (required; {@code --url}).
     * @return this.
     */
    public LoadContext urls(final List<URI> value)
    {
        urls = value;
        return this;
    }

    public List<URI> urls()
    {
        return urls;
    }

    /**
     * @param value prefill/decode runs: the prefill server, asked first with {@code max_tokens} 1 for the
     *     {@code kv_transfer_params} (default none; {@code --prefill-url}, with {@code --decode-url}).
     * @return this.
     */
    public LoadContext prefillUrl(final URI value)
    {
        prefillUrl = value;
        return this;
    }

    public URI prefillUrl()
    {
        return prefillUrl;
    }

    /**
     * @param value prefill/decode runs: the decode server, sent the request with the prefill's kv_transfer_params.
     * @return this.
     */
    public LoadContext decodeUrl(final URI value)
    {
        decodeUrl = value;
        return this;
    }

    public URI decodeUrl()
    {
        return decodeUrl;
    }

    /** True for a prefill/decode (two-hop) run: both {@link #prefillUrl} and {@link #decodeUrl} given. */
    public boolean isPrefillDecode()
    {
        return null != prefillUrl && null != decodeUrl;
    }

    /**
     * @param value replay this workload or trace open loop at its time stamps (default none; {@code --workload}).
     * @return this.
     */
    public LoadContext workload(final Path value)
    {
        workload = value;
        return this;
    }

    public Path workload()
    {
        return workload;
    }

    /**
     * @param value workload format: auto, tapedeck, trace, mooncake, azure, kvcache-tester, guidellm, guidellm-replay,
     *     vllm-bench, aiperf-multi-turn, burstgpt (default auto).
     * @return this.
     */
    public LoadContext format(final String value)
    {
        format = value;
        return this;
    }

    public String format()
    {
        return format;
    }

    /**
     * @param value multiply the workload's gaps and think times by this (default 1.0).
     * @return this.
     */
    public LoadContext timeScale(final double value)
    {
        timeScale = value;
        return this;
    }

    public double timeScale()
    {
        return timeScale;
    }

    /**
     * @param value open loop at this many requests per second (default none; {@code --rate}).
     * @return this.
     */
    public LoadContext rate(final Double value)
    {
        rate = value;
        return this;
    }

    public Double rate()
    {
        return rate;
    }

    /**
     * @param value arrival process of the rate: poisson, gamma:CV or constant (default poisson).
     * @return this.
     */
    public LoadContext arrivals(final String value)
    {
        arrivals = value;
        return this;
    }

    public String arrivals()
    {
        return arrivals;
    }

    /**
     * @param value closed loop: keep this many requests in flight (default none).
     * @return this.
     */
    public LoadContext concurrency(final Integer value)
    {
        concurrency = value;
        return this;
    }

    public Integer concurrency()
    {
        return concurrency;
    }

    /**
     * @param value how the workload is replayed: by concurrent users, on a fixed schedule (default as it is).
     * @return this.
     */
    public LoadContext replay(final WorkloadReplay value)
    {
        replay = value;
        return this;
    }

    public WorkloadReplay replay()
    {
        return replay;
    }

    /**
     * @param value server modes by name, each run at every point ({@code --sweep-servers}).
     * @return this.
     */
    public LoadContext sweepServers(final Map<String, URI> value)
    {
        sweepServers = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(value));
        return this;
    }

    public Map<String, URI> sweepServers()
    {
        return sweepServers;
    }

    /**
     * @param value GPUs behind each server, for throughput per GPU in the report ({@code --gpus-per-server}; 1).
     * @return this.
     */
    public LoadContext gpusPerServer(final int value)
    {
        gpusPerServer = value;
        return this;
    }

    public int gpusPerServer()
    {
        return gpusPerServer;
    }

    public LoadContext sweep(final String value)
    {
        sweep = value;
        return this;
    }

    public String sweep()
    {
        return sweep;
    }

    /**
     * @param value prompt lengths of generated requests: N, MIN..MAX, normal:MEAN,SD, lognormal:MEAN,SD (default 512).
     * @return this.
     */
    public LoadContext promptTokens(final String value)
    {
        promptTokens = value;
        return this;
    }

    public String promptTokens()
    {
        return promptTokens;
    }

    /**
     * @param value output lengths (same forms); with a workload it replaces the workload's (default 128 for generated
     *     requests, the workload's otherwise).
     * @return this.
     */
    public LoadContext outputTokens(final String value)
    {
        outputTokens = value;
        return this;
    }

    public String outputTokens()
    {
        return outputTokens;
    }

    /**
     * @param value how long to generate arrivals (rate) or keep sending (concurrency, sweep) (default none).
     * @return this.
     */
    public LoadContext durationNs(final Long value)
    {
        durationNs = value;
        return this;
    }

    public Long durationNs()
    {
        return durationNs;
    }

    /**
     * @param value send at most this many requests, 0 for no limit (default 0).
     * @return this.
     */
    public LoadContext maxRequests(final int value)
    {
        maxRequests = value;
        return this;
    }

    public int maxRequests()
    {
        return maxRequests;
    }

    /**
     * @param value stop sending after this many seconds, 0 for no limit (default 0).
     * @return this.
     */
    public LoadContext maxSeconds(final double value)
    {
        maxSeconds = value;
        return this;
    }

    public double maxSeconds()
    {
        return maxSeconds;
    }

    /**
     * @param value requests meant for the first seconds are sent but not measured (default 0).
     * @return this.
     */
    public LoadContext warmupSeconds(final double value)
    {
        warmupSeconds = value;
        return this;
    }

    public double warmupSeconds()
    {
        return warmupSeconds;
    }

    /**
     * @param value model name to send (default: the first of the server's /v1/models).
     * @return this.
     */
    public LoadContext model(final String value)
    {
        model = value;
        return this;
    }

    public String model()
    {
        return model;
    }

    /**
     * @param value the OpenAI endpoint (default completions).
     * @return this.
     */
    public LoadContext endpoint(final RequestBodies.Endpoint value)
    {
        endpoint = value;
        return this;
    }

    public RequestBodies.Endpoint endpoint()
    {
        return endpoint;
    }

    /**
     * @param value stream responses (SSE) to time every token (default true).
     * @return this.
     */
    public LoadContext stream(final boolean value)
    {
        stream = value;
        return this;
    }

    public boolean stream()
    {
        return stream;
    }

    /**
     * @param value send ignore_eos so outputs have exactly the planned length (default false).
     * @return this.
     */
    public LoadContext ignoreEos(final boolean value)
    {
        ignoreEos = value;
        return this;
    }

    public boolean ignoreEos()
    {
        return ignoreEos;
    }

    /**
     * @param value prompts as token-id arrays instead of text (completions only; default false).
     * @return this.
     */
    public LoadContext tokenPrompts(final boolean value)
    {
        tokenPrompts = value;
        return this;
    }

    public boolean tokenPrompts()
    {
        return tokenPrompts;
    }

    /**
     * @param value give every prompt a unique start, so no two requests share a prefix (default false).
     * @return this.
     */
    public LoadContext cacheResistant(final boolean value)
    {
        cacheResistant = value;
        return this;
    }

    public boolean cacheResistant()
    {
        return cacheResistant;
    }

    /**
     * @param value replay multi-turn sessions turn after turn, given by the workload or inferred from block-id chains;
     *     false sends every request at its time stamp (default true).
     * @return this.
     */
    public LoadContext inferSessions(final boolean value)
    {
        inferSessions = value;
        return this;
    }

    public boolean inferSessions()
    {
        return inferSessions;
    }

    /**
     * @param value a tokenizer the caller owns, that prompts are built for (default: the built-in o200k_base, which the
     *     run owns).
     * @return this.
     */
    public LoadContext tokenizer(final Tokenizer value)
    {
        tokenizer = value;
        return this;
    }

    public Tokenizer tokenizer()
    {
        return tokenizer;
    }

    /**
     * @param value the served model's tokenizer.json, loaded and owned by the run (default none).
     * @return this.
     */
    public LoadContext tokenizerFile(final Path value)
    {
        tokenizerFile = value;
        return this;
    }

    public Path tokenizerFile()
    {
        return tokenizerFile;
    }

    /**
     * @param value send {@code Authorization: Bearer KEY} (default none).
     * @return this.
     */
    public LoadContext apiKey(final String value)
    {
        apiKey = value;
        return this;
    }

    public String apiKey()
    {
        return apiKey;
    }

    /**
     * @param value extra request headers, each {@code NAME:VALUE} (default none).
     * @return this.
     */
    public LoadContext headers(final List<String> value)
    {
        headers = value;
        return this;
    }

    public List<String> headers()
    {
        return headers;
    }

    /**
     * @param value a request running longer fails as a timeout (default 10 minutes).
     * @return this.
     */
    public LoadContext requestTimeoutNs(final long value)
    {
        requestTimeoutNs = value;
        return this;
    }

    public long requestTimeoutNs()
    {
        return requestTimeoutNs;
    }

    /**
     * @param value after the last send, how long running requests may finish (default 60 s).
     * @return this.
     */
    public LoadContext drainTimeoutNs(final long value)
    {
        drainTimeoutNs = value;
        return this;
    }

    public long drainTimeoutNs()
    {
        return drainTimeoutNs;
    }

    /**
     * @param value closed loop: spread the first sends evenly over this time (default 0).
     * @return this.
     */
    public LoadContext rampUpNs(final long value)
    {
        rampUpNs = value;
        return this;
    }

    public long rampUpNs()
    {
        return rampUpNs;
    }

    /**
     * @param value client event loops, 1..64 (default 1).
     * @return this.
     */
    public LoadContext clientThreads(final int value)
    {
        clientThreads = value;
        return this;
    }

    public int clientThreads()
    {
        return clientThreads;
    }

    /**
     * @param value ask for usage in every chunk (default true).
     * @return this.
     */
    public LoadContext continuousUsage(final boolean value)
    {
        continuousUsage = value;
        return this;
    }

    public boolean continuousUsage()
    {
        return continuousUsage;
    }

    /**
     * @param value objectives for goodput: {@code ttft_ms=..,itl_ms=..,tpot_ms=..,e2e_ms=..} (default none).
     * @return this.
     */
    public LoadContext slo(final String value)
    {
        slo = value;
        return this;
    }

    public String slo()
    {
        return slo;
    }

    /**
     * @param value seed of prompts and generated plans (default 0).
     * @return this.
     */
    public LoadContext seed(final long value)
    {
        seed = value;
        return this;
    }

    public long seed()
    {
        return seed;
    }

    /**
     * @param value write the JSON report here (default none).
     * @return this.
     */
    public LoadContext report(final Path value)
    {
        report = value;
        return this;
    }

    public Path report()
    {
        return report;
    }

    /**
     * @param value write the HTML report here (default none).
     * @return this.
     */
    public LoadContext html(final Path value)
    {
        html = value;
        return this;
    }

    public Path html()
    {
        return html;
    }

    /**
     * @param value sample these Prometheus URLs every second into the report, summed as one server (several for a
     *     fleet; default none).
     * @return this.
     */
    public LoadContext scrapeMetrics(final List<URI> value)
    {
        scrapeMetrics = null == value ? List.of() : List.copyOf(value);
        return this;
    }

    public List<URI> scrapeMetrics()
    {
        return scrapeMetrics;
    }

    /**
     * @param value accept any TLS certificate of an https server ({@code --insecure}; default false).
     * @return this.
     */
    public LoadContext insecure(final boolean value)
    {
        insecure = value;
        return this;
    }

    public boolean insecure()
    {
        return insecure;
    }

    /**
     * @param value print a progress line to the error stream (default true).
     * @return this.
     */
    public LoadContext progress(final boolean value)
    {
        progress = value;
        return this;
    }

    public boolean progress()
    {
        return progress;
    }

    /**
     * @param resultsOut where the result table goes (default standard output).
     * @param progressErr where progress and warnings go (default standard error).
     * @return this.
     */
    public LoadContext streams(final PrintStream resultsOut, final PrintStream progressErr)
    {
        out = resultsOut;
        err = progressErr;
        return this;
    }

    public PrintStream out()
    {
        return out;
    }

    public PrintStream err()
    {
        return err;
    }
}
