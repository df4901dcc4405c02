package dev.tapedeck.simulate.fit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.RooflineCoefficients;
import dev.tapedeck.latency.RooflineProfile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The physics fit on data whose answer is known (stages "measured" by replaying them with known corrections are
 * fitted back to predictions within a few percent), and the shipped H100 profiles against the real runs they were
 * fitted to (read from ../shared, never copied; skipped where the data is absent).
 */
class RooflineFitTest
{
    private static final Path BLIS = Path.of("../../../shared/data/fidelity/blis-training-feb2026/default_args");
    private static final GpuSpec H100 = GpuSpec.lookup("H100");

    private static BlisExperiment measured(final BlisExperiment shape, final RooflineFit.Fitted truth)
    {
        final List<BlisExperiment.Stage> stages = new ArrayList<>();
        final List<StageReplay.Predicted> run = StageReplay.run(shape,
            new RooflineProfile("truth", RooflineFit.architecture(shape), H100, shape.tensorParallel(),
                truth.coefficients(), 0, 0, "test").latencyModel(), Math.round(truth.frontendUs() * 1000),
            truth.frontendJitter(),
            RooflineFit.kvCacheBlocks(RooflineFit.architecture(shape), H100, shape.tensorParallel()), 0);
        for (int s = 0; s < run.size(); s++)
        {
            final StageReplay.Predicted p = run.get(s);
            stages.add(new BlisExperiment.Stage(shape.stages().get(s).ratePerS(), 40,
                shape.stages().get(s).promptTokens(), p.requests(), 0, p.ttftMeanMs(), p.ttftP99Ms(), p.e2eMeanMs(),
                p.e2eP99Ms()));
        }
        return shape.withStages(stages);
    }

    private static BlisExperiment shape(final String name, final String model, final int tp, final double... rates)
    {
        final List<BlisExperiment.Stage> stages = new ArrayList<>();
        for (final double rate : rates)
        {
            stages.add(new BlisExperiment.Stage(rate, 40, 600, 0, 0, 1, 1, 1, 1));
        }
        return new BlisExperiment(name, model, tp, 4096, 2048, 128, 8, 4, 100, 200, stages);
    }

    @Test
    void fittingRunsMadeByKnownCorrectionsPredictsThemAgain()
    {
        final RooflineFit.Fitted truth = new RooflineFit.Fitted(
            new RooflineCoefficients("truth", 300, 12, 4, 1.3, 1.25, 1.3, 1.5, 3, 1 / 0.9, 0), 15_000, 0.5);
        final List<BlisExperiment> observed = List.of(
            measured(shape("synthetic-7b", "meta-llama/Llama-2-7b-hf", 1, 6, 18), truth),
            measured(shape("synthetic-70b", "meta-llama/Llama-2-70b-hf", 4, 6, 16), truth),
            measured(shape("synthetic-moe", "mistralai/Mixtral-8x7B-v0.1", 2, 5, 12), truth));
        final RooflineFit.Fitted fitted = RooflineFit.fit(observed, H100, RooflineFit.DATA_SHEET, "fitted", 0, 12);
        assertEquals(0.5, fitted.frontendJitter(), 0.15, "the spread found back from the p99 TTFTs");
        for (final StageReplay.Comparison c : RooflineFit.compareAll(observed, H100, fitted, 0))
        {
            assertTrue(c.ape() < ("ttft_p99".equals(c.metric()) ? 10 : 5), c + " with " + fitted);
        }
    }

    @Test
    void theShippedH100ProfilesReproduceTheRunsTheyWereFittedTo() throws Exception
    {
        assumeTrue(Files.isDirectory(BLIS), "the BLIS training data is not here (../shared/data/fidelity): " + BLIS);
        for (final RooflineProfile profile : RooflineProfile.MEASURED)
        {
            final String model = profile.name().substring(0, profile.name().indexOf("-tp"));
            final List<BlisExperiment> runs = BlisExperiment.readAll(BLIS, model).stream()
                .filter(e -> !e.overloaded()).toList();
            final List<Double> itl = new ArrayList<>();
            final List<Double> ttft = new ArrayList<>();
            for (final StageReplay.Comparison c : RooflineFit.compareAll(runs, H100,
                new RooflineFit.Fitted(profile.coefficients(), profile.frontendDelayNs() / 1000.0,
                    profile.frontendDelayJitter()), 60))
            {
                if ("itl_mean".equals(c.metric()))
                {
                    itl.add(c.ape());
                }
                else if ("ttft_mean".equals(c.metric()))
                {
                    ttft.add(c.ape());
                }
            }
            assertTrue(median(itl) < 5, profile.name() + " ITL mean APEs " + itl);
            assertTrue(median(ttft) < 10, profile.name() + " TTFT mean APEs " + ttft);
        }
    }

    private static double median(final List<Double> values)
    {
        final List<Double> sorted = values.stream().sorted().toList();
        final int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
