package dev.tapedeck.cli;

import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import picocli.CommandLine;

import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.load.ResultTable;
import dev.tapedeck.load.Slo;
import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.simulate.Simulate;
import dev.tapedeck.simulate.SimulateContext;
import dev.tapedeck.tokens.Tokenizer;

/**
 * {@code tapedeck simulate}: a workload through serve's engine in virtual time, reported as {@code load} reports a
 * measured run.
 */
@CommandLine.Command(
    name = "simulate",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Run a workload through the engine of serve (vLLM V1 scheduling, KV and prefix cache, the latency model) in " +
            "virtual time: no server, no sockets, the same steps; a report in load's schema and per-request " +
            "predictions in the trace schema.",
        "Example: tapedeck simulate --workload trace.jsonl --max-num-seqs 128 --report sim.json --html sim.html"})
public final class SimulateCommand implements Callable<Integer>
{
    @CommandLine.Option(names = "--workload", required = true, paramLabel = "FILE",
        description = "The workload or trace to run (every format load reads; docs/workloads.md).")
    Path workload;

    @CommandLine.Option(names = "--format", defaultValue = "auto", paramLabel = "FORMAT",
        description = "Workload format, as for load (default: ${DEFAULT-VALUE}).")
    String format;

    @CommandLine.Option(names = "--time-scale", defaultValue = "1.0", paramLabel = "X",
        description = "Multiply the workload's gaps and think times by X (default: ${DEFAULT-VALUE}).")
    double timeScale;

    @CommandLine.Option(names = "--max-requests", defaultValue = "0", paramLabel = "N",
        description = "Keep the first N requests (0 = all).")
    int maxRequests;

    @CommandLine.Option(names = "--max-seconds", defaultValue = "0", paramLabel = "S",
        description = "Keep requests arriving in the first S (scaled) seconds (0 = all).")
    double maxSeconds;

    @CommandLine.Option(names = "--output-tokens", paramLabel = "D",
        description = "Output lengths replacing the workload's: N, MIN..MAX, normal:MEAN,SD, lognormal:MEAN,SD.")
    String outputTokens;

    @CommandLine.Option(names = "--ignore-eos", description = "Generate exactly the planned output lengths.")
    boolean ignoreEos;

    @CommandLine.Option(names = "--sessions", defaultValue = "auto", paramLabel = "auto|off",
        description = "Run multi-turn sessions turn after turn, as load does; off issues every request at its " +
            "time stamp (default: ${DEFAULT-VALUE}).")
    String sessions;

    @CommandLine.Option(names = "--slo", paramLabel = "ttft_ms=..,itl_ms=..,tpot_ms=..,e2e_ms=..",
        description = "Objectives for goodput, as for load.")
    String slo;

    @CommandLine.Option(names = "--sweep", paramLabel = "NAME=V1,V2,...",
        description = "One run per value of an engine setting (max-num-seqs, max-num-batched-tokens, " +
            "kv-cache-size, long-prefill-token-threshold) or of users (concurrent users replaying the workload's " +
            "sessions); the report draws the Pareto frontier. Give it again as offload=on,off,noprefix to run " +
            "every level against each server mode: a CPU KV tier (--kv-offloading-size), none, no prefix caching " +
            "(a frontier and the cliff per mode).")
    java.util.List<String> sweep;

    @CommandLine.Mixin
    ReplayOptions replay = new ReplayOptions();

    @CommandLine.Option(names = "--model", paramLabel = "NAME",
        description = "Model name, for the report and the KV cache under --gpu-memory-gb (default: Qwen/Qwen3-8B).")
    String model;

    @CommandLine.Option(names = "--trace-out", paramLabel = "FILE",
        description = "Write one record per request in the trace schema (ttft_ms, itl_ms, cached_tokens, ...).")
    Path traceOut;

    @CommandLine.Option(names = "--report", paramLabel = "FILE", description = "Write the JSON report (load's schema).")
    Path report;

    @CommandLine.Option(names = "--html", paramLabel = "FILE", description = "Write the HTML report.")
    Path html;

    @CommandLine.Option(names = "--quiet", description = "Print nothing but errors.")
    boolean quiet;

    @CommandLine.Mixin
    EngineOptions engine = new EngineOptions();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        final String modelName = null == model ? engine.latency.defaultModel(ServeContext.DEFAULT_MODEL) : model;
        engine.capacityModel(modelName);
        final String mode = sessions.toLowerCase(Locale.ROOT);
        if (!"auto".equals(mode) && !"off".equals(mode))
        {
            throw new IllegalArgumentException("--sessions is auto or off, got '" + sessions + "'");
        }
        final SimulateContext context = new SimulateContext()
            .workload(workload)
            .format(format)
            .timeScale(timeScale)
            .maxRequests(maxRequests)
            .maxSeconds(maxSeconds)
            .outputTokens(outputTokens)
            .ignoreEos(ignoreEos)
            .inferSessions("auto".equals(mode))
            .seed(engine.template().seed())
            .slo(null == slo ? Slo.NONE : Slo.parse(slo))
            .engine(engine.template())
            .model(modelName)
            .traceOut(traceOut)
            .report(report)
            .html(html)
            .replay(replay.replay())
            .gpusPerEngine(engine.gpusPerEngine())
            .sizeContextToWorkload(!spec.commandLine().getParseResult().hasMatchedOption("--max-model-len"));
        for (final String axis : null == sweep ? java.util.List.<String>of() : sweep)
        {
            context.sweep(axis);
        }
        if (!quiet)
        {
            final dev.tapedeck.engine.EngineConfig config = context.engine();
            System.out.printf(Locale.ROOT, "engine: %s; KV cache %d blocks of %d tokens%s; frontend delay %.1f ms%n",
                config.latencyModel().describe(), config.kvCacheBlocks(), config.blockSize(),
                null == config.kvOffload() ? "" : String.format(Locale.ROOT, "; CPU tier (%s) %d blocks at %.0f GB/s",
                    config.kvOffload().connector(), config.kvOffload().capacityBlocks(config.blockSize()),
                    config.kvOffload().bytesPerSecond() / 1e9), config.frontendDelayNs() / 1e6);
        }
        if (null != engine.prefixCachingHashAlgo)
        {
            context.prefixCachingHashAlgo(BlockHashAlgo.of(engine.prefixCachingHashAlgo));
        }
        final long startNs = System.nanoTime();
        final ObjectNode result;
        try (Tokenizer tokenizer = null == engine.tokenizerFile ? null : Tokenizer.open(engine.tokenizerFile))
        {
            result = Simulate.run(context.tokenizer(tokenizer));
        }
        final double wallSeconds = (System.nanoTime() - startNs) / 1e9;
        if (!quiet)
        {
            ResultTable.print(result, System.out);
            double simulatedSeconds = 0;
            for (final JsonNode point : result.path("points"))
            {
                simulatedSeconds += point.path("measured_seconds").asDouble();
            }
            System.out.printf(Locale.ROOT, "simulated %.1f s in %.2f s of wall time: %.0f " +
                "simulated seconds per wall second%n", simulatedSeconds, wallSeconds,
                simulatedSeconds / Math.max(wallSeconds, 1e-9));
        }
        return LoadCommand.exitCode(result, null);
    }
}
