package dev.tapedeck.latency.fit;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TraceGapFit} recovers known coefficients from a capture made by a small continuous-batching engine whose
 * steps cost exactly the step model (one prompt admitted and prefilled per step, every running request decoding).
 */
class TraceGapFitTest
{
    private static final StepCoefficients TRUTH = new StepCoefficients("truth", 8000, 20, 60, 40, 0, "test");

    /** A request of the synthetic engine. */
    private static final class Live
    {
        final int prompt;
        final int output;
        final double arrivalMs;
        double firstMs;
        double lastMs;
        int generated;
        final List<Double> gaps = new ArrayList<>();
        final List<Integer> running = new ArrayList<>();
        final List<Integer> prefill = new ArrayList<>();

        Live(final int prompt, final int output, final double arrivalMs)
        {
            this.prompt = prompt;
            this.output = output;
            this.arrivalMs = arrivalMs;
        }
    }

    /**
     * Runs {@code count} requests arriving at {@code ratePerS} through the engine; every gap's duration is the step
     * model's cost of its step times (1 + noise x a standard normal).
     */
    static List<TraceRecord> capture(final int count, final double ratePerS, final double noise, final long seed)
    {
        final Random random = new Random(seed);
        final Deque<Live> arriving = new ArrayDeque<>();
        double at = 0;
        for (int i = 0; i < count; i++)
        {
            at += -Math.log(1 - random.nextDouble()) * 1000 / ratePerS;
            arriving.add(new Live(random.nextBoolean() ? 50 + random.nextInt(200) : 2000 + random.nextInt(2000),
                20 + random.nextInt(300), at));
        }
        final List<Live> done = new ArrayList<>();
        final List<Live> running = new ArrayList<>();
        double now = 0;
        while (!arriving.isEmpty() || !running.isEmpty())
        {
            if (running.isEmpty() && arriving.peekFirst().arrivalMs > now)
            {
                now = arriving.peekFirst().arrivalMs;
            }
            final Live admitted = !arriving.isEmpty() && arriving.peekFirst().arrivalMs <= now && running.size() < 48 ?
                arriving.pollFirst() : null;
            long context = 0;
            for (final Live live : running)
            {
                context += live.prompt + live.generated;
            }
            final int prefill = null == admitted ? 0 : admitted.prompt;
            final double us = TRUTH.baseUs() + TRUTH.prefillTokenUs() * prefill + TRUTH.decodeRequestUs() *
                running.size() + TRUTH.contextKiloTokenUs() * context / 1000.0;
            now += us / 1000.0 * Math.max(0.5, 1 + noise * random.nextGaussian());
            final int inStep = running.size() + (null == admitted ? 0 : 1);
            for (final Live live : running)
            {
                live.gaps.add(now - live.lastMs);
                live.running.add(inStep);
                live.prefill.add(prefill);
                live.lastMs = now;
                live.generated++;
            }
            running.removeIf(live ->
            {
                if (live.generated < live.output)
                {
                    return false;
                }
                done.add(live);
                return true;
            });
            if (null != admitted)
            {
                admitted.firstMs = now;
                admitted.lastMs = now;
                admitted.generated = 1;
                running.add(admitted);
            }
        }
        return done.stream().map(TraceGapFitTest::record).toList();
    }

    private static TraceRecord record(final Live live)
    {
        return new TraceRecord().promptTokens(live.prompt).outputTokens(live.output)
            .arrivalMs(live.arrivalMs).ttftMs(live.firstMs - live.arrivalMs)
            .itlMs(live.gaps.stream().mapToDouble(Double::doubleValue).toArray())
            .itlContext(new TraceRecord.ItlContext(live.running.stream().mapToInt(Integer::intValue).toArray(),
                live.prefill.stream().mapToInt(Integer::intValue).toArray()));
    }

