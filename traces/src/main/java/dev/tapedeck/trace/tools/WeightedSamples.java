package dev.tapedeck.trace.tools;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Arrays;

/**
 * Samples with integer weights (a weight of {@code n} is {@code n} equal samples), and their exact nearest-rank
 * percentiles.
 * <p>
 * <b>Percentile definition (nearest rank).</b> With the samples sorted ascending and {@code N} the total weight, the
 * {@code p}-th percentile is the smallest sample whose cumulative weight reaches {@code rank = ceil(p / 100 x N)}
 * (clamped to {@code [1, N]}); the rank is computed in exact decimal arithmetic. The result is always one of the
 * samples, never an interpolation: of {@code [1, 2, 3, 4]} the p50 is 2, the p90 and p99 are 4.
 * <p>
 * Weights let a summarised record ({@code itl_summary}: {@code count} gaps of {@code mean_ms}) or a multi-token chunk
 * count as many samples without storing each one. Memory is 16 bytes per {@link #add} call. Not thread safe.
 */
public final class WeightedSamples
{
    private static final BigDecimal HUNDRED = BigDecimal.valueOf(100);
    private static final int INSERTION_SORT_LENGTH = 24;

    private double[] values = new double[64];
    private long[] weights = new long[64];
    private int size;
    private long totalWeight;
    private boolean sorted = true;

    /**
     * @param value one sample.
     */
    public void add(final double value)
    {
        add(value, 1);
    }

    /**
     * @param value a sample value.
     * @param weight how many samples of this value; 0 adds nothing.
     * @throws IllegalArgumentException if the weight is negative or the value is NaN.
     */
    public void add(final double value, final long weight)
    {
        if (weight < 0 || Double.isNaN(value))
        {
            throw new IllegalArgumentException("bad sample " + value + " x " + weight);
        }
        if (0 == weight)
        {
            return;
        }
        if (size == values.length)
        {
            values = Arrays.copyOf(values, size * 2);
            weights = Arrays.copyOf(weights, size * 2);
        }
        if (size > 0 && value < values[size - 1])
        {
            sorted = false;
        }
        values[size] = value;
        weights[size] = weight;
        size++;
        totalWeight = Math.addExact(totalWeight, weight);
    }

    /**
     * @param other samples to add to these.
     */
    public void addAll(final WeightedSamples other)
    {
        for (int i = 0; i < other.size; i++)
        {
            add(other.values[i], other.weights[i]);
        }
    }

    /**
     * @return the total weight (the number of samples).
     */
    public long count()
    {
        return totalWeight;
    }

    /**
     * @return true when there are no samples.
     */
    public boolean isEmpty()
    {
        return 0 == totalWeight;
    }

    /**
     * @param percent the percentile, in {@code [0, 100]}.
     * @return the nearest-rank percentile (see the class comment), or NaN when there are no samples.
     */
    public double percentile(final double percent)
    {
        if (!(percent >= 0 && percent <= 100))
        {
            throw new IllegalArgumentException("percentile must be within [0, 100], got " + percent);
        }
        if (0 == totalWeight)
        {
            return Double.NaN;
        }
        sort();
        final long rank = Math.max(1, Math.min(totalWeight, rank(percent, totalWeight)));
        long cumulative = 0;
        for (int i = 0; i < size; i++)
        {
            cumulative += weights[i];
            if (cumulative >= rank)
            {
                return values[i];
            }
        }
        return values[size - 1];
    }

    /**
     * @param percent the percentile.
     * @param total the total weight.
     * @return {@code ceil(percent / 100 x total)}, exactly.
     */
    static long rank(final double percent, final long total)
    {
        return new BigDecimal(Double.toString(percent)).multiply(BigDecimal.valueOf(total))
            .divide(HUNDRED, 0, RoundingMode.CEILING).longValueExact();
    }

    private void sort()
    {
        if (!sorted)
        {
            sort(values, weights, 0, size - 1);
            sorted = true;
        }
    }

    /**
     * Sort {@code keys[from..to]} ascending, moving {@code payload} along (three-way quicksort: many equal keys are
     * cheap).
     *
     * @param keys the sort keys.
     * @param payload values that follow their keys.
     * @param from first index.
     * @param to last index, inclusive.
     */
    static void sort(final double[] keys, final long[] payload, final int from, final int to)
    {
        int low = from;
        int high = to;
        while (high - low >= INSERTION_SORT_LENGTH)
        {
            final double pivot = medianOfThree(keys[low], keys[low + (high - low) / 2], keys[high]);
            int lt = low;
            int gt = high;
            int i = low;
            while (i <= gt)
            {
                final int order = Double.compare(keys[i], pivot);
                if (order < 0)
                {
                    swap(keys, payload, lt++, i++);
                }
                else if (order > 0)
                {
                    swap(keys, payload, i, gt--);
                }
                else
                {
                    i++;
                }
            }
            if (lt - low < high - gt)
            {
                sort(keys, payload, low, lt - 1);
                low = gt + 1;
            }
            else
            {
                sort(keys, payload, gt + 1, high);
                high = lt - 1;
            }
        }
        for (int i = low + 1; i <= high; i++)
        {
            final double key = keys[i];
            final long value = payload[i];
            int j = i - 1;
            while (j >= low && Double.compare(keys[j], key) > 0)
            {
                keys[j + 1] = keys[j];
                payload[j + 1] = payload[j];
                j--;
            }
            keys[j + 1] = key;
            payload[j + 1] = value;
        }
    }

    private static double medianOfThree(final double a, final double b, final double c)
    {
        return Math.max(Math.min(a, b), Math.min(Math.max(a, b), c));
    }

    private static void swap(final double[] keys, final long[] payload, final int i, final int j)
    {
        final double key = keys[i];
        keys[i] = keys[j];
        keys[j] = key;
        final long value = payload[i];
        payload[i] = payload[j];
        payload[j] = value;
    }
}
