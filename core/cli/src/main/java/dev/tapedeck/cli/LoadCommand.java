package dev.tapedeck.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine;

import dev.tapedeck.load.ArrivalProcess;
import dev.tapedeck.load.LengthDistribution;
import dev.tapedeck.load.LoadJob;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.LoadRun;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.load.PromptWords;
import dev.tapedeck.load.RequestBodies;
import dev.tapedeck.load.Slo;
import dev.tapedeck.tokens.BuiltinTokenizer;
import dev.tapedeck.tokens.HfTokenizer;
import dev.tapedeck.tokens.Tokenizer;
import dev.tapedeck.workload.SessionInference;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadFormat;
import dev.tapedeck.workload.Workloads;

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
        "  tapedeck load --url ... --sweep concurrency=1,8,64,512 --duration 30s --report out.json --html out.html"})
public final class LoadCommand implements Callable<Integer>
{
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Option(names = "--url", required = true, paramLabel = "URL", split = ",",
        description = "The server: http://host:port; several (comma-separated or repeated) are loaded in turn, " +
            "request by request.")
    List<URI> urls;

    @CommandLine.Option(names = "--workload", paramLabel = "FILE",
        description = "Replay a workload or trace open loop at its time stamps (docs/workloads.md).")
    Path workload;

    @CommandLine.Option(names = "--format", defaultValue = "auto", paramLabel = "FORMAT",
        description = "Workload format: auto, tapedeck, trace, mooncake, azure, kvcache-tester, guidellm, " +
            "guidellm-replay, vllm-bench (default: ${DEFAULT-VALUE}).")
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

    @CommandLine.Option(names = "--sweep", paramLabel = "concurrency=LIST|rate=LIST",
        description = "One run per level, e.g. concurrency=1,8,64,512 (each lasts --duration or --max-requests).")
    String sweep;

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

    @CommandLine.Option(names = "--warmup", defaultValue = "0", paramLabel = "S",
        description = "Requests meant to go in the first S seconds are sent but not measured " +
            "(default: ${DEFAULT-VALUE}).")
    double warmupSeconds;

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

    @CommandLine.Option(names = "--seed", defaultValue = "0", paramLabel = "N",
        description = "Seed of prompts and generated plans (default: ${DEFAULT-VALUE}).")
    long seed;

    @CommandLine.Option(names = "--report", paramLabel = "FILE", description = "Write the JSON report here.")
    Path report;

    @CommandLine.Option(names = "--html", paramLabel = "FILE", description = "Write the HTML report here.")
    Path html;

    @CommandLine.Option(names = "--scrape-metrics", paramLabel = "URL",
        description = "Sample the server's Prometheus metrics every second into the report " +
            "(e.g. http://127.0.0.1:8000/metrics).")
    URI scrapeMetrics;

    @CommandLine.Option(names = "--quiet", description = "No progress line.")
    boolean quiet;

