package dev.tapedeck.load;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.build.JvmAccess;
import dev.tapedeck.load.client.ServerUrl;
import dev.tapedeck.load.client.Tls;
import dev.tapedeck.tokens.Tokenizer;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadFormat;
import dev.tapedeck.workload.Workloads;

/**
 * A running {@code load}: every run point of a {@link LoadContext} (one, or one per sweep level) against the servers,
 * then the reports and the result table. Started by {@link #start(LoadContext)}, the one way to run a load (the CLI,
 * {@code demo} and the tests go through it): it builds the plan and the request bodies on the caller's thread, so a bad
 * workload or an unreachable server fails there, then runs on its own thread ({@code tapedeck-load-job}).
 * <p>
 * Threading: {@link #stop()} and {@link #await()} may be called from any thread; {@link #close()} once.
 */
public final class Load implements AutoCloseable
{
    private final LoadJob job;
    private final Tokenizer tokenizer;
    private final boolean ownsTokenizer;
    private final CompletableFuture<ObjectNode> report = new CompletableFuture<>();
    private boolean closed;

    private Load(final LoadJob job, final Tokenizer tokenizer, final boolean ownsTokenizer)
    {
        this.job = job;
        this.tokenizer = tokenizer;
        this.ownsTokenizer = ownsTokenizer;
    }

    /**
     * Conclude the context, read the workload, build the plan of every point, ask the server for its model when none
     * is given, then start the runs on the job's thread.
     *
     * @param context the settings; concluded here if it was not.
     * @return the running load.
     * @throws IOException if the workload or the tokenizer cannot be read, or the server cannot be asked its model.
     * @throws InterruptedException if interrupted while asking the server its model.
     * @throws IllegalArgumentException if a setting is invalid.
     * @throws IllegalStateException if the JVM lacks {@value dev.tapedeck.build.JvmAccess#OPTION}.
     */
    public static Load start(final LoadContext context) throws IOException, InterruptedException
    {
        JvmAccess.requireAgronaAccess();
        context.conclude();
        final boolean ownsTokenizer = null == context.tokenizer();
        final Tokenizer tokenizer = ownsTokenizer ? Tokenizer.open(context.tokenizerFile()) :
            context.tokenizer();
        try
        {
            final Load load = new Load(new LoadJob(settings(context, tokenizer), context.out(), context.err()),
                tokenizer, ownsTokenizer);
            final Thread thread = new Thread(load::run, "tapedeck-load-job");
            thread.start();
            return load;
        }
        catch (final IOException | InterruptedException | RuntimeException ex)
        {
            if (ownsTokenizer)
            {
                tokenizer.close();
            }
            throw ex;
        }
    }

    private void run()
    {
        try
        {
            report.complete(job.run());
        }
        catch (final Throwable ex)
        {
            report.completeExceptionally(ex);
        }
    }

    /**
     * End the current run early (requests in flight get their drain time) and skip the remaining points; the reports
     * are still written.
     */
    public void stop()
    {
        job.stop();
    }

    /**
     * Wait for every point to finish and the reports to be written.
     *
     * @return the JSON report.
     * @throws IOException if a report could not be written.
     * @throws InterruptedException if interrupted while waiting.
     */
    public ObjectNode await() throws IOException, InterruptedException
    {
        try
        {
            return report.get();
        }
        catch (final ExecutionException ex)
        {
            final Throwable cause = ex.getCause();
            if (cause instanceof IOException io)
            {
                throw io;
            }
            if (cause instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            if (cause instanceof InterruptedException interrupted)
            {
                throw interrupted;
            }
            throw new IllegalStateException(cause);
        }
    }

    /**
     * Stop, wait for the job to end, and close the tokenizer if the load opened it. Later calls do nothing.
     */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        stop();
        report.handle((r, ex) -> r).join();
        if (ownsTokenizer)
        {
            tokenizer.close();
        }
    }

