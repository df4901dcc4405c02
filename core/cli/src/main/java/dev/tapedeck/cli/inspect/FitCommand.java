package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.RooflineProfile;
import dev.tapedeck.latency.StepProfileFile;
import dev.tapedeck.simulate.fit.BlisExperiment;
import dev.tapedeck.simulate.fit.RooflineFit;
import dev.tapedeck.simulate.fit.StageReplay;
import dev.tapedeck.simulate.fit.StepFit;

/**
 * {@code tapedeck inspect fit (--blis DIR --model M | --requests FILE | --trace FILE[,FILE...]) --out PROFILE.json}:
 * fit the step model to measurements of a real vLLM server and write a profile file that {@code --step-profile FILE}
 * loads. From inference-perf runs (BLIS layout) it replays them in virtual time and fits the frontend delay too, and
 * prints how well each stage is predicted; from per-request engine timestamps ({@link RequestsFitSource}) or traces
 * with per-gap step context ({@link TraceFitSource}) it solves least squares. Runs on the calling thread.
 */
@CommandLine.Command(
    name = "fit",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Fit the step model (base, per prefill token, per decode, per 1k context tokens) to measurements of a real " +
            "vLLM server and write a profile file for --step-profile. Exactly one source:",
        "--blis: inference-perf runs (BLIS training layout: exp-config.yaml, profile.yaml, " +
            "results/stage_N_lifecycle_metrics.json), their stages replayed in virtual time, the frontend delay " +
            "fitted too; prints the in-sample error of every stage. With --roofline, fit the physics step model " +
            "(corrections on the data-sheet roofline of the model's architecture and the GPU) instead.",
        "--requests: per-request engine timestamps (LLMServingSim requests.jsonl: queued, scheduled, first and last " +
            "token); one equation per request's decode window.",
        "--trace: traces whose records carry itl_ms with itl_ctx (vllm-vcr's tap, tapedeck --trace-out); one " +
            "equation per one-token gap (one step).",
        "Example: tapedeck inspect fit --blis training/default_args --model llama-2-7b --out llama-2-7b-h100.json",
        "         tapedeck inspect fit --blis training/default_args --model llama-2-70b --roofline --out l70.json",
        "         tapedeck inspect fit --requests RTXPRO6000_Llama-3.1-8B/requests.jsonl --out l8.json",
        "         tapedeck inspect fit --trace capture.jsonl.gz --out captured.json"})
public final class FitCommand implements Callable<Integer>
{
    private static final String[] METRICS = {"ttft_mean", "ttft_p99", "itl_mean", "e2e_mean"};

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.ArgGroup(exclusive = true, multiplicity = "1")
    Source source;

    /** The one measurement to fit. */
    static final class Source
    {
        @CommandLine.Option(names = "--blis", required = true, paramLabel = "DIR",
            description = "A directory of inference-perf experiment directories (needs --model).")
        Path blis;

        @CommandLine.Option(names = "--requests", required = true, paramLabel = "FILE",
            description = "Per-request engine timestamps of one run (LLMServingSim requests.jsonl).")
        Path requests;

        @CommandLine.Option(names = "--trace", required = true, split = ",", paramLabel = "FILE",
            description = "Traces with itl_ms and itl_ctx, each its own capture (comma-separated; gzip recognised).")
        List<Path> traces;
    }

    @CommandLine.Option(names = "--model", paramLabel = "SUBSTRING",
        description = "With --blis (required there): fit the experiments whose directory names contain this " +
            "(e.g. llama-2-7b).")
    String model;

    @CommandLine.Option(names = "--out", required = true, paramLabel = "FILE",
        description = "The profile file to write.")
    Path out;

    @CommandLine.Option(names = "--name", paramLabel = "NAME",
        description = "The profile's name (default: MODEL-fitted; RUN-fitted for --requests RUN/requests.jsonl; " +
            "the first trace's name plus -fitted for --trace).")
    String name;

    @CommandLine.Option(names = "--seconds-per-stage", defaultValue = "120", paramLabel = "S",
        description = "Replay the first S seconds of each stage (the servers reach their steady state within " +
            "seconds; default: ${DEFAULT-VALUE}).")
    double secondsPerStage;

    @CommandLine.Option(names = "--evaluations", defaultValue = "150", paramLabel = "N",
        description = "The search's budget of replays (default: ${DEFAULT-VALUE}).")
    int evaluations;