    @Override
    public Integer call() throws Exception
    {
        validate(); // bad flags fail before the tokenizer is loaded
        final Tokenizer promptTokenizer = null == tokenizer ? new BuiltinTokenizer() : new HfTokenizer(tokenizer);
        try
        {
            final LoadJob job = new LoadJob(settings(promptTokenizer), System.out, System.err);
            final CountDownLatch finished = new CountDownLatch(1);
            final Thread hook = new Thread(() ->
            {
                job.stop();
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
            try
            {
                job.run();
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
            return 0;
        }
        finally
        {
            promptTokenizer.close();
        }
    }

    /**
     * Turn the flags into a job (also used by tests and {@code demo}).
     *
     * @param promptTokenizer the tokenizer prompts are built for.
     * @return the job's settings.
     * @throws IOException if the workload cannot be read or the server cannot be asked for its model.
     */
    LoadJob.Settings settings(final Tokenizer promptTokenizer) throws IOException, InterruptedException
    {
        validate();
        final Slo objectives = null == slo ? Slo.NONE : Slo.parse(slo);
        final List<LoadJob.PointSpec> points = new ArrayList<>();
        final LoadPlan basePlan = basePlan();
        final LoadRun.Mode mode = null != concurrency || (null != sweep && sweep.startsWith("concurrency")) ?
            LoadRun.Mode.CLOSED : LoadRun.Mode.OPEN;
        final double runSeconds = null != durationNs ? durationNs / 1e9 : maxSeconds;
        String sweepParameter = null;
        if (null != sweep)
        {
            final String[] kv = sweep.split("=", 2);
            sweepParameter = kv[0].trim().toLowerCase(Locale.ROOT);
            for (final String level : kv[1].split(","))
            {
                final double value = Double.parseDouble(level.trim());
                if ("rate".equals(sweepParameter))
                {
                    final LoadPlan plan = LoadPlan.fromRate(value, ArrivalProcess.parse(arrivals), runSeconds,
                        LengthDistribution.parse(promptTokens), outputDistribution(), seed, maxRequests);
                    points.add(new LoadJob.PointSpec("rate=" + level.trim(), value, new LoadRun.Settings(plan,
                        LoadRun.Mode.OPEN, 0, maxRequests, maxSeconds, warmupSeconds, drainTimeoutNs, objectives,
                        "rate=" + level.trim())));
                }
                else
                {
                    points.add(new LoadJob.PointSpec("concurrency=" + level.trim(), value, new LoadRun.Settings(
                        basePlan, LoadRun.Mode.CLOSED, (int)value, maxRequests, runSeconds, warmupSeconds,
                        drainTimeoutNs, objectives, "concurrency=" + level.trim(), rampUpNs)));
                }
            }
        }
        else
        {
            points.add(new LoadJob.PointSpec("run", Double.NaN, new LoadRun.Settings(basePlan, mode,
                null == concurrency ? 0 : concurrency, maxRequests, LoadRun.Mode.CLOSED == mode ? runSeconds :
                maxSeconds, warmupSeconds, drainTimeoutNs, objectives, "run", rampUpNs)));
        }
        final String modelName = null != model ? model : discoverModel();
        final RequestBodies.Endpoint which = "chat".equalsIgnoreCase(endpoint) ? RequestBodies.Endpoint.CHAT :
            RequestBodies.Endpoint.COMPLETIONS;
        final PromptFactory prompts = new PromptFactory(PromptWords.of(promptTokenizer), seed, basePlan.blockSize(),
            cacheResistant);
        final RequestBodies bodies = new RequestBodies(which, modelName, stream, ignoreEos,
            "tokens".equalsIgnoreCase(promptFormat), stream && !noContinuousUsage, prompts);
        final Map<String, String> extra = new LinkedHashMap<>();
        if (null != apiKey)
        {
            extra.put("Authorization", "Bearer " + apiKey);
        }
        for (final String header : headers)
        {
            final int colon = header.indexOf(':');
            if (colon <= 0)
            {
                throw new IllegalArgumentException("--header must be NAME:VALUE, got '" + header + "'");
            }
            extra.put(header.substring(0, colon).trim(), header.substring(colon + 1).trim());
        }
        final Map<String, Object> target = new LinkedHashMap<>();
        target.put("url", urls.size() == 1 ? urls.get(0).toString() : urls.stream().map(URI::toString).toList());
        target.put("model", modelName);
        target.put("endpoint", which.path());
        target.put("stream", stream);
        return new LoadJob.Settings(urls, target, optionsForReport(), bodies, extra, clientThreads, requestTimeoutNs,
            objectives, sweepParameter, points, scrapeMetrics, report, html, !quiet);
    }

    private void validate()
    {
        final int sources = (null != workload ? 1 : 0) + (null != rate ? 1 : 0);
        if (null == workload && null == rate && null == concurrency && null == sweep)
        {
            throw new IllegalArgumentException("give --workload FILE, --rate R, --concurrency C or --sweep");
        }
        if (sources > 1)
        {
            throw new IllegalArgumentException("--workload and --rate cannot be combined");
        }
        if (null != sweep && (null != rate || null != concurrency))
        {
            throw new IllegalArgumentException("--sweep replaces --rate and --concurrency");
        }
        if (null != sweep && !sweep.matches("(?i)(concurrency|rate)=[0-9.]+(,[0-9.]+)*"))
        {
            throw new IllegalArgumentException("--sweep must be concurrency=N,N,... or rate=R,R,..., got '" + sweep +
                "'");
        }
        if (null != sweep)
        {
            final boolean concurrencySweep = sweep.toLowerCase(Locale.ROOT).startsWith("concurrency");
            for (final String level : sweep.split("=", 2)[1].split(","))
            {
                final double value;
                try
                {
                    value = Double.parseDouble(level);
                }
                catch (final NumberFormatException ex)
                {
                    throw new IllegalArgumentException("--sweep level '" + level + "' is not a number");
                }
                if (concurrencySweep ? value < 1 || value != Math.rint(value) : !(value > 0))
                {
                    throw new IllegalArgumentException("--sweep levels must be " + (concurrencySweep ?
                        "whole numbers >= 1" : "rates > 0") + ", got '" + level + "'");
                }
            }
        }
        final boolean closed = null != concurrency || (null != sweep && sweep.toLowerCase(Locale.ROOT)
            .startsWith("concurrency"));
        final boolean generated = null == workload;
        if ((closed || null != sweep || null != rate) && null == durationNs && 0 == maxRequests && !(maxSeconds > 0))
        {
            throw new IllegalArgumentException("give --duration or --max-requests, or the run never ends");
        }
        if ((null != rate || (null != sweep && sweep.startsWith("rate"))) && null == durationNs && !(maxSeconds > 0))
        {
            throw new IllegalArgumentException("--rate needs --duration");
        }
        if (null != concurrency && concurrency < 1)
        {
            throw new IllegalArgumentException("--concurrency must be >= 1");
        }
        if (clientThreads < 1 || clientThreads > 64)
        {
            throw new IllegalArgumentException("--client-threads must be within 1..64");
        }
        if (!"auto".equalsIgnoreCase(sessions) && !"off".equalsIgnoreCase(sessions))
        {
            throw new IllegalArgumentException("--sessions must be auto or off");
        }
        if (!generated && null == durationNs && 0 == maxRequests && closed)
        {
            throw new IllegalArgumentException("give --duration or --max-requests with --concurrency");
        }
    }

    private LoadPlan basePlan() throws IOException
    {
        if (null != workload)
        {
            Workload w = "auto".equalsIgnoreCase(format) ? Workloads.load(workload) :
                Workloads.load(workload, WorkloadFormat.of(format));
            if ("auto".equalsIgnoreCase(sessions))
            {
                w = SessionInference.infer(w);
            }
            else
            {
                w = withoutSessions(w);
            }
            return LoadPlan.fromWorkload(w, timeScale, 0, 0,
                null == outputTokens ? null : LengthDistribution.parse(outputTokens), seed);
        }
        if (null != rate)
        {
            return LoadPlan.fromRate(rate, ArrivalProcess.parse(arrivals), null != durationNs ? durationNs / 1e9 :
                maxSeconds,
                LengthDistribution.parse(promptTokens), outputDistribution(), seed, maxRequests);
        }
        return LoadPlan.pool(Math.max(1, 0 == maxRequests ? 10_000 : maxRequests),
            LengthDistribution.parse(promptTokens), outputDistribution(), seed);
    }

    private static Workload withoutSessions(final Workload w)
    {
        final List<dev.tapedeck.workload.WorkloadRequest> requests = new ArrayList<>();
        for (final dev.tapedeck.workload.WorkloadRequest r : w.requests())
        {
            requests.add(new dev.tapedeck.workload.WorkloadRequest(r.arrivalMs(), r.promptTokens(), r.outputTokens(),
                r.hashIds(), null, 0, Double.NaN));
        }
        return new Workload(w.source(), w.hashBlockSize(), requests, w.notes());
    }

    private LengthDistribution outputDistribution()
    {
        return LengthDistribution.parse(null == outputTokens ? "128" : outputTokens);
    }

    private String discoverModel() throws IOException, InterruptedException
    {
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        final HttpRequest.Builder request = HttpRequest.newBuilder(urls.get(0).resolve("/v1/models"))
            .timeout(Duration.ofSeconds(10)).GET();
        if (null != apiKey)
        {
            request.header("Authorization", "Bearer " + apiKey);
        }
        final HttpResponse<String> response;
        try
        {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (final java.net.ConnectException ex)
        {
            throw new IOException("cannot reach " + urls.get(0) +
                " (is the server up?); or pass --model to skip asking it");
        }
        final JsonNode models = 200 == response.statusCode() ? new ObjectMapper().readTree(response.body()) : null;
        final JsonNode first = null == models ? null : models.path("data").path(0).path("id");
        if (null == first || first.isMissingNode())
        {
            throw new IOException(urls.get(0) + "/v1/models gave no model (status " + response.statusCode() +
                "); pass --model");
        }
        return first.asText();
    }

    private Map<String, Object> optionsForReport()
    {
        final Map<String, Object> options = new LinkedHashMap<>();
        for (final CommandLine.Model.OptionSpec option : spec.options())
        {
            if (option.usageHelp() || option.versionHelp() || "--api-key".equals(option.longestName()))
            {
                continue;
            }
            final Object value = option.getValue();
            if (null != value && !(value instanceof List<?> list && list.isEmpty()))
            {
                options.put(option.longestName().replaceFirst("^--", ""), String.valueOf(value));
            }
        }
        return options;
    }
}