    private static LoadJob.Settings settings(final LoadContext context, final Tokenizer promptTokenizer)
        throws IOException, InterruptedException
    {
        final Slo objectives = null == context.slo() ? Slo.NONE : Slo.parse(context.slo());
        final List<LoadJob.PointSpec> points = new ArrayList<>();
        final LoadPlan basePlan = basePlan(context);
        final LoadRun.Mode mode = context.isClosedLoop() ? LoadRun.Mode.CLOSED : LoadRun.Mode.OPEN;
        final double runSeconds = null != context.durationNs() ? context.durationNs() / 1e9 : context.maxSeconds();
        final String sweep = context.sweep();
        String sweepParameter = null;
        if (null != sweep)
        {
            final String[] kv = sweep.split("=", 2);
            sweepParameter = kv[0].trim().toLowerCase(Locale.ROOT);
            int firstUser = 0; // each level's users are new ones: a server keeps its cache from level to level
            for (final String level : kv[1].split(","))
            {
                final double value = Double.parseDouble(level.trim());
                if ("rate".equals(sweepParameter))
                {
                    final LoadPlan plan = LoadPlan.fromRate(value, ArrivalProcess.parse(context.arrivals()),
                        runSeconds, LengthDistribution.parse(context.promptTokens()), outputDistribution(context),
                        context.seed(), context.maxRequests());
                    points.add(new LoadJob.PointSpec("rate=" + level.trim(), value, new LoadRun.Settings(plan,
                        LoadRun.Mode.OPEN, 0, context.maxRequests(), context.maxSeconds(), context.warmupSeconds(),
                        context.drainTimeoutNs(), objectives, "rate=" + level.trim())));
                }
                else if ("users".equals(sweepParameter))
                {
                    // the workload's sessions replayed by this many users, at their time stamps
                    points.add(new LoadJob.PointSpec("users=" + level.trim(), value, new LoadRun.Settings(
                        basePlan(context, (int)value, firstUser), LoadRun.Mode.OPEN, 0, context.maxRequests(),
                        context.maxSeconds(), context.warmupSeconds(), context.drainTimeoutNs(), objectives,
                        "users=" + level.trim())));
                    firstUser += (int)value;
                }
                else
                {
                    points.add(new LoadJob.PointSpec("concurrency=" + level.trim(), value, new LoadRun.Settings(
                        basePlan, LoadRun.Mode.CLOSED, (int)value, context.maxRequests(), runSeconds,
                        context.warmupSeconds(), context.drainTimeoutNs(), objectives, "concurrency=" + level.trim(),
                        context.rampUpNs())));
                }
            }
        }
        else
        {
            points.add(new LoadJob.PointSpec("run", Double.NaN, new LoadRun.Settings(basePlan, mode,
                null == context.concurrency() ? 0 : context.concurrency(), context.maxRequests(),
                LoadRun.Mode.CLOSED == mode ? runSeconds : context.maxSeconds(), context.warmupSeconds(),
                context.drainTimeoutNs(), objectives, "run", context.rampUpNs())));
        }
        final boolean twoHop = context.isPrefillDecode();
        final List<URI> urls = twoHop ? List.of(context.decodeUrl()) : context.urls();
        final String modelName = modelName(context, urls.get(0), basePlan);
        final RequestBodies.Endpoint which = context.endpoint();
        final PromptFactory prompts = new PromptFactory(PromptWords.of(promptTokenizer), context.seed(),
            basePlan.blockSize(), context.cacheResistant());
        final RequestBodies bodies = new RequestBodies(which, modelName, context.stream(), context.ignoreEos(),
            context.tokenPrompts(), context.stream() && context.continuousUsage(), prompts).prefillDecode(twoHop);
        final Map<String, String> extra = new LinkedHashMap<>();
        if (null != context.apiKey())
        {
            extra.put("Authorization", "Bearer " + context.apiKey());
        }
        for (final String header : context.headers())
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
        if (!context.sweepServers().isEmpty())
        {
            final Map<String, String> servers = new LinkedHashMap<>();
            context.sweepServers().forEach((name, url) -> servers.put(name, url.toString()));
            target.put("servers", servers);
        }
        if (twoHop)
        {
            target.put("prefill_url", context.prefillUrl().toString());
            target.put("decode_url", context.decodeUrl().toString());
        }
        if (!context.scrapeMetrics().isEmpty())
        {
            target.put("metrics_scraped", context.scrapeMetrics().stream().map(URI::toString).toList());
        }
        target.put("gpus_per_server", context.gpusPerServer());
        target.put("model", modelName);
        target.put("endpoint", which.path());
        target.put("stream", context.stream());
        return new LoadJob.Settings(urls, twoHop ? context.prefillUrl() : null, target, optionsForReport(context),
            bodies, extra, context.clientThreads(), context.requestTimeoutNs(), objectives, sweepParameter, points,
            context.scrapeMetrics(), context.insecure(), context.report(), context.html(), context.progress(),
            context.sweepServers());
    }

