package dev.tapedeck.cli;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import picocli.CommandLine;

import dev.tapedeck.load.Load;
import dev.tapedeck.load.LoadContext;
import dev.tapedeck.load.RequestBodies;

/**
 * {@code tapedeck load}: drive any OpenAI-compatible server with a real trace (open loop at its time stamps), a rate
 * (open loop), a fixed concurrency (closed loop) or a sweep, and report TTFT, ITL, TPOT, end-to-end latency, dispatch
 * lateness, throughput and goodput (docs/load.md).
 */
@CommandLine.Command(
    name = "load",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Load an OpenAI-compatible server (tapedeck, vLLM, SGLang, a router) and measure it.",
        "  tapedeck load --url http://127.0.0.1:8000 --workload trace.jsonl [--time-scale 0.1]",
        "  tapedeck load --url ... --rate 20 --duration 60s --prompt-tokens 512 --output-tokens 128",
        "  tapedeck load --url ... --concurrency 64 --max-requests 2000",
        "  tapedeck load --url ... --sweep concurrency=1,8,64,512 --duration 30s --report out.json --html out.html",
        "  tapedeck load --prefill-url http://127.0.0.1:8100 --decode-url http://127.0.0.1:8200 --concurrency 8 ..."})
public final class LoadCommand implements Callable<Integer>
{
    @CommandLine.ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    /** What is loaded: {@code --url}, or a prefill/decode pair (exactly one of the two). */
    static final class Target
    {
        @CommandLine.Option(names = "--url", required = true, paramLabel = "URL", split = ",",
            description = "The server: http://host:port; several (comma-separated or repeated) are loaded in turn, " +
                "request by request.")
        List<URI> urls;

        @CommandLine.ArgGroup(exclusive = false, multiplicity = "1")
        PrefillDecode prefillDecode;

        @CommandLine.Option(names = "--sweep-servers", required = true, paramLabel = "NAME=URL", split = ",",
            description = "Instead of --url: run every point against each server in turn, named by its mode, e.g. " +
                "off=http://a:8000,on=http://b:8000,noprefix=http://c:8000; their /metrics are scraped, and the " +
                "report has a frontier and the cliff per mode (docs/offload.md).")
        java.util.Map<String, URI> sweepServers;
    }

    /** A disaggregated prefill/decode pair, loaded as vLLM's proxy does (docs/load.md). */
    static final class PrefillDecode
    {
        @CommandLine.Option(names = "--prefill-url", required = true, paramLabel = "URL",
            description = "Instead of --url, with --decode-url: send each request first to this prefill server " +
                "(max_tokens 1, not streamed, kv_transfer_params do_remote_decode)...")
        URI prefillUrl;

        @CommandLine.Option(names = "--decode-url", required = true, paramLabel = "URL",
            description = "...then the request itself to this decode server, with the prefill's " +
                "kv_transfer_params; the report splits TTFT into the two hops.")
        URI decodeUrl;
    }

    @CommandLine.Option(names = "--workload", paramLabel = "FILE",
        description = "Replay a workload or trace open loop at its time stamps (docs/workloads.md).")
    Path workload;

    @CommandLine.Option(names = "--format", defaultValue = "auto", paramLabel = "FORMAT",
        description = "Workload format: auto, tapedeck, trace, mooncake, azure, kvcache-tester, guidellm, " +
            "guidellm-replay, vllm-bench, aiperf-multi-turn, burstgpt (default: ${DEFAULT-VALUE}).")
    String format;

    @CommandLine.Option(names = "--time-scale", defaultValue = "1.0", paramLabel = "X",
        description = "Multiply the workload's gaps and think times by X (0.1 = ten times faster; " +
            "default: ${DEFAULT-VALUE}).")
    double timeScale;

    @CommandLine.Option(names = "--rate", paramLabel = "R", description = "Open loop at R requests per second.")
    Double rate;

    @CommandLine.Option(names = "--arrivals", defaultValue = "poisson", paramLabel = "poisson|gamma:CV|constant",
        description = "Arrival process of --rate (default: ${DEFAULT-VALUE}).")
    String arrivals;

    @CommandLine.Option(names = "--concurrency", paramLabel = "C",
        description = "Closed loop: keep C requests in flight.")
    Integer concurrency;

