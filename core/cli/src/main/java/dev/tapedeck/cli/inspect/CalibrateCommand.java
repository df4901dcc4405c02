package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import picocli.CommandLine;

import dev.tapedeck.capture.TraceReplayRun;
import dev.tapedeck.cli.EngineOptions;
import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.load.Calibration;
import dev.tapedeck.load.CalibrationHtml;
import dev.tapedeck.load.KnobFitCheck;
import dev.tapedeck.load.LatencySide;
import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.trace.TraceReader;

/**
 * {@code tapedeck inspect calibrate PRED REAL} (or {@code TRACE} alone, against its replay through the engine in
 * virtual time or against a knob fit): quantile gates, KS distance and per-request APE between a predicted and a
 * measured run, as a table, JSON and an HTML page (docs/inspect.md). Exit code 0 when every gate passes, 1 when one
 * fails, 2 for bad input. Runs on the calling thread.
 */
@CommandLine.Command(
    name = "calibrate",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Compare a predicted run (PRED) with a measured one (REAL), each a trace (JSONL, gzip or plain) or a " +
            "tapedeck load JSON report (its first point): TTFT, ITL, E2E (and TPOT, queue time when both sides " +
            "have them) p50/p90/p99 relative error against a tolerance, KS distance, per-request APE.",
        "With one TRACE: replay its workload (arrivals, prompt and output lengths, prefixes) through tapedeck's " +
            "engine in virtual time with the engine and latency-model flags below, chosen and applied as simulate " +
            "does (step model, KV cache, frontend delay; --max-num-seqs and --block-size default to the trace's), " +
            "and compare (--against replay), or compare it with the knob model fitted to its TTFT and ITL mean and " +
            "spread (--against knob-fit, which takes --seed).",
        "Exit code 0 when every gate passes, 1 when one fails, 2 for bad input.",
        "Example: tapedeck inspect calibrate sim.jsonl real.jsonl --json cal.json --html cal.html"})
public final class CalibrateCommand implements Callable<Integer>
{
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Parameters(index = "0..1", arity = "1..2", paramLabel = "FILE",
        description = "PRED REAL (two traces or reports, in that order), or one TRACE for the knob-fit check.")
    List<Path> files;

    @CommandLine.Option(names = "--tolerance", paramLabel = "FRACTION",
        description = "Largest p50/p90/p99 relative error of every metric without its own tolerance " +
            "(default 0.25 for PRED REAL, end-to-end; 0.10 for one TRACE, model-level).")
    Double tolerance;

    @CommandLine.Option(names = "--metric-tolerance", paramLabel = "METRIC=FRACTION", split = ",",
        description = "Tolerance of one metric (ttft, itl, e2e, tpot, queue), e.g. ttft=0.1,e2e=0.3; repeatable.")
    Map<String, Double> metricTolerances = new LinkedHashMap<>();

    @CommandLine.Option(names = "--json", paramLabel = "FILE", description = "Also write the comparison as JSON.")
    Path json;

    @CommandLine.Option(names = "--html", paramLabel = "FILE",
        description = "Also write an HTML page with survival curves and Q-Q plots of TTFT, ITL and E2E.")
    Path html;

    @CommandLine.Option(names = "--against", paramLabel = "replay|knob-fit", defaultValue = "replay",
        description = "One TRACE: what predicts it (default ${DEFAULT-VALUE}).")
    String against;

    @CommandLine.Option(names = "--model", paramLabel = "NAME",
        description = "One TRACE, replay: the model whose measured profile, physics prediction (--gpu, " +
            "--tensor-parallel-size) and KV geometry the replay uses, as serve's --model (default: the trace's " +
            "meta model, else " + ServeContext.DEFAULT_MODEL + ").")
    String model;

    @CommandLine.Mixin
    EngineOptions engine = new EngineOptions();

    @CommandLine.Option(names = "--repeat", paramLabel = "N", defaultValue = "" + KnobFitCheck.DEFAULT_REPEAT,
        description = "One TRACE, knob-fit: draws per record (default ${DEFAULT-VALUE}).")
    int repeat;

