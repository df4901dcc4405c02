package dev.tapedeck.simulate;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.capture.CaptureObserver;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.load.HtmlReport;
import dev.tapedeck.load.LengthDistribution;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.LoadReport;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.load.PromptWords;
import dev.tapedeck.load.RunResult;
import dev.tapedeck.tokens.BuiltinTokenSpace;
import dev.tapedeck.tokens.Tokenizer;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceWriter;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadFormat;
import dev.tapedeck.workload.Workloads;

/**
 * {@code tapedeck simulate}: a workload through the engine of {@code serve} in virtual time. The plan is built as
 * {@code load} builds it (same formats, sessions, time scale, limits and output overrides); the prompts are the token
 * ids {@code load --prompt-format tokens} sends; the report has {@code load}'s schema and HTML, one point per run (per
 * level of a {@code --sweep}), so a predicted and a measured run lie side by side; {@code --trace-out} writes one
 * record per request in the trace schema, as {@code serve --trace-out} captures them. The same context gives the same
 * bytes: time is virtual and the report's {@code created} is the epoch.
 * <p>
 * Runs on the caller's thread.
 */
public final class Simulate
{
    private Simulate()
    {
    }

    /**
     * Run the simulation and write what the context asks for.
     *
     * @param context the settings.
     * @return the report ({@code load}'s schema).
     * @throws IOException if the workload cannot be read or an output cannot be written.
     * @throws IllegalArgumentException if a setting is invalid.
     */
    public static ObjectNode run(final SimulateContext context) throws IOException
    {
        context.conclude();
        Workload workload = "auto".equalsIgnoreCase(context.format()) ? Workloads.load(context.workload()) :
            Workloads.load(context.workload(), WorkloadFormat.of(context.format()));
        workload = context.inferSessions() ? workload : workload.withoutSessions();
        // the built-in tokenizer's words and token space are read from resources: simulate never tokenises text, so
        // the o200k encoding is not loaded (half a second of start-up)
        final Tokenizer tokenizer = context.tokenizer();
        final PromptWords words = null == tokenizer ? PromptWords.builtin() : PromptWords.of(tokenizer);
        final List<LoadReport.Point> points = new ArrayList<>();
        final List<ObjectNode> kvFigures = new ArrayList<>();
        final String parameter = context.sweepParameter();
        final List<String> modes = context.offloadModes().isEmpty() ? java.util.Collections.singletonList(null) :
            context.offloadModes();
        final LoadPlan basePlan = plan(context, workload, context.replay().users());
        final int contextLength = contextLength(context, basePlan);
        for (final String mode : modes)
        {
            final String prefix = null == mode ? "" : "offload=" + mode;
            if (null == parameter)
            {
                final EngineConfig config = withMode(engineConfig(context, tokenizer, null, 0, contextLength), mode);
                final SimulationRun run = new SimulationRun(basePlan, prompts(context, words, basePlan),
                    context.slo(), context.ignoreEos());
                final RunResult result = null == mode ? runTraced(context, run, config) :
                    run.run(config.conclude(), prefix);
                points.add(new LoadReport.Point(result, Double.NaN, null));
                kvFigures.add(kvFigures(run));
                continue;
            }
            for (final int value : context.sweepValues())
            {
                final boolean users = "users".equals(parameter);
                final LoadPlan plan = users ? plan(context, workload, value) : basePlan;
                final EngineConfig config = withMode(engineConfig(context, tokenizer, users ? null : parameter,
                    value, contextLength), mode);
                final SimulationRun run = new SimulationRun(plan, prompts(context, words, plan), context.slo(),
                    context.ignoreEos());
                points.add(new LoadReport.Point(run.run(config.conclude(), (prefix.isEmpty() ? "" : prefix + " ") +
                    parameter + "=" + value), value, null));
                kvFigures.add(kvFigures(run));
            }
        }
        final EngineConfig described = engineConfig(context, tokenizer, null, 0, contextLength);
        final ObjectNode report = LoadReport.build(target(context, described), options(context, basePlan),
            context.slo(), null == parameter && !context.offloadModes().isEmpty() ? "offload" : parameter, points,
            Instant.EPOCH);
        for (int i = 0; i < points.size(); i++)
        {
            final ObjectNode point = (ObjectNode)report.path("points").get(i);
            point.set("kv_cache", kvFigures.get(i));
            if (!context.offloadModes().isEmpty())
            {
                point.put("series", "offload=" + modes.get(i / Math.max(1, context.sweepValues().size())));
            }
        }
        if (!context.offloadModes().isEmpty() && null != parameter)
        {
            dev.tapedeck.load.SweepSeries.analyse(report);
        }
        if (null != context.report())
        {
            LoadReport.write(report, context.report());
        }
        if (null != context.html())
        {
            HtmlReport.write(report, context.html());
        }
        return report;
    }