    @Test
    void shouldRecoverTheCoefficientsOfTheStepsThatMadeTheGaps()
    {
        final List<TraceRecord> records = capture(600, 8, 0.02, 7);
        final TraceGapFit.Result fit = TraceGapFit.fit(List.of(records), "fitted", "test", true);
        final StepCoefficients c = fit.coefficients();
        assertEquals(TRUTH.baseUs(), c.baseUs(), TRUTH.baseUs() * 0.03, c.toString());
        assertEquals(TRUTH.prefillTokenUs(), c.prefillTokenUs(), TRUTH.prefillTokenUs() * 0.03, c.toString());
        assertEquals(TRUTH.decodeRequestUs(), c.decodeRequestUs(), TRUTH.decodeRequestUs() * 0.05, c.toString());
        assertEquals(TRUTH.contextKiloTokenUs(), c.contextKiloTokenUs(), TRUTH.contextKiloTokenUs() * 0.05,
            c.toString());
        assertEquals(600, fit.recordsUsed());
        assertEquals(records.stream().mapToLong(r -> r.itlMs().length).sum(), fit.gapsUsed());
        assertTrue(fit.meanAbsolutePercentageError() > 0.01 && fit.meanAbsolutePercentageError() < 0.04,
            "the 2% step noise is what is left: " + fit.meanAbsolutePercentageError());
    }

    @Test
    void shouldFitTwoCapturesOnTheirOwnTimelines()
    {
        final TraceGapFit.Result one = TraceGapFit.fit(List.of(capture(300, 8, 0, 1)), "a", "b", true);
        final TraceGapFit.Result two = TraceGapFit.fit(List.of(capture(300, 8, 0, 1), capture(300, 4, 0, 2)), "a",
            "b", true);
        assertEquals(TRUTH.contextKiloTokenUs(), one.coefficients().contextKiloTokenUs(), 1e-6);
        assertEquals(TRUTH.contextKiloTokenUs(), two.coefficients().contextKiloTokenUs(), 1e-6);
        assertEquals(TRUTH.decodeRequestUs(), two.coefficients().decodeRequestUs(), 1e-6);
        assertTrue(two.meanAbsolutePercentageError() < 1e-9, "noise-free gaps are explained exactly");
        assertEquals(one.gapsUsed() * 2, two.gapsUsed(), one.gapsUsed() / 2.0);
    }

    @Test
    void shouldLeaveOutMultiTokenGapsAndRecordsWithoutContext()
    {
        final List<TraceRecord> records = new ArrayList<>(capture(300, 8, 0, 3));
        final TraceRecord burst = records.get(10);
        final int[] tokens = new int[burst.itlMs().length];
        Arrays.fill(tokens, 1);
        tokens[3] = 3;
        burst.itlTokens(tokens).outputTokens(burst.outputTokens() + 2);
        burst.itlMs()[3] *= 1.7;
        records.get(11).itlContext(null);
        final TraceGapFit.Result fit = TraceGapFit.fit(List.of(records), "a", "b", false);
        assertEquals(1, fit.multiTokenGaps());
        assertEquals(1, fit.recordsWithoutContext());
        assertEquals(299, fit.recordsUsed());
        assertEquals(0.0, fit.coefficients().contextKiloTokenUs(), "--no-context-term");
        assertTrue(fit.coefficients().decodeRequestUs() > TRUTH.decodeRequestUs(),
            "the per-decode term absorbs the context's cost: " + fit.coefficients());
    }

    @Test
    void shouldRefuseATraceWithoutItlContext()
    {
        final List<TraceRecord> records = capture(50, 8, 0, 4);
        records.forEach(r -> r.itlContext(null));
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
            () -> TraceGapFit.fit(List.of(records), "a", "b", true));
        assertTrue(error.getMessage().startsWith("no record has itl_ctx"), error.getMessage());
    }

    @Test
    void shouldRefuseGapsThatDoNotDetermineTheCoefficients()
    {
        final double[] gaps = new double[30];
        Arrays.fill(gaps, 12.0);
        final int[] one = new int[30];
        Arrays.fill(one, 1);
        final TraceRecord alone = new TraceRecord().promptTokens(100).outputTokens(31).ttftMs(40).arrivalMs(0.0)
            .itlMs(gaps).itlContext(new TraceRecord.ItlContext(one, new int[30]));
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
            () -> TraceGapFit.fit(List.of(List.of(alone)), "a", "b", false));
        assertTrue(error.getMessage().contains("do not determine"), error.getMessage());
    }
}
