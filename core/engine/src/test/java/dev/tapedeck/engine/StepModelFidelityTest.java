package dev.tapedeck.latency;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import org.junit.jupiter.api.Test;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.VirtualTimeDriver;
import dev.tapedeck.latency.fit.FidelityData;
import dev.tapedeck.latency.fit.MeasuredRequest;
import dev.tapedeck.latency.fit.StepModelFit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replays real vLLM runs (the same arrivals, prompt and output lengths, engine settings) through tapedeck's engine in
 * virtual time with the shipped step profile, and compares TTFT, TPOT and end-to-end latency with what the real GPU
 * measured. Also checks that the fit recovers known coefficients from a run the engine itself produced.
 */
class StepModelFidelityTest
{
    @Test
    void shouldReproduceTheRealLlama8bRunOnRtxPro6000() throws IOException
    {
        final double[][] errors = replay("RTXPRO6000_Llama-3.1-8B", StepCoefficients.DENSE_8B_RTXPRO6000, 128);
        assertTrue(errors[1][0] < 0.05, "TPOT mean error " + errors[1][0]);
        assertTrue(errors[2][0] < 0.05, "E2E mean error " + errors[2][0]);
        assertTrue(errors[0][0] < 0.15, "TTFT mean error " + errors[0][0]);
    }

    @Test
    void shouldReproduceTheRealQwen32bRun() throws IOException
    {
        final double[][] errors = replay("RTXPRO6000_Qwen3-32B", StepCoefficients.DENSE_32B_TP2_RTXPRO6000, 128);
        assertTrue(errors[1][0] < 0.05, "TPOT mean error " + errors[1][0]);
        assertTrue(errors[2][0] < 0.05, "E2E mean error " + errors[2][0]);
        assertTrue(errors[0][0] < 0.15, "TTFT mean error " + errors[0][0]);
    }

    /**
     * @return per metric (TTFT, TPOT, E2E) the relative error of {mean, p50, p90}.
     */
    private static double[][] replay(final String run, final StepCoefficients profile, final int maxNumSeqs)
        throws IOException
    {
        final List<MeasuredRequest> measured = new ArrayList<>(MeasuredRequest.readLlmServingSim(
            FidelityData.llmServingSimRequests(run)));
        measured.sort(Comparator.comparingDouble(MeasuredRequest::queuedS));
        final double origin = measured.get(0).queuedS();
        final Engine engine = new Engine(new EngineConfig().maxNumSeqs(maxNumSeqs).maxNumBatchedTokens(2048)
            .maxModelLen(40960).kvCacheBlocks(1 << 20).latencyModel(new StepLatencyModel(profile))
            // the prompts are placeholders (all zeros): the measured runs' prompts shared no prefix
            .enablePrefixCaching(false)
            .tokenSpace(new int[] {1, 2, 3}, 0).conclude(), OutputSink.DISCARD, 0);
        final List<Request> requests = new ArrayList<>();
        for (final MeasuredRequest m : measured)
        {
            final long arrivalNs = Math.round((m.queuedS() - origin) * 1e9);
            requests.add(new Request("r", new int[m.inputTokens()]).maxTokens(m.outputTokens()).arrivalNs(arrivalNs));
        }
        assertEquals(0, VirtualTimeDriver.run(engine, requests));
        final List<MeasuredRequest> simulated = new ArrayList<>();
        for (final Request r : requests)
        {
            simulated.add(new MeasuredRequest(r.promptLength(), r.numOutputTokens(), r.arrivalNs() / 1e9,
                r.scheduledNs() / 1e9, r.firstTokenNs() / 1e9, r.lastTokenNs() / 1e9));
        }
        final double[][] errors = {
            compare("TTFT", measured, simulated, MeasuredRequest::ttftS),
            compare("TPOT", measured, simulated, MeasuredRequest::tpotS),
            compare("E2E", measured, simulated, MeasuredRequest::e2eS),
        };
        return errors;
    }

