package dev.tapedeck.trace.tools;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.SeededRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nearest-rank percentiles: hand-computed values, weights equal to repeated samples, exact ranks, and the sort.
 */
class WeightedSamplesTest
{
    @Test
    void shouldTakeTheSmallestSampleWhoseRankReachesCeilingOfPTimesN()
    {
        final WeightedSamples samples = new WeightedSamples();
        for (final double value : new double[] {4, 2, 3, 1})
        {
            samples.add(value);
        }
        // N = 4: p50 -> rank ceil(2.0) = 2 -> 2; p90 -> ceil(3.6) = 4 -> 4; p99 -> ceil(3.96) = 4 -> 4
        assertEquals(2.0, samples.percentile(50));
        assertEquals(4.0, samples.percentile(90));
        assertEquals(4.0, samples.percentile(99));
        assertEquals(1.0, samples.percentile(0), "rank 0 is clamped to 1");
        assertEquals(4.0, samples.percentile(100));
        assertEquals(1.0, samples.percentile(25), "ceil(1.0) = 1");
        assertEquals(2.0, samples.percentile(25.1), "ceil(1.004) = 2");
    }

    @Test
    void shouldComputeRanksExactlyWhereBinaryFloatingPointIsOffByOne()
    {
        // 0.99 * 100 or 0.07 * 100 in doubles is not an integer; the rank must still be exactly 99 or 7.
        assertEquals(99, WeightedSamples.rank(99, 100));
        assertEquals(7, WeightedSamples.rank(7, 100));
        assertEquals(57, WeightedSamples.rank(57, 100));
        assertEquals(9, WeightedSamples.rank(90, 10));
        final WeightedSamples samples = new WeightedSamples();
        for (int i = 100; i >= 1; i--)
        {
            samples.add(i);
        }
        assertEquals(50.0, samples.percentile(50));
        assertEquals(90.0, samples.percentile(90));
        assertEquals(99.0, samples.percentile(99));
        assertEquals(7.0, samples.percentile(7));
    }

    @Test
    void shouldCountAWeightAsThatManyEqualSamples()
    {
        final SeededRandom random = new SeededRandom(7);
        for (int round = 0; round < 50; round++)
        {
            final WeightedSamples weighted = new WeightedSamples();
            final WeightedSamples expanded = new WeightedSamples();
            final int size = 1 + random.nextInt(200);
            for (int i = 0; i < size; i++)
            {
                final double value = random.nextInt(40) / 4.0;
                final int weight = random.nextInt(6);
                weighted.add(value, weight);
                for (int w = 0; w < weight; w++)
                {
                    expanded.add(value);
                }
            }
            assertEquals(expanded.count(), weighted.count());
            for (final double percent : new double[] {0, 1, 10, 33.3, 50, 90, 99, 99.9, 100})
            {
                assertEquals(expanded.percentile(percent), weighted.percentile(percent), "p" + percent);
            }
        }
    }

    @Test
    void shouldMergeUnitAndWeightedSamples()
    {
        final WeightedSamples units = new WeightedSamples(1);
        for (final double value : new double[] {9, 1, 5})
        {
            units.add(value);
        }
        final WeightedSamples weighted = new WeightedSamples();
        weighted.add(3, 4);
        final WeightedSamples all = new WeightedSamples(2);
        all.addAll(units);
        all.addAll(weighted);
        all.addAll(units);
        // {1, 1, 3, 3, 3, 3, 5, 5, 9, 9}: p50 = rank 5 = 3, p70 = rank 7 = 5, p90 = rank 9 = 9
        assertEquals(10, all.count());
        assertEquals(7, all.entries());
        assertEquals(3.0, all.percentile(50));
        assertEquals(5.0, all.percentile(70));
        assertEquals(9.0, all.percentile(90));
        assertEquals(5.0, units.percentile(50), "the source is unchanged");
        // the same without copying: a merge of the sorted sets
        assertArrayEquals(new double[] {3, 5, 9, 1},
            WeightedSamples.percentiles(java.util.List.of(units, weighted, units, new WeightedSamples()), 50, 70, 90,
                0));
        assertTrue(Double.isNaN(WeightedSamples.percentiles(java.util.List.of(new WeightedSamples()), 50)[0]));
    }

    @Test
    void shouldMergeSetsToTheSamePercentilesAsOneSet()
    {
        final SeededRandom random = new SeededRandom(5);
        final java.util.List<WeightedSamples> parts = new java.util.ArrayList<>();
        final WeightedSamples together = new WeightedSamples();
        for (int p = 0; p < 30; p++)
        {
            final WeightedSamples part = new WeightedSamples();
            for (int i = random.nextInt(300); i > 0; i--)
            {
                final double value = random.nextInt(1000) / 8.0;
                final int weight = random.nextInt(4) > 0 ? 1 : random.nextInt(9);
                part.add(value, weight);
                together.add(value, weight);
            }
            parts.add(part);
        }
        final double[] percents = {99.9, 0, 50, 12.5, 90, 99, 100};
        final double[] merged = WeightedSamples.percentiles(parts, percents);
        for (int i = 0; i < percents.length; i++)
        {
            assertEquals(together.percentile(percents[i]), merged[i], "p" + percents[i]);
        }
    }

    @Test
    void shouldBeNanWithoutSamplesAndRejectBadInput()
    {
        final WeightedSamples samples = new WeightedSamples();
        assertTrue(Double.isNaN(samples.percentile(50)));
        samples.add(3.0, 0);
        assertTrue(samples.isEmpty());
        assertThrows(IllegalArgumentException.class, () -> samples.add(1.0, -1));
        assertThrows(IllegalArgumentException.class, () -> samples.add(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> samples.percentile(101));
    }

    @Test
    void shouldSortKeysAndMovePayloadsAlongEvenWithManyDuplicates()
    {
        final SeededRandom random = new SeededRandom(11);
        for (final int size : new int[] {0, 1, 2, 23, 24, 25, 1000, 100_000})
        {
            final double[] keys = new double[size];
            final long[] payload = new long[size];
            for (int i = 0; i < size; i++)
            {
                keys[i] = random.nextInt(size < 1000 ? 1000 : 7);
                payload[i] = Double.doubleToLongBits(keys[i]) ^ 0x5555;
            }
            final double[] expected = keys.clone();
            Arrays.sort(expected);
            WeightedSamples.sort(keys, payload, 0, size - 1);
            assertArrayEquals(expected, keys);
            for (int i = 0; i < size; i++)
            {
                assertEquals(Double.doubleToLongBits(keys[i]) ^ 0x5555, payload[i], "payload follows its key");
            }
        }
    }
}
