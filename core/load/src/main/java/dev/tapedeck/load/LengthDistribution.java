package dev.tapedeck.load;

import dev.tapedeck.latency.SeededRandom;

/**
 * Token counts for generated requests ({@code --prompt-tokens}, {@code --output-tokens}): {@code 512} (constant),
 * {@code 100..1000} (uniform, both ends included), {@code normal:MEAN,SD} or {@code lognormal:MEAN,SD} (mean and
 * standard deviation of the counts themselves). Draws are rounded and kept at least 1. Immutable; thread safe (the
 * random source is the caller's).
 */
public final class LengthDistribution
{
    private enum Kind
    {
        CONSTANT, UNIFORM, NORMAL, LOGNORMAL
    }

    private final Kind kind;
    private final double a;
    private final double b;
    private final String text;

    private LengthDistribution(final Kind kind, final double a, final double b, final String text)
    {
        this.kind = kind;
        this.a = a;
        this.b = b;
        this.text = text;
    }

    /**
     * @param spec the flag value.
     * @return the distribution.
     * @throws IllegalArgumentException naming the expected forms.
     */
    public static LengthDistribution parse(final String spec)
    {
        final String s = spec.trim();
        try
        {
            if (s.startsWith("normal:") || s.startsWith("lognormal:"))
            {
                final boolean log = s.startsWith("lognormal:");
                final String[] parts = s.substring(s.indexOf(':') + 1).split(",");
                final double mean = Double.parseDouble(parts[0].trim());
                final double sd = Double.parseDouble(parts[1].trim());
                if (parts.length != 2 || mean < 1 || sd < 0)
                {
                    throw new IllegalArgumentException("mean >= 1 and sd >= 0 expected");
                }
                if (log)
                {
                    final double sigma2 = Math.log(1 + (sd * sd) / (mean * mean));
                    return new LengthDistribution(Kind.LOGNORMAL, Math.log(mean) - sigma2 / 2, Math.sqrt(sigma2), s);
                }
                return new LengthDistribution(Kind.NORMAL, mean, sd, s);
            }
            final int range = s.indexOf("..");
            if (range > 0)
            {
                final long min = Long.parseLong(s.substring(0, range).trim());
                final long max = Long.parseLong(s.substring(range + 2).trim());
                if (min < 1 || max < min)
                {
                    throw new IllegalArgumentException("1 <= MIN <= MAX expected");
                }
                return new LengthDistribution(Kind.UNIFORM, min, max, s);
            }
            final long value = Long.parseLong(s);
            if (value < 1)
            {
                throw new IllegalArgumentException("at least 1 expected");
            }
            return new LengthDistribution(Kind.CONSTANT, value, value, s);
        }
        catch (final RuntimeException ex)
        {
            throw new IllegalArgumentException("'" + spec + "' is not a token count: use N, MIN..MAX, " +
                "normal:MEAN,SD or lognormal:MEAN,SD (" + ex.getMessage() + ")");
        }
    }

    /**
     * @param random the random source.
     * @return a count, at least 1.
     */
    public int draw(final SeededRandom random)
    {
        final double value = switch (kind)
        {
            case CONSTANT -> a;
            case UNIFORM -> a + random.nextInt((int)(b - a) + 1);
            case NORMAL -> a + b * random.nextGaussian();
            case LOGNORMAL -> Math.exp(a + b * random.nextGaussian());
        };
        return (int)Math.max(1, Math.min(Integer.MAX_VALUE, Math.round(value)));
    }

    @Override
    public String toString()
    {
        return text;
    }
}
