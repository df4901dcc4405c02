package dev.tapedeck.metrics;

/**
 * A Prometheus-style histogram with fixed upper bounds: per-bucket counts, a count and a sum. Observing allocates
 * nothing. <b>Single writer</b>: observe and read on the owning thread.
 */
public final class Histogram
{
    private final double[] upperBounds;
    private final long[] bucketCounts;
    private long count;
    private double sum;

    /**
     * @param upperBounds ascending upper bounds, without {@code +Inf} (it is implied).
     */
    public Histogram(final double[] upperBounds)
    {
        for (int i = 1; i < upperBounds.length; i++)
        {
            if (!(upperBounds[i] > upperBounds[i - 1]))
            {
                throw new IllegalArgumentException("bucket bounds must be strictly ascending");
            }
        }
        this.upperBounds = upperBounds.clone();
        this.bucketCounts = new long[upperBounds.length + 1];
    }

    /**
     * @param value the observation.
     */
    public void observe(final double value)
    {
        int bucket = 0;
        final double[] bounds = upperBounds;
        while (bucket < bounds.length && value > bounds[bucket])
        {
            bucket++;
        }
        bucketCounts[bucket]++;
        count++;
        sum += value;
    }

    /**
     * @param value an observation.
     * @param times how many times it is observed.
     */
    public void observe(final double value, final long times)
    {
        int bucket = 0;
        while (bucket < upperBounds.length && value > upperBounds[bucket])
        {
            bucket++;
        }
        bucketCounts[bucket] += times;
        count += times;
        sum += value * times;
    }

    /**
     * @return the upper bounds (do not modify), without {@code +Inf}.
     */
    public double[] upperBounds()
    {
        return upperBounds;
    }

    /**
     * @param index bucket index; {@code upperBounds().length} is the {@code +Inf} bucket.
     * @return observations that fell in that bucket alone (not cumulative).
     */
    public long bucketCount(final int index)
    {
        return bucketCounts[index];
    }

    /**
     * @return number of observations.
     */
    public long count()
    {
        return count;
    }

    /**
     * @return sum of observations.
     */
    public double sum()
    {
        return sum;
    }

    /**
     * vLLM's {@code build_1_2_5_buckets}: 1, 2, 5, 10, 20, 50, ... while not above {@code max}.
     *
     * @param max the largest value to cover (usually max-model-len).
     * @return the bounds.
     */
    public static double[] oneTwoFive(final long max)
    {
        final double[] buckets = new double[64];
        int n = 0;
        final int[] mantissas = {1, 2, 5};
        for (long exponent = 1; ; exponent *= 10)
        {
            for (final int mantissa : mantissas)
            {
                final long value = mantissa * exponent;
                if (value > max)
                {
                    return java.util.Arrays.copyOf(buckets, n);
                }
                buckets[n++] = value;
            }
        }
    }
}