    @CommandLine.Option(names = "--sweep", paramLabel = "concurrency=LIST|rate=LIST|users=LIST",
        description = "One run per level, e.g. concurrency=1,8,64,512 (each lasts --duration or --max-requests), " +
            "or users=4,16,64: the --workload's sessions replayed by that many users.")
    String sweep;

    @CommandLine.Mixin
    ReplayOptions replay = new ReplayOptions();

    @CommandLine.Option(names = "--gpus-per-server", defaultValue = "1", paramLabel = "N",
        description = "GPUs behind each server, so a sweep's report gives output throughput per GPU beside the " +
            "p99 TTFT and interactivity of each level (default: ${DEFAULT-VALUE}).")
    int gpusPerServer;

    @CommandLine.Option(names = "--prompt-tokens", defaultValue = "512", paramLabel = "D",
        description = "Prompt lengths for --rate/--concurrency: N, MIN..MAX, normal:MEAN,SD, lognormal:MEAN,SD " +
            "(default: ${DEFAULT-VALUE}).")
    String promptTokens;

    @CommandLine.Option(names = "--output-tokens", paramLabel = "D",
        description = "Output lengths (same forms); with --workload it replaces the workload's (default: 128 " +
            "for generated requests, the workload's otherwise).")
    String outputTokens;

    @CommandLine.Option(names = "--duration", paramLabel = "DURATION", converter = Converters.DurationNs.class,
        description = "How long to generate arrivals (--rate) or keep sending (--concurrency, --sweep).")
    Long durationNs;

    @CommandLine.Option(names = "--max-requests", defaultValue = "0", paramLabel = "N",
        description = "Send at most N requests (0 = no limit).")
    int maxRequests;

    @CommandLine.Option(names = "--max-seconds", defaultValue = "0", paramLabel = "S",
        description = "Stop sending after S seconds (0 = no limit).")
    double maxSeconds;

    @CommandLine.Option(names = "--warmup", defaultValue = "0s", paramLabel = "DURATION",
        converter = Converters.DurationNsWithUnit.class,
        description = "Requests meant to go in this first part of the run are sent but not measured, e.g. 20s " +
            "(a unit is required; default: none).")
    long warmupNs;

    @CommandLine.Option(names = "--model", paramLabel = "NAME",
        description = "Model name to send (default: the first of the server's /v1/models).")
    String model;

    @CommandLine.Option(names = "--endpoint", defaultValue = "completions", paramLabel = "completions|chat",
        description = "OpenAI endpoint (default: ${DEFAULT-VALUE}).")
    String endpoint;