    /**
     * The engine's context length: the template's, raised to the plan's longest request (prompt plus output) when the
     * context asks for it (no {@code --max-model-len}), but never past what the KV cache holds.
     */
    private static int contextLength(final SimulateContext context, final LoadPlan plan)
    {
        final EngineConfig template = context.engine();
        if (!context.sizeContextToWorkload())
        {
            return template.maxModelLen();
        }
        long longest = 0;
        for (final dev.tapedeck.load.PlannedRequest request : plan.requests())
        {
            longest = Math.max(longest, request.contextTokens());
        }
        final long kvTokens = (long)template.kvCacheBlocks() * template.blockSize();
        return (int)Math.max(template.maxModelLen(), Math.min(longest, kvTokens));
    }

    private static LoadPlan plan(final SimulateContext context, final Workload workload, final int users)
    {
        return LoadPlan.fromWorkload(context.replay().apply(workload, users, 0), context.timeScale(),
            context.maxRequests(), context.maxSeconds(), null == context.outputTokens() ? null :
                LengthDistribution.parse(context.outputTokens()), context.seed());
    }

    /**
     * A server mode of {@code --sweep offload=...}: {@code on} keeps the template's CPU tier, {@code off} drops it,
     * {@code noprefix} drops it and prefix caching with it; null leaves the template as it is.
     */
    private static EngineConfig withMode(final EngineConfig config, final String mode)
    {
        if (null == mode || "on".equals(mode))
        {
            return config;
        }
        config.kvOffload(null);
        return "noprefix".equals(mode) ? config.enablePrefixCaching(false) : config;
    }

    /** The run's KV figures: prefix hits by tier, the CPU tier's traffic, preemptions. */
    private static ObjectNode kvFigures(final SimulationRun run)
    {
        final dev.tapedeck.metrics.EngineMetrics metrics = run.metrics();
        final ObjectNode kv = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        final long queries = metrics.prefixCacheQueries();
        kv.put("prompt_tokens_queried", queries);
        kv.put("gpu_hit_tokens", metrics.prefixCacheHits());
        kv.put("cpu_hit_tokens", metrics.externalPrefixCacheHits());
        kv.put("gpu_hit_rate", queries > 0 ? round((double)metrics.prefixCacheHits() / queries) : 0);
        kv.put("cpu_hit_rate", queries > 0 ? round((double)metrics.externalPrefixCacheHits() / queries) : 0);
        kv.put("hit_rate", queries > 0 ? round((double)(metrics.prefixCacheHits() +
            metrics.externalPrefixCacheHits()) / queries) : 0);
        final dev.tapedeck.metrics.OffloadMetrics offload = metrics.offload();
        kv.put("offload_stored_bytes", null == offload ? 0 : offload.bytes(0));
        kv.put("offload_loaded_bytes", null == offload ? 0 : offload.bytes(1));
        kv.put("preemptions", metrics.numPreemptions());
        return kv;
    }

