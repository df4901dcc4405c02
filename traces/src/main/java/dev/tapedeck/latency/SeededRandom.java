package dev.tapedeck.latency;

/**
 * A small, fast, seedable pseudo-random generator (SplitMix64) with a Gaussian draw.
 * <p>
 * Allocation-free and deterministic: the same seed gives the same sequence on every JVM. It is used for
 * latency jitter and token draws, where reproducibility matters more than statistical strength.
 * <p>
 * <b>Not thread safe</b>: one instance belongs to one thread (an engine owns its generators).
 */
public final class SeededRandom
{
    private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;
    private static final double DOUBLE_UNIT = 0x1.0p-53;

    private long state;
    private double spareGaussian;
    private boolean hasSpareGaussian;

    /**
     * @param seed initial state; any value is valid.
     */
    public SeededRandom(final long seed)
    {
        reseed(seed);
    }

    /**
     * Restart the sequence from a new seed.
     *
     * @param seed the new seed.
     */
    public void reseed(final long seed)
    {
        state = seed;
        hasSpareGaussian = false;
    }

    /**
     * Mix two values into a well-distributed seed, for deriving independent per-request generators.
     *
     * @param a first value.
     * @param b second value.
     * @return a seed.
     */
    public static long mix(final long a, final long b)
    {
        return mix64(a * GOLDEN_GAMMA + b);
    }

    /**
     * @return the next 64 random bits.
     */
    public long nextLong()
    {
        state += GOLDEN_GAMMA;
        return mix64(state);
    }

    /**
     * @return a double uniformly distributed in [0, 1).
     */
    public double nextDouble()
    {
        return (nextLong() >>> 11) * DOUBLE_UNIT;
    }

    /**
     * @param bound exclusive upper bound, must be positive.
     * @return an int uniformly distributed in [0, bound).
     */
    public int nextInt(final int bound)
    {
        // Lemire's multiply-shift; the bias is below 2^-32 for any bound, far below what matters here.
        return (int)(((nextLong() >>> 32) * bound) >>> 32);
    }

    /**
     * @return a standard normal draw (Box-Muller, the second value of each pair is kept for the next call).
     */
    public double nextGaussian()
    {
        if (hasSpareGaussian)
        {
            hasSpareGaussian = false;
            return spareGaussian;
        }
        final double u1 = Math.max(1.0 - nextDouble(), Double.MIN_NORMAL);
        final double u2 = nextDouble();
        final double radius = Math.sqrt(-2.0 * Math.log(u1));
        final double angle = 2.0 * Math.PI * u2;
        spareGaussian = radius * Math.sin(angle);
        hasSpareGaussian = true;
        return radius * Math.cos(angle);
    }

    private static long mix64(final long value)
    {
        long z = value;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
