package dev.tapedeck.load;

import dev.tapedeck.latency.SeededRandom;

/**
 * Gaps between generated arrivals at a mean rate ({@code --arrivals}): {@code poisson} (exponential gaps),
 * {@code gamma:CV} (gamma gaps with coefficient of variation CV; 1 is Poisson, above 1 is burstier, below 1 is more
 * regular) or {@code constant}. Immutable; thread safe (the random source is the caller's).
 */
public final class ArrivalProcess
{
    private final double shape;
    private final String text;

    private ArrivalProcess(final double shape, final String text)
    {
        this.shape = shape;
        this.text = text;
    }

    /**
     * @param spec {@code poisson}, {@code gamma:CV} or {@code constant}.
     * @return the process.
     */
    public static ArrivalProcess parse(final String spec)
    {
        final String s = spec.trim().toLowerCase(java.util.Locale.ROOT);
        if ("poisson".equals(s))
        {
            return new ArrivalProcess(1.0, s);
        }
        if ("constant".equals(s))
        {
            return new ArrivalProcess(Double.POSITIVE_INFINITY, s);
        }
        if (s.startsWith("gamma:"))
        {
            final double cv;
            try
            {
                cv = Double.parseDouble(s.substring(6));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--arrivals gamma:CV needs a number, got '" + spec + "'");
            }
            if (!(cv > 0))
            {
                throw new IllegalArgumentException("--arrivals gamma:CV needs CV > 0, got '" + spec + "'");
            }
            return new ArrivalProcess(1 / (cv * cv), s);
        }
        throw new IllegalArgumentException("--arrivals must be poisson, gamma:CV or constant, got '" + spec + "'");
    }

    /**
     * @param meanGapNs the mean gap (1 / rate).
     * @param random the random source.
     * @return the next gap in nanoseconds.
     */
    public long nextGapNs(final double meanGapNs, final SeededRandom random)
    {
        if (Double.isInfinite(shape))
        {
            return Math.round(meanGapNs);
        }
        return Math.round(gamma(shape, random) * meanGapNs / shape);
    }

    /**
     * Marsaglia and Tsang's method; for shape below 1 the boost {@code U^(1/shape)}.
     */
    private static double gamma(final double shape, final SeededRandom random)
    {
        if (shape < 1)
        {
            return gamma(shape + 1, random) * Math.pow(uniformOpen(random), 1 / shape);
        }
        final double d = shape - 1.0 / 3;
        final double c = 1 / Math.sqrt(9 * d);
        while (true)
        {
            double x;
            double v;
            do
            {
                x = random.nextGaussian();
                v = 1 + c * x;
            }
            while (v <= 0);
            v = v * v * v;
            final double u = uniformOpen(random);
            if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v))
            {
                return d * v;
            }
        }
    }

    private static double uniformOpen(final SeededRandom random)
    {
        double u;
        do
        {
            u = random.nextDouble();
        }
        while (u <= 0);
        return u;
    }

    @Override
    public String toString()
    {
        return text;
    }
}