    private static double round(final double value)
    {
        return Math.round(value * 10_000) / 10_000.0;
    }

    private static PromptFactory prompts(final SimulateContext context, final PromptWords words, final LoadPlan plan)
    {
        return new PromptFactory(words, context.seed(), plan.blockSize(), false);
    }

    private static RunResult runTraced(final SimulateContext context, final SimulationRun run,
        final EngineConfig config) throws IOException
    {
        if (null == context.traceOut())
        {
            return run.run(config.conclude(), "run");
        }
        final TraceMeta meta = new TraceMeta().model(context.model()).source("tapedeck simulate")
            .blockSize((long)config.blockSize()).maxNumSeqs((long)config.maxNumSeqs());
        try (TraceWriter writer = TraceWriter.open(context.traceOut(), meta))
        {
            config.requestObserver(new CaptureObserver(0, false, config.blockSize(), record ->
            {
                try
                {
                    writer.write(record, false);
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex);
                }
            }));
            return run.run(config.conclude(), "run");
        }
        catch (final UncheckedIOException ex)
        {
            throw ex.getCause();
        }
    }

    /** The engine of a run; {@code tokenizer} null for the built-in one. */
    private static EngineConfig engineConfig(final SimulateContext context, final Tokenizer tokenizer,
        final String parameter, final int value, final int contextLength)
    {
        final int[] randomTokenIds = null == tokenizer ? BuiltinTokenSpace.randomTokenIds() :
            tokenizer.vocabulary().randomTokenIds();
        final EngineConfig config = context.engine().copy()
            .tokenSpace(randomTokenIds, null == tokenizer ? BuiltinTokenSpace.eosTokenId() : tokenizer.eosTokenId())
            .prefixCachingHashAlgo(context.prefixCachingHashAlgo())
            .maxModelLen(contextLength);
        config.maxNumBatchedTokens(EngineConfig.stepBudget(config.enableChunkedPrefill(), config.maxNumBatchedTokens(),
            contextLength));
        if (null != parameter)
        {
            switch (parameter)
            {
                case "max-num-seqs" -> config.maxNumSeqs(value);
                case "max-num-batched-tokens" -> config.maxNumBatchedTokens(
                    EngineConfig.stepBudget(config.enableChunkedPrefill(), value, config.maxModelLen()));
                case "kv-cache-size" -> config.kvCacheBlocks(value);
                default -> config.longPrefillTokenThreshold(value);
            }
        }
        return config;
    }

    private static Map<String, Object> target(final SimulateContext context, final EngineConfig config)
    {
        final Map<String, Object> target = new LinkedHashMap<>();
        target.put("simulated", true);
        target.put("model", context.model());
        target.put("latency_model", config.latencyModel().describe());
        target.put("gpus_per_server", context.gpusPerEngine());
        final Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("max_num_seqs", config.maxNumSeqs());
        engine.put("max_num_batched_tokens", config.maxNumBatchedTokens());
        engine.put("max_model_len", config.maxModelLen());
        engine.put("block_size", config.blockSize());
        engine.put("kv_cache_blocks", config.kvCacheBlocks());
        engine.put("enable_prefix_caching", config.enablePrefixCaching());
        engine.put("seed", config.seed());
        target.put("engine", engine);
        return target;
    }

    private static Map<String, Object> options(final SimulateContext context, final LoadPlan plan)
    {
        final Map<String, Object> options = new LinkedHashMap<>();
        options.put("workload", context.workload().getFileName().toString());
        options.put("format", context.format());
        options.put("time_scale", context.timeScale());
        options.put("max_requests", context.maxRequests());
        options.put("max_seconds", context.maxSeconds());
        options.put("output_tokens", context.outputTokens());
        options.put("ignore_eos", context.ignoreEos());
        options.put("sessions", context.inferSessions() ? "auto" : "off");
        options.put("seed", context.seed());
        options.put("requests", plan.requests().size());
        return options;
    }
}
