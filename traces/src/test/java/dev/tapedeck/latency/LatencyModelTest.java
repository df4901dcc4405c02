package dev.tapedeck.latency;

import org.junit.jupiter.api.Test;

import dev.tapedeck.workload.OutputLengthDistribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The knob model's llm-d semantics (at nanosecond resolution), the step model's formula, durations, and draws.
 */
class LatencyModelTest
{
    private static final long MS = 1_000_000L;

    @Test
    void shouldUseTheConstantTtftWhenSetAndThePerTokenFormOtherwise()
    {
        final SeededRandom random = new SeededRandom(1);
        final KnobLatencyModel constant = new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO, 100 * MS, 0,
            10 * MS, 0, 5 * MS, MS, 0, 1.0, 8);
        assertEquals(100 * MS, constant.firstTokenDelayNs(1000, 0, 1, random));
        final KnobLatencyModel perToken = new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO, 0, 0,
            10 * MS, 0, 5 * MS, MS / 4, 0, 1.0, 8);
        // 5 ms + (1000 - 200 cached) x 0.25 ms
        assertEquals(205 * MS, perToken.firstTokenDelayNs(1000, 200, 1, random));
        final KnobLatencyModel forced = new KnobLatencyModel(KnobLatencyModel.Calculator.PER_TOKEN, 100 * MS, 0,
            10 * MS, 0, 5 * MS, MS / 4, 0, 1.0, 8);
        assertEquals(55 * MS, forced.firstTokenDelayNs(200, 0, 1, random));
    }

    @Test
    void shouldKeepSubMillisecondSettings()
    {
        final KnobLatencyModel fast = new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO, 750_000, 0,
            250_000, 0, 0, 0, 0, 1.0, 4);
        assertEquals(750_000, fast.firstTokenDelayNs(10, 0, 1, new SeededRandom(1)));
        assertEquals(250_000, fast.stepDurationNs(new FixedStepShape(3, 0, 0, 0, 3), new SeededRandom(1)));
    }

    @Test
    void shouldClampDrawsToThirtyAndOneHundredSeventyPercentOfTheMean()
    {
        final KnobLatencyModel jittery = new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO, 0, 0,
            10 * MS, 3 * MS, 0, 0, 0, 1.0, 4);
        final SeededRandom random = new SeededRandom(3);
        long min = Long.MAX_VALUE;
        long max = 0;
        double sum = 0;
        for (int i = 0; i < 20_000; i++)
        {
            final long d = jittery.stepDurationNs(new FixedStepShape(1, 0, 0, 0, 1), random);
            min = Math.min(min, d);
            max = Math.max(max, d);
            sum += d;
        }
        assertTrue(min >= 3 * MS && max <= 17 * MS, min + ".." + max);
        assertEquals(10 * MS, sum / 20_000, 0.1 * MS);
    }

    @Test
    void shouldRejectStdDevsAboveThirtyPercentAsLlmdDoes()
    {
        assertThrows(IllegalArgumentException.class, () -> new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO,
            100 * MS, 31 * MS, 0, 0, 0, 0, 0, 1.0, 4));
        assertThrows(IllegalArgumentException.class, () -> new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO,
            0, 0, 10 * MS, 0, 0, 0, 0, 0.5, 4));
    }

    @Test
    void shouldCostAStepByItsBatch()
    {
        final StepLatencyModel model = new StepLatencyModel(new StepCoefficients("t", 1000, 2, 10, 4, 0, "test"));
        // 1000 + 2 x 300 + 10 x 8 + 4 x 5 (5000 context tokens) = 1700 us
        assertEquals(1_700_000, model.stepDurationNs(new FixedStepShape(8, 300, 1, 5000, 9), new SeededRandom(1)));
        assertEquals(0, model.firstTokenDelayNs(100, 0, 1, new SeededRandom(1)));
    }

    @Test
    void shouldFindProfilesByName()
    {
        assertEquals(StepCoefficients.DENSE_8B_RTXPRO6000, StepCoefficients.profile("dense-8b-rtxpro6000"));
        final IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
            () -> StepCoefficients.profile("h100"));
        assertTrue(unknown.getMessage().contains("dense-8b-rtxpro6000"));
        assertEquals("dense-8b-rtxpro6000+custom", StepCoefficients.DENSE_8B_RTXPRO6000.with(1, 1, 1, 1, 0).name());
    }

    @Test
    void shouldParseGoDurationsAndMilliseconds()
    {
        assertEquals(100 * MS, Durations.parseNs("100ms"));
        assertEquals(1_500 * MS, Durations.parseNs("1.5s"));
        assertEquals(250_000, Durations.parseNs("250us"));
        assertEquals(90_000 * MS, Durations.parseNs("1m30s"));
        assertEquals(12_500_000, Durations.parseNs("12.5"));
        assertEquals(800, Durations.parseNs("800ns"));
        assertThrows(IllegalArgumentException.class, () -> Durations.parseNs("fast"));
        assertThrows(IllegalArgumentException.class, () -> Durations.parseNs("10 parsecs"));
        assertThrows(IllegalArgumentException.class, () -> Durations.parseNs("-1ms"));
        assertEquals("1.5s", Durations.format(1_500 * MS));
        assertEquals("250us", Durations.format(250_000));
        assertEquals("0s", Durations.format(0));
    }

    @Test
    void shouldDrawOutputLengthsFromTheMooncakeDistribution()
    {
        final SeededRandom random = new SeededRandom(11);
        final int[] draws = new int[20_001];
        for (int i = 0; i < draws.length; i++)
        {
            draws[i] = OutputLengthDistribution.MOONCAKE_CONVERSATION.draw(random);
            assertTrue(draws[i] >= 1 && draws[i] <= 2000);
        }
        java.util.Arrays.sort(draws);
        assertEquals(350, draws[draws.length / 2], 15, "median of the Mooncake conversation trace");
    }

    @Test
    void shouldBeDeterministicPerSeed()
    {
        final SeededRandom a = new SeededRandom(5);
        final SeededRandom b = new SeededRandom(5);
        for (int i = 0; i < 100; i++)
        {
            assertEquals(a.nextLong(), b.nextLong());
        }
        assertNotEquals(new SeededRandom(5).nextLong(), new SeededRandom(6).nextLong());
        final SeededRandom bounded = new SeededRandom(9);
        for (int i = 0; i < 1000; i++)
        {
            final int n = bounded.nextInt(7);
            assertTrue(n >= 0 && n < 7);
        }
    }
}
