package dev.tapedeck.simulate.fit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The fitting method on data whose answer is known: stages "measured" by replaying them with known coefficients are
 * fitted back to predictions within a few percent; and a real BLIS experiment (read from ../shared, never copied)
 * is parsed to the values its files hold.
 */
class StepFitTest
{
    private static final Path BLIS = Path.of("../../../shared/data/fidelity/blis-training-feb2026/default_args");

    private static BlisExperiment.Stage measured(final StageReplay.Predicted p, final double rate, final int prompt)
    {
        return new BlisExperiment.Stage(rate, 60, prompt, p.requests(), 0, p.ttftMeanMs(), p.ttftP99Ms(),
            p.e2eMeanMs(), p.e2eP99Ms());
    }

    @Test
    void fittingStagesMadeByKnownCoefficientsPredictsThemAgain()
    {
        final StepCoefficients truth = new StepCoefficients("truth", 7000, 30, 80, 2, 0, "test");
        final BlisExperiment shape = new BlisExperiment("synthetic-general", "m", 1, 4096, 2048, 128, 4, 4, 100, 120,
            List.of(new BlisExperiment.Stage(4, 60, 500, 0, 0, 1, 1, 1, 1),
                new BlisExperiment.Stage(12, 60, 500, 0, 0, 1, 1, 1, 1)));
        final List<StageReplay.Predicted> truthRun =
            StageReplay.run(shape, new StepLatencyModel(truth), 0, 0, 20_000, 20);
        final BlisExperiment observed = new BlisExperiment("synthetic-general", "m", 1, 4096, 2048, 128, 4, 4, 100,
            120, List.of(measured(truthRun.get(0), 4, 500), measured(truthRun.get(1), 12, 500)));
        final StepFit.Fitted fitted = StepFit.fit(List.of(observed), "fitted", 20_000, 20, 150);
        for (final StageReplay.Comparison comparison : StepFit.compare(observed, fitted, 20_000, 20))
        {
            if (!"ttft_p99".equals(comparison.metric()))
            {
                assertTrue(comparison.ape() < 5, comparison + " with " + fitted);
            }
        }
    }

    @Test
    void aRealExperimentIsReadAsItsFilesSay() throws Exception
    {
        final Path dir = BLIS.resolve("20260217-155451-llama-2-7b-tp1-codegen");
        assumeTrue(Files.isDirectory(dir), "the BLIS training data is not here (../shared/data/fidelity): " + dir);
        final BlisExperiment e = BlisExperiment.read(dir);
        assertEquals("meta-llama/Llama-2-7b-hf", e.model());
        assertEquals(1, e.tensorParallel());
        assertEquals(2048, e.maxNumBatchedTokens());
        assertEquals(128, e.maxNumSeqs());
        assertEquals(247, e.outputTokens());
        assertEquals(2, e.stages().size());
        assertEquals(5.0, e.stages().get(0).ratePerS());
        assertEquals(3000, e.stages().get(0).completed());
        assertEquals(592, e.stages().get(0).promptTokens(), "the measured mean, 591.63");
        assertEquals(25.04, e.stages().get(0).ttftMeanMs(), 0.01);
        assertEquals("codegen", e.workloadKind());
    }
}