    /**
     * What a run of these settings sends, before sweep points and request caps: the workload's requests (loaded by
     * {@link Workloads}, with its sessions unless {@code --sessions off}), or the rate or pool plan. Runs on the
     * calling thread; reads the workload file, touches no server.
     *
     * @param context the run's settings.
     * @return the plan.
     * @throws IOException if the workload cannot be read.
     */
    public static LoadPlan basePlan(final LoadContext context) throws IOException
    {
        return basePlan(context, context.replay().users(), 0);
    }

    private static LoadPlan basePlan(final LoadContext context, final int users, final int firstUser)
        throws IOException
    {
        if (null != context.workload())
        {
            Workload w = "auto".equalsIgnoreCase(context.format()) ? Workloads.load(context.workload()) :
                Workloads.load(context.workload(), WorkloadFormat.of(context.format()));
            w = context.inferSessions() ? w : w.withoutSessions();
            return LoadPlan.fromWorkload(context.replay().apply(w, users, firstUser), context.timeScale(), 0, 0,
                null == context.outputTokens() ? null : LengthDistribution.parse(context.outputTokens()),
                context.seed());
        }
        if (null != context.rate())
        {
            return LoadPlan.fromRate(context.rate(), ArrivalProcess.parse(context.arrivals()),
                null != context.durationNs() ? context.durationNs() / 1e9 : context.maxSeconds(),
                LengthDistribution.parse(context.promptTokens()), outputDistribution(context), context.seed(),
                context.maxRequests());
        }
        return LoadPlan.pool(Math.max(1, 0 == context.maxRequests() ? 10_000 : context.maxRequests()),
            LengthDistribution.parse(context.promptTokens()), outputDistribution(context), context.seed());
    }

    private static LengthDistribution outputDistribution(final LoadContext context)
    {
        return LengthDistribution.parse(null == context.outputTokens() ? "128" : context.outputTokens());
    }

    /**
     * @return {@code --model}, else the first model the server lists, warning of requests longer than its context.
     */
    private static String modelName(final LoadContext context, final URI first, final LoadPlan plan)
        throws IOException, InterruptedException
    {
        if (null != context.model())
        {
            return context.model();
        }
        final JsonNode served = discoverModel(context, first);
        warnOfLongRequests(plan, served.path("max_model_len").asLong(0), context.err());
        return served.path("id").asText();
    }

    /**
     * One line on {@code err} when some of the plan's requests need more context than the server serves (they would
     * fail with 400): how many, the longest, and the flag that fixes it.
     */
    private static void warnOfLongRequests(final LoadPlan plan, final long maxModelLen, final PrintStream err)
    {
        if (maxModelLen <= 0)
        {
            return;
        }
        long longest = 0;
        int tooLong = 0;
        for (final PlannedRequest request : plan.requests())
        {
            final long tokens = request.contextTokens();
            longest = Math.max(longest, tokens);
            tooLong += tokens > maxModelLen ? 1 : 0;
        }
        if (tooLong > 0)
        {
            err.printf(Locale.ROOT, "load: %d of %d requests need more than the server's max_model_len of %d tokens " +
                "(longest %d, prompt plus output): the server will refuse them with 400; serve with --max-model-len " +
                "%d or a model of a longer context%n", tooLong, plan.requests().size(), maxModelLen, longest, longest);
        }
    }

