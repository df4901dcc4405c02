package dev.tapedeck.trace.tools;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

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
 * count as many samples without storing each one. Memory is 8 bytes per {@link #add} call while every weight is 1,
 * 16 bytes once one is not. Not thread safe.
 */
public final class WeightedSamples
{
    private static final BigDecimal HUNDRED = BigDecimal.valueOf(100);
    private static final int INSERTION_SORT_LENGTH = 24;

    private double[] values;
    /** Null while every weight is 1 (the common case: 8 bytes per sample instead of 16). */
    private long[] weights;
    private int size;
    private long totalWeight;
    private boolean sorted = true;

    /**
     * Empty, with room for 64 entries.
     */
    public WeightedSamples()
    {
        this(64);
    }

    /**
     * @param capacity entries to make room for.
     */
    public WeightedSamples(final int capacity)
    {
        values = new double[Math.max(1, capacity)];
    }

    /**
     * @return entries stored ({@link #add} calls with a non-zero weight).
     */
    public int entries()
    {
        return size;
    }

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
        ensureCapacity(size + 1);
        if (1 != weight && null == weights)
        {
            weights = new long[values.length];
            Arrays.fill(weights, 0, size, 1L);
        }
        if (size > 0 && value < values[size - 1])
        {
            sorted = false;
        }
        values[size] = value;
        if (null != weights)
        {
            weights[size] = weight;
        }
        size++;
        totalWeight = Math.addExact(totalWeight, weight);
    }

    /**
     * @param other samples to add to these (room for all of them is made at once).
     */
    public void addAll(final WeightedSamples other)
    {
        ensureCapacity(size + other.size);
        for (int i = 0; i < other.size; i++)
        {
            add(other.values[i], weight(other, i));
        }
    }

    private static long weight(final WeightedSamples samples, final int index)
    {
        return null == samples.weights ? 1 : samples.weights[index];
    }

    private void ensureCapacity(final int capacity)
    {
        if (capacity > values.length)
        {
            final int grown = (int)Math.min(Integer.MAX_VALUE - 8, Math.max(capacity, 2L * values.length));
            values = Arrays.copyOf(values, grown);
            if (null != weights)
            {
                weights = Arrays.copyOf(weights, grown);
            }
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
        if (null == weights)
        {
            return values[(int)rank - 1];
        }
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
     * Nearest-rank percentiles of several sample sets taken together, without copying them: each set is sorted, then
     * the sets are merged in value order only as far as the highest rank asked for.
     *
     * @param parts the sample sets (sorted in place).
     * @param percents the percentiles, in {@code [0, 100]}.
     * @return one value per percentile, NaN when the sets hold no samples.
     */
    public static double[] percentiles(final List<WeightedSamples> parts, final double... percents)
    {
        final double[] result = new double[percents.length];
        Arrays.fill(result, Double.NaN);
        long total = 0;
        for (final WeightedSamples part : parts)
        {
            part.sort();
            total = Math.addExact(total, part.totalWeight);
        }
        if (0 == total)
        {
            return result;
        }
        final long[] ranks = new long[percents.length];
        final Integer[] byRank = new Integer[percents.length];
        for (int i = 0; i < percents.length; i++)
        {
            if (!(percents[i] >= 0 && percents[i] <= 100))
            {
                throw new IllegalArgumentException("percentile must be within [0, 100], got " + percents[i]);
            }
            ranks[i] = Math.max(1, Math.min(total, rank(percents[i], total)));
            byRank[i] = i;
        }
        Arrays.sort(byRank, Comparator.comparingLong(i -> ranks[i]));
        final int[] cursors = new int[parts.size()];
        final PriorityQueue<Integer> heads = new PriorityQueue<>(
            Comparator.comparingDouble(p -> parts.get(p).values[cursors[p]]));
        for (int p = 0; p < parts.size(); p++)
        {
            if (parts.get(p).size > 0)
            {
                heads.add(p);
            }
        }
        long cumulative = 0;
        int answered = 0;
        while (answered < byRank.length && !heads.isEmpty())
        {
            final int p = heads.poll();
            final WeightedSamples part = parts.get(p);
            final double value = part.values[cursors[p]];
            cumulative += weight(part, cursors[p]);
            while (answered < byRank.length && cumulative >= ranks[byRank[answered]])
            {
                result[byRank[answered++]] = value;
            }
            if (++cursors[p] < part.size)
            {
                heads.add(p);
            }
        }
        return result;
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
            if (null == weights)
            {
                Arrays.sort(values, 0, size);
            }
            else
            {
                sort(values, weights, 0, size - 1);
            }
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