    @Override
    public Integer call() throws IOException
    {
        final Map<LatencySide.Metric, Double> perMetric = Calibration.tolerances(metricTolerances);
        final Calibration.Result result;
        if (1 == files.size())
        {
            result = switch (against)
            {
                case "replay" -> replay(files.get(0), perMetric);
                case "knob-fit" -> knobFit(files.get(0), perMetric);
                default -> throw new IllegalArgumentException("--against must be replay or knob-fit, got '" +
                    against + "'");
            };
        }
        else
        {
            final LatencySide pred = LatencySide.read(files.get(0));
            final LatencySide real = LatencySide.read(files.get(1));
            result = Calibration.compare("two-file", pred, real,
                null == tolerance ? Calibration.END_TO_END_TOLERANCE : tolerance, perMetric);
        }
        spec.commandLine().getOut().print(Calibration.table(result));
        if (null != json)
        {
            final Path parent = json.toAbsolutePath().getParent();
            if (null != parent)
            {
                Files.createDirectories(parent);
            }
            JSON.writeValue(json.toFile(), Calibration.toJson(result));
            spec.commandLine().getOut().println("json: " + json);
        }
        if (null != html)
        {
            CalibrationHtml.write(result, html);
            spec.commandLine().getOut().println("html: " + html);
        }
        spec.commandLine().getOut().flush();
        return result.pass() ? 0 : 1;
    }

    private Calibration.Result replay(final Path file, final Map<LatencySide.Metric, Double> perMetric)
        throws IOException
    {
        requireTrace(file);
        return replay(file, engine, spec.commandLine().getParseResult(), model,
            null == tolerance ? Calibration.MODEL_LEVEL_TOLERANCE : tolerance, perMetric);
    }

    /**
     * Replay a trace's workload through the engine in virtual time and compare the replay with the trace.
     *
     * @param file the trace.
     * @param engine the engine flags (step model, KV cache, ...).
     * @param parsed what the command line gave (flags not given take the trace's values).
     * @param model the model, or null for the trace's.
     * @param tolerance the gates' tolerance.
     * @param perMetric tolerances of single metrics.
     * @return the comparison.
     * @throws IOException when the trace cannot be read.
     */
    static Calibration.Result replay(final Path file, final EngineOptions engine, final CommandLine.ParseResult parsed,
        final String model, final double tolerance, final Map<LatencySide.Metric, Double> perMetric)
        throws IOException
    {
        final TraceReader.Trace trace = TraceReader.readAll(file);
        final String modelName = null != model ? model : null != trace.meta().model() ? trace.meta().model() :
            ServeContext.DEFAULT_MODEL;
        final EngineConfig config = engine.capacityModel(modelName).replayTemplate(parsed,
            trace.meta().maxNumSeqs(), trace.meta().blockSize());
        final TraceReplayRun.Result run;
        try
        {
            run = TraceReplayRun.replay(trace.records(), config);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(file + ": " + ex.getMessage(), ex);
        }
        final List<String> notes = new ArrayList<>(trace.warnings());
        final int left = trace.records().size() - run.source().size();
        if (left > 0)
        {
            notes.add(left + " of " + trace.records().size() + " records have no arrival_ms and were not replayed");
        }
        if (run.refused() > 0)
        {
            notes.add("the engine refused " + run.refused() + " requests (longer than the context, or a full queue)");
        }
        final LatencySide replayed = LatencySide.ofTrace(String.format(Locale.ROOT, "replay of %s through %s " +
            "(max-num-seqs %d, max-num-batched-tokens %d, block size %d, prefix caching %s, KV cache %d blocks, " +
            "frontend delay %.1f ms, spread %.2f, seed %d)", file, config.latencyModel().describe(),
            config.maxNumSeqs(), config.maxNumBatchedTokens(), config.blockSize(),
            config.enablePrefixCaching() ? "on" : "off", config.kvCacheBlocks(), config.frontendDelayNs() / 1e6,
            config.frontendDelayJitter(), config.seed()), run.replayed());
        final LatencySide source = LatencySide.ofTrace(file.toString(), run.source());
        notes.addAll(source.notes());
        return Calibration.compare("replay", new LatencySide(replayed.name(), "replay", replayed.metrics(),
            replayed.requests(), List.of()), new LatencySide(source.name(), "trace", source.metrics(),
            source.requests(), notes), tolerance, perMetric);
    }

    private static LatencySide requireTrace(final Path file) throws IOException
    {
        final LatencySide side = LatencySide.read(file);
        if (!"trace".equals(side.kind()))
        {
            throw new IllegalArgumentException(file + ": one file must be a trace (a load report has no workload " +
                "to replay and no per-request samples); give PRED and REAL to compare two reports");
        }
        return side;
    }

    private Calibration.Result knobFit(final Path file, final Map<LatencySide.Metric, Double> perMetric)
        throws IOException
    {
        final LatencySide trace = requireTrace(file);
        if (!trace.metrics().containsKey(LatencySide.Metric.ITL))
        {
            throw new IllegalArgumentException(file + ": no record has token gaps (itl_ms or itl_summary); the knob " +
                "model needs ITL samples");
        }
        return KnobFitCheck.check(trace, TraceReader.readAll(file).records(), repeat, engine.seed(),
            null == tolerance ? Calibration.MODEL_LEVEL_TOLERANCE : tolerance, perMetric);
    }
}