    /**
     * @return the first entry of the server's {@code /v1/models} ({@code id}, and {@code max_model_len} from vLLM).
     */
    private static JsonNode discoverModel(final LoadContext context, final URI first)
        throws IOException, InterruptedException
    {
        final HttpClient http = Tls.javaClient(context.insecure()).connectTimeout(Duration.ofSeconds(5)).build();
        final URI models = ServerUrl.parse("--url", first).resolve("/v1/models");
        final HttpRequest.Builder request = HttpRequest.newBuilder(models)
            .timeout(Duration.ofSeconds(10)).GET();
        if (null != context.apiKey())
        {
            request.header("Authorization", "Bearer " + context.apiKey());
        }
        final HttpResponse<String> response;
        try
        {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (final ConnectException ex)
        {
            throw new IOException("cannot reach " + first + " (is the server up?); or pass --model to skip asking it");
        }
        final JsonNode list = 200 == response.statusCode() ? new ObjectMapper().readTree(response.body()) : null;
        final JsonNode id = null == list ? null : list.path("data").path(0).path("id");
        if (null == id || id.isMissingNode())
        {
            throw new IOException(models + " gave no model (status " + response.statusCode() + "); pass --model");
        }
        return list.path("data").path(0);
    }

    /**
     * @return the settings under their CLI flags' names, for the report's {@code options} (the API key left out).
     */
    private static Map<String, Object> optionsForReport(final LoadContext c)
    {
        final Map<String, Object> options = new LinkedHashMap<>();
        put(options, "url", c.urls());
        put(options, "prefill-url", c.prefillUrl());
        put(options, "decode-url", c.decodeUrl());
        put(options, "workload", c.workload());
        put(options, "format", c.format());
        put(options, "time-scale", c.timeScale());
        put(options, "rate", c.rate());
        put(options, "arrivals", c.arrivals());
        put(options, "concurrency", c.concurrency());
        put(options, "sweep", c.sweep());
        put(options, "users", 0 == c.replay().users() ? null : c.replay().users());
        put(options, "fixed-schedule", c.replay().absoluteSchedule() ? true : null);
        put(options, "fixed-schedule-start-offset", c.replay().scheduleStartMs());
        put(options, "fixed-schedule-end-offset", c.replay().scheduleEndMs());
        put(options, "sweep-servers", c.sweepServers().isEmpty() ? null : c.sweepServers().toString());
        put(options, "prompt-tokens", c.promptTokens());
        put(options, "output-tokens", c.outputTokens());
        put(options, "duration", c.durationNs());
        put(options, "max-requests", c.maxRequests());
        put(options, "max-seconds", c.maxSeconds());
        put(options, "warmup", c.warmupSeconds());
        put(options, "model", c.model());
        put(options, "endpoint", c.endpoint().name().toLowerCase(Locale.ROOT));
        put(options, "stream", c.stream());
        put(options, "ignore-eos", c.ignoreEos());
        put(options, "prompt-format", c.tokenPrompts() ? "tokens" : "text");
        put(options, "cache-resistant", c.cacheResistant());
        put(options, "sessions", c.inferSessions() ? "auto" : "off");
        put(options, "tokenizer", c.tokenizerFile());
        put(options, "header", c.headers().isEmpty() ? null : c.headers());
        put(options, "request-timeout", c.requestTimeoutNs());
        put(options, "drain-timeout", c.drainTimeoutNs());
        put(options, "ramp-up", c.rampUpNs());
        put(options, "client-threads", c.clientThreads());
        put(options, "no-continuous-usage", !c.continuousUsage());
        put(options, "slo", c.slo());
        put(options, "seed", c.seed());
        put(options, "report", c.report());
        put(options, "html", c.html());
        put(options, "scrape-metrics", c.scrapeMetrics().isEmpty() ? null : c.scrapeMetrics());
        put(options, "insecure", c.insecure() ? Boolean.TRUE : null);
        put(options, "quiet", !c.progress());
        return options;
    }

    private static void put(final Map<String, Object> options, final String flag, final Object value)
    {
        if (null != value)
        {
            options.put(flag, String.valueOf(value));
        }
    }
}
