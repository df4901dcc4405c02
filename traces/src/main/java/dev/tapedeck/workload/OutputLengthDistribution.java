package dev.tapedeck.workload;

import dev.tapedeck.latency.SeededRandom;

/**
 * How long an answer is when the client does not cap it: an empirical distribution, drawn by inverse CDF with linear
 * interpolation between percentiles.
 * <p>
 * The default table holds every second percentile (0, 2, ..., 100) of {@code output_length} over the 12,031 requests
 * of the Mooncake FAST'25 conversation trace (kvcache-ai/Mooncake, Apache-2.0; a production chat service): median
 * 350 tokens, p90 597, max 2000. Immutable; safe to share.
 */
public final class OutputLengthDistribution
{
    private static final int[] MOONCAKE_CONVERSATION_PERCENTILES = {
        1, 3, 8, 13, 18, 24, 31, 39, 56, 79, 100, 122, 144, 169, 193, 213, 230, 247, 265, 278, 291, 305, 317, 328,
        339, 350, 361, 370, 380, 390, 399, 408, 418, 427, 438, 447, 457, 466, 477, 491, 504, 519, 535, 551, 571, 597,
        628, 670, 738, 892, 2000,
    };

    /** The default: Mooncake conversation output lengths. */
    public static final OutputLengthDistribution MOONCAKE_CONVERSATION =
        new OutputLengthDistribution(MOONCAKE_CONVERSATION_PERCENTILES);

    private final int[] quantiles;

    /**
     * @param quantiles evenly spaced quantiles from the minimum to the maximum, non-decreasing, at least two.
     */
    public OutputLengthDistribution(final int[] quantiles)
    {
        if (quantiles.length < 2)
        {
            throw new IllegalArgumentException("need at least two quantiles");
        }
        for (int i = 1; i < quantiles.length; i++)
        {
            if (quantiles[i] < quantiles[i - 1] || quantiles[i - 1] < 1)
            {
                throw new IllegalArgumentException("quantiles must be positive and non-decreasing");
            }
        }
        this.quantiles = quantiles.clone();
    }

    /**
     * @param random generator to draw from.
     * @return an output length of at least 1 token.
     */
    public int draw(final SeededRandom random)
    {
        final double position = random.nextDouble() * (quantiles.length - 1);
        final int lower = (int)position;
        final double fraction = position - lower;
        final int upper = Math.min(lower + 1, quantiles.length - 1);
        return Math.max(1, (int)Math.round(quantiles[lower] + fraction * (quantiles[upper] - quantiles[lower])));
    }

    /**
     * @return the median of the table.
     */
    public int median()
    {
        return quantiles[quantiles.length / 2];
    }
}