    @CommandLine.Option(names = "--stream", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Stream responses (SSE) to time every token (default: on; --no-stream for one JSON body).")
    boolean stream;

    @CommandLine.Option(names = "--ignore-eos", description = "Send ignore_eos so outputs have exactly the " +
        "planned length (vLLM, SGLang, tapedeck).")
    boolean ignoreEos;

    @CommandLine.Option(names = "--prompt-format", defaultValue = "text", paramLabel = "text|tokens",
        description = "Prompts as text, or as token-id arrays (completions only; no tokenizing on the server) " +
            "(default: ${DEFAULT-VALUE}).")
    String promptFormat;

    @CommandLine.Option(names = "--cache-resistant",
        description = "Give every prompt a unique start, so no two requests share a prefix.")
    boolean cacheResistant;

    @CommandLine.Option(names = "--sessions", defaultValue = "auto", paramLabel = "auto|off",
        description = "Replay multi-turn sessions turn after turn (given by the workload, or inferred from " +
            "block-id chains); off sends every request at its time stamp (default: ${DEFAULT-VALUE}).")
    String sessions;

    @CommandLine.Option(names = "--tokenizer", paramLabel = "FILE",
        description = "The served model's tokenizer.json, so prompts have exactly the planned token counts " +
            "(default: the built-in o200k_base, exact against tapedeck serve).")
    Path tokenizer;

    @CommandLine.Option(names = "--api-key", paramLabel = "KEY", description = "Send Authorization: Bearer KEY.")
    String apiKey;

    @CommandLine.Option(names = "--header", paramLabel = "NAME:VALUE", description = "Extra request header.")
    List<String> headers = new ArrayList<>();

    @CommandLine.Option(names = "--request-timeout", defaultValue = "10m", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "A request running longer fails as a timeout (default: ${DEFAULT-VALUE}).")
    long requestTimeoutNs;

    @CommandLine.Option(names = "--drain-timeout", defaultValue = "60s", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "After the last send, how long running requests may finish before they are cut off " +
            "(counted as incomplete) (default: ${DEFAULT-VALUE}).")
    long drainTimeoutNs;

    @CommandLine.Option(names = "--ramp-up", defaultValue = "0", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "Closed loop: spread the first C sends evenly over this time instead of sending them at once " +
            "(default: ${DEFAULT-VALUE}).")
    long rampUpNs;

    @CommandLine.Option(names = "--client-threads", defaultValue = "1", paramLabel = "N",
        description = "Client event loops (default: ${DEFAULT-VALUE}).")
    int clientThreads;

    @CommandLine.Option(names = "--no-continuous-usage", negatable = false,
        description = "Do not ask for usage in every chunk (for servers that reject stream_options." +
            "continuous_usage_stats); ITL then counts one token per chunk.")
    boolean noContinuousUsage;

    @CommandLine.Option(names = "--slo", paramLabel = "ttft_ms=..,itl_ms=..,tpot_ms=..,e2e_ms=..",
        description = "Objectives for goodput; a request is good when it meets all that are given.")
    String slo;

    @CommandLine.Option(names = "--max-failure-rate", paramLabel = "FRACTION",
        description = "Exit 1 when more than this share of the requests failed (0 = any failure; default: only " +
            "when none succeeded, or none was sent).")
    Double maxFailureRate;

    @CommandLine.Option(names = "--seed", defaultValue = "0", paramLabel = "N",
        description = "Seed of prompts and generated plans (default: ${DEFAULT-VALUE}).")
    long seed;

    @CommandLine.Option(names = "--report", paramLabel = "FILE", description = "Write the JSON report here.")
    Path report;

    @CommandLine.Option(names = "--html", paramLabel = "FILE", description = "Write the HTML report here.")
    Path html;

    @CommandLine.Option(names = "--insecure",
        description = "Accept any TLS certificate of an https:// server (a self-signed gateway in a test setup).")
    boolean insecure;

    @CommandLine.Option(names = "--scrape-metrics", paramLabel = "URL", split = ",",
        description = "Sample the server's Prometheus metrics every second into the report " +
            "(e.g. http://127.0.0.1:8000/metrics); with --decode-url, the decode server's, for its KV transfer time.")
    List<URI> scrapeMetrics;

    @CommandLine.Option(names = "--quiet", description = "No progress line.")
    boolean quiet;

    /**
     * @return the settings the flags describe (also used by {@code demo}, which sets its own on top).
     * @throws IllegalArgumentException if a flag's value is invalid.
     */
    LoadContext context()
    {
        if (!"auto".equalsIgnoreCase(sessions) && !"off".equalsIgnoreCase(sessions))
        {
            throw new IllegalArgumentException("--sessions must be auto or off");
        }
        if (null != maxFailureRate && !(maxFailureRate >= 0 && maxFailureRate <= 1))
        {
            throw new IllegalArgumentException("--max-failure-rate must be a fraction within [0, 1], got " +
                maxFailureRate);
        }
        final java.util.Map<String, URI> servers = null == target || null == target.sweepServers ?
            java.util.Map.of() : target.sweepServers;
        return new LoadContext()
            .urls(null == target ? null : !servers.isEmpty() ? List.of(servers.values().iterator().next()) :
                target.urls)
            .sweepServers(servers)
            .gpusPerServer(gpusPerServer)
            .replay(replay.replay())
            .prefillUrl(null == target || null == target.prefillDecode ? null : target.prefillDecode.prefillUrl)
            .decodeUrl(null == target || null == target.prefillDecode ? null : target.prefillDecode.decodeUrl)
            .workload(workload)
            .format(format)
            .timeScale(timeScale)
            .rate(rate)
            .arrivals(arrivals)
            .concurrency(concurrency)
            .sweep(sweep)
            .promptTokens(promptTokens)
            .outputTokens(outputTokens)
            .durationNs(durationNs)
            .maxRequests(maxRequests)
            .maxSeconds(maxSeconds)
            .warmupSeconds(warmupNs / 1e9)
            .model(model)
            .endpoint("chat".equalsIgnoreCase(endpoint) ? RequestBodies.Endpoint.CHAT :
                RequestBodies.Endpoint.COMPLETIONS)
            .stream(stream)
            .ignoreEos(ignoreEos)
            .tokenPrompts("tokens".equalsIgnoreCase(promptFormat))
            .cacheResistant(cacheResistant)
            .inferSessions("auto".equalsIgnoreCase(sessions))
            .tokenizerFile(tokenizer)
            .apiKey(apiKey)
            .headers(headers)
            .requestTimeoutNs(requestTimeoutNs)
            .drainTimeoutNs(drainTimeoutNs)
            .rampUpNs(rampUpNs)
            .clientThreads(clientThreads)
            .continuousUsage(!noContinuousUsage)
            .slo(slo)
            .seed(seed)
            .report(report)
            .html(html)
            .scrapeMetrics(scrapeMetrics)
            .insecure(insecure)
            .progress(!quiet);
    }

    @Override
    public Integer call() throws Exception
    {
        return run(context(), maxFailureRate);
    }

    /**
     * Run a load to its end; SIGINT/SIGTERM stop it early, the reports still written.
     *
     * @param context the load.
     * @param maxFailureRate {@code --max-failure-rate}, or null.
     * @return the exit code ({@link #exitCode}).
     * @throws Exception if it cannot start or a report cannot be written.
     */
    static int run(final LoadContext context, final Double maxFailureRate) throws Exception
    {
        try (Load load = Load.start(context))
        {
            final CountDownLatch finished = new CountDownLatch(1);
            final Thread hook = new Thread(() ->
            {
                load.stop();
                try
                {
                    finished.await(30, TimeUnit.SECONDS);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }, "tapedeck-load-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            final com.fasterxml.jackson.databind.JsonNode report;
            try
            {
                report = load.await();
            }
            finally
            {
                finished.countDown();
                try
                {
                    Runtime.getRuntime().removeShutdownHook(hook);
                }
                catch (final IllegalStateException ex)
                {
                    // already shutting down: the hook is running
                }
            }
            return exitCode(report, maxFailureRate);
        }
    }

    /**
     * @param report the run's JSON report.
     * @param maxFailureRate the largest share of failed requests that still exits 0, or null for the default.
     * @return 1, with one line on stderr naming what failed, when no request was sent, when requests were sent (or
     *     failed before they could be) and none succeeded (scripts must not read that as success), or when more than
     *     {@code maxFailureRate} of them failed; else 0. The report is written either way.
     */
    static int exitCode(final com.fasterxml.jackson.databind.JsonNode report, final Double maxFailureRate)
    {
        long measured = 0; // sent, or failed without being written (a refused connection)
        long completed = 0;
        long failed = 0;
        final java.util.Map<String, Long> errors = new java.util.TreeMap<>();
        for (final com.fasterxml.jackson.databind.JsonNode point : report.path("points"))
        {
            measured += Math.max(point.path("requests").path("sent").asLong(),
                point.path("requests").path("failed").asLong());
            completed += point.path("requests").path("completed").asLong();
            failed += point.path("requests").path("failed").asLong();
            point.path("errors").properties().forEach(e -> errors.merge(e.getKey(), e.getValue().asLong(), Long::sum));
        }
        if (0 == measured)
        {
            System.err.println("tapedeck load: no request was sent; the report has the details");
            return 1;
        }
        if (0 == completed)
        {
            System.err.println("tapedeck load: none of " + measured + " request(s) succeeded " + errors +
                "; the report has the details");
            return 1;
        }
        if (null != maxFailureRate && failed > maxFailureRate * measured)
        {
            System.err.println(String.format(java.util.Locale.ROOT, "tapedeck load: %d of %d request(s) failed " +
                "(%.1f%%, over --max-failure-rate %s) %s; the report has the details", failed, measured,
                100.0 * failed / measured, maxFailureRate, errors));
            return 1;
        }
        return 0;
    }
}