    @CommandLine.Option(names = "--kv-cache-size", defaultValue = "20000", paramLabel = "BLOCKS",
        description = "The replayed engine's KV blocks, linear model (default: ${DEFAULT-VALUE}; the physics model " +
            "sizes each run's cache from its model and GPU).")
    int kvCacheBlocks;

    @CommandLine.Option(names = "--roofline",
        description = "Fit the physics step model instead: its corrections across every run under --blis first, " +
            "then the --model runs' own, pulled towards those; the profile carries the model's architecture, GPU and " +
            "tensor-parallel size.")
    boolean roofline;

    @CommandLine.Option(names = "--gpu", defaultValue = "H100", paramLabel = "NAME",
        description = "The GPU the runs were measured on, for --roofline (default: ${DEFAULT-VALUE}).")
    String gpu;

    @CommandLine.Option(names = "--rounds", defaultValue = "12", paramLabel = "N",
        description = "Replay-and-solve rounds of the --roofline fit (default: ${DEFAULT-VALUE}).")
    int rounds;

    @CommandLine.Option(names = "--no-context-term",
        description = "With --requests or --trace: fit no KV-context term; the per-decode term absorbs the " +
            "attention cost (the two are nearly collinear when context lengths vary little).")
    boolean noContextTerm;

    @Override
    public Integer call() throws IOException
    {
        final PrintWriter print = spec.commandLine().getOut();
        if (null == source.blis)
        {
            if (null != model || roofline)
            {
                throw new CommandLine.ParameterException(spec.commandLine(),
                    "--model and --roofline go with --blis only");
            }
            if (null != source.requests)
            {
                RequestsFitSource.fit(source.requests, out, name, !noContextTerm, print);
            }
            else
            {
                TraceFitSource.fit(source.traces, out, name, !noContextTerm, print);
            }
            return 0;
        }
        if (null == model)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--blis needs --model");
        }
        if (noContextTerm)
        {
            throw new CommandLine.ParameterException(spec.commandLine(),
                "--no-context-term goes with --requests or --trace");
        }
        return fitBlis(source.blis, print);
    }

    private int fitBlis(final Path data, final PrintWriter print) throws IOException
    {
        if (!Files.isDirectory(data))
        {
            throw new IOException(data + ": no such directory");
        }
        final List<BlisExperiment> all = BlisExperiment.readAll(data, model);
        final List<BlisExperiment> usable = all.stream().filter(e -> !e.overloaded()).toList();
        if (usable.isEmpty())
        {
            throw new IllegalArgumentException("no experiment under " + data + " matches '" + model + "' (" +
                all.size() + " overloaded ones excluded)");
        }
        final String profileName = null == name ? model + "-fitted" : name;
        final ObjectNode provenance = JsonNodeFactory.instance.objectNode();
        final List<StageReplay.Comparison> comparisons = new ArrayList<>();
        final RooflineProfile physics;
        final StepFit.Fitted fitted;
        if (roofline)
        {
            physics = fitRoofline(data, usable, profileName, provenance, comparisons);
            fitted = null;
        }
        else
        {
            fitted = StepFit.fit(usable, profileName, kvCacheBlocks, secondsPerStage, evaluations);
            for (final BlisExperiment e : usable)
            {
                comparisons.addAll(StepFit.compare(e, fitted, kvCacheBlocks, secondsPerStage));
            }
            provenance.put("method", "tapedeck inspect fit: the stages replayed in virtual time, Nelder-Mead over " +
                "the log-coefficients minimising the squared log error of mean TTFT, ITL, E2E and p99 TTFT");
            provenance.put("evaluations", evaluations);
            provenance.put("kv_cache_blocks", kvCacheBlocks);
            physics = null;
        }
        final Map<String, List<Double>> apes = new LinkedHashMap<>();
        for (final String metric : METRICS)
        {
            apes.put(metric, new ArrayList<>());
        }
        print.printf(Locale.ROOT, "%-48s %5s %-9s %10s %10s %7s%n", "experiment", "stage", "metric", "real ms",
            "pred ms", "APE");
        for (final StageReplay.Comparison c : comparisons)
        {
            apes.get(c.metric()).add(c.ape());
            print.printf(Locale.ROOT, "%-48s %5d %-9s %10.2f %10.2f %6.1f%%%n", c.experiment(), c.stage(),
                c.metric(), c.measured(), c.predicted(), c.ape());
        }
        provenance.put("data", data.toAbsolutePath().normalize().toString());
        provenance.putPOJO("experiments", usable.stream().map(BlisExperiment::name).toList());
        provenance.putPOJO("excluded_overloaded", all.stream().filter(BlisExperiment::overloaded)
            .map(BlisExperiment::name).toList());
        provenance.put("seconds_per_stage", secondsPerStage);
        final ObjectNode median = provenance.putObject("in_sample_median_ape_pct");
        for (final Map.Entry<String, List<Double>> entry : apes.entrySet())
        {
            final double value = median(entry.getValue());
            median.put(entry.getKey(), Math.round(value * 10) / 10.0);
            print.printf(Locale.ROOT, "median APE %-9s %6.1f%% (in sample)%n", entry.getKey(), value);
        }
        if (null != physics)
        {
            StepProfileFile.write(out, physics, provenance);
            print.printf(Locale.ROOT, "profile: %s (%s on %dx %s, %s, frontend delay %.1f ms, jitter %.1f)%n", out,
                physics.model().name(), physics.tensorParallel(), physics.gpu().name(), physics.coefficients(),
                physics.frontendDelayNs() / 1e6, physics.frontendDelayJitter());
        }
        else
        {
            StepProfileFile.write(out, fitted.coefficients(), Math.round(fitted.frontendUs() * 1000), provenance);
            print.printf(Locale.ROOT, "profile: %s (%s, frontend delay %.1f ms)%n", out, fitted.coefficients(),
                fitted.frontendUs() / 1000);
        }
        print.flush();
        return 0;
    }

    private RooflineProfile fitRoofline(final Path data, final List<BlisExperiment> usable, final String profileName,
        final ObjectNode provenance, final List<StageReplay.Comparison> comparisons) throws IOException
    {
        final GpuSpec onGpu = GpuSpec.lookup(gpu);
        final int tp = usable.get(0).tensorParallel();
        if (usable.stream().anyMatch(e -> e.tensorParallel() != tp || !e.model().equals(usable.get(0).model())))
        {
            throw new IllegalArgumentException("the runs matching '" + model + "' are of more than one model or " +
                "tensor-parallel size; narrow --model");
        }
        final ModelArchitecture architecture = RooflineFit.architecture(usable.get(0));
        final List<BlisExperiment> everything = new ArrayList<>();
        for (final BlisExperiment e : BlisExperiment.readAll(data, ""))
        {
            if (e.overloaded())
            {
                continue;
            }
            if (null == ModelArchitecture.lookup(e.model()))
            {
                spec.commandLine().getErr().println("inspect fit: leaving " + e.name() + " out of the fit across " +
                    "models: no built-in architecture for " + e.model());
                continue;
            }
            everything.add(e);
        }
        final RooflineFit.Fitted across = RooflineFit.fit(everything, onGpu, RooflineFit.DATA_SHEET,
            "across-models", secondsPerStage, rounds);
        final RooflineFit.Fitted own = RooflineFit.fit(usable, onGpu, across, profileName, secondsPerStage,
            rounds);
        final RooflineProfile physics = new RooflineProfile(profileName, architecture, onGpu, tp, own.coefficients(),
            Math.round(own.frontendUs() * 1000), own.frontendJitter(),
            "fitted by tapedeck inspect fit --roofline to " + usable.size() + " runs of " + usable.get(0).model() +
                " on " + tp + "x " + onGpu.name());
        comparisons.addAll(RooflineFit.compareAll(usable, onGpu, own, secondsPerStage));
        provenance.put("method", "tapedeck inspect fit --roofline: the physics step model's corrections by " +
            "successive linear least squares over replays in virtual time, first across every run, then this " +
            "model's runs pulled towards that fit");
        provenance.put("across_models", across.coefficients().toString());
        provenance.put("across_models_frontend_us", across.frontendUs());
        provenance.put("across_models_frontend_jitter", across.frontendJitter());
        provenance.putPOJO("across_models_experiments", everything.stream().map(BlisExperiment::name).toList());
        provenance.put("rounds", rounds);
        return physics;
    }

    private static double median(final List<Double> values)
    {
        final List<Double> sorted = values.stream().sorted().toList();
        return sorted.isEmpty() ? Double.NaN : sorted.size() % 2 == 1 ? sorted.get(sorted.size() / 2) :
            (sorted.get(sorted.size() / 2 - 1) + sorted.get(sorted.size() / 2)) / 2;
    }
}