    private static double[] compare(final String metric, final List<MeasuredRequest> real,
        final List<MeasuredRequest> sim, final ToDoubleFunction<MeasuredRequest> value)
    {
        final double[] a = real.stream().mapToDouble(value).sorted().toArray();
        final double[] b = sim.stream().mapToDouble(value).sorted().toArray();
        final double meanA = Arrays.stream(a).average().orElse(0);
        final double meanB = Arrays.stream(b).average().orElse(0);
        final double[] out = {
            Math.abs(meanB - meanA) / meanA,
            Math.abs(b[b.length / 2] - a[a.length / 2]) / a[a.length / 2],
            Math.abs(b[b.length * 9 / 10] - a[a.length * 9 / 10]) / a[a.length * 9 / 10],
        };
        System.out.printf(Locale.ROOT, "%-5s real mean %8.1f ms p50 %8.1f p90 %8.1f | tapedeck mean %8.1f ms " +
            "p50 %8.1f p90 %8.1f | error mean %5.1f%% p50 %5.1f%% p90 %5.1f%%%n", metric, meanA * 1e3,
            a[a.length / 2] * 1e3, a[a.length * 9 / 10] * 1e3, meanB * 1e3, b[b.length / 2] * 1e3,
            b[b.length * 9 / 10] * 1e3, out[0] * 100, out[1] * 100, out[2] * 100);
        return out;
    }

    @Test
    void shouldFitARunTheEngineProducedWellEnoughToPredictIt()
    {
        final StepCoefficients truth = new StepCoefficients("truth", 12000, 25, 90, 0, 0, "test");
        final List<Request> original = syntheticRun(truth);
        final List<MeasuredRequest> run = measured(original);
        final StepModelFit.Result result = StepModelFit.fit(run, "fitted", "test", false);
        final StepCoefficients fitted = result.coefficients();
        System.out.println("fitted " + fitted + " to a run made with " + truth + "; fit error " +
            result.meanAbsolutePercentageError());
        // the regression's features are estimates (tokens are spread evenly in time, not per step), so the
        // coefficients are biased; what must hold is that they predict the run
        assertEquals(truth.baseUs(), fitted.baseUs(), truth.baseUs() * 0.15);
        assertEquals(truth.prefillTokenUs(), fitted.prefillTokenUs(), truth.prefillTokenUs() * 0.15);
        final List<MeasuredRequest> predicted = measured(syntheticRun(fitted));
        final double[] tpot = compare("TPOT", run, predicted, MeasuredRequest::tpotS);
        final double[] e2e = compare("E2E", run, predicted, MeasuredRequest::e2eS);
        final double[] ttft = compare("TTFT", run, predicted, MeasuredRequest::ttftS);
        assertTrue(tpot[0] < 0.03 && e2e[0] < 0.03 && ttft[0] < 0.10, "predictions of the refitted model");
    }

    private static List<Request> syntheticRun(final StepCoefficients coefficients)
    {
        final Engine engine = new Engine(new EngineConfig().maxNumSeqs(64).maxNumBatchedTokens(2048)
            .maxModelLen(1 << 16).enablePrefixCaching(false) // placeholder prompts (all zeros) share no prefix
            .latencyModel(new StepLatencyModel(coefficients)).tokenSpace(new int[] {1}, 0)
            .conclude(), OutputSink.DISCARD, 0);
        final SeededRandom random = new SeededRandom(7);
        final List<Request> requests = new ArrayList<>();
        long arrivalNs = 0;
        for (int i = 0; i < 400; i++)
        {
            arrivalNs += (long)(-Math.log(1 - random.nextDouble()) * 80e6);
            requests.add(new Request("r" + i, new int[50 + random.nextInt(4000)])
                .maxTokens(30 + random.nextInt(600)).arrivalNs(arrivalNs));
        }
        VirtualTimeDriver.run(engine, requests);
        return requests;
    }

    private static List<MeasuredRequest> measured(final List<Request> requests)
    {
        final List<MeasuredRequest> run = new ArrayList<>();
        for (final Request r : requests)
        {
            run.add(new MeasuredRequest(r.promptLength(), r.numOutputTokens(), r.queuedNs() / 1e9,
                r.scheduledNs() / 1e9, r.firstTokenNs() / 1e9, r.lastTokenNs() / 1e9));
        }
        return run;
    }
}
