package dev.tapedeck.latency;

import java.util.Arrays;

/**
 * One request's decode pacing state for a model that paces decodes ({@link LatencyModel#newDecodePacing}): which
 * recorded request donates its steps at each concurrency level (picked on first use and kept, so a request's gaps stay
 * correlated as a real request's are), and the tokens of the last step drawn.
 * <p>
 * Owned by one request; read and written on its engine's thread only.
 */
public final class DecodePacing
{
    final int contextCell;
    final int[] donorByConcurrency;
    int tokens = 1;

    DecodePacing(final int contextCell, final int concurrencyBuckets)
    {
        this.contextCell = contextCell;
        donorByConcurrency = new int[concurrencyBuckets];
        Arrays.fill(donorByConcurrency, -1);
    }

    /**
     * @return tokens the last paced step emits (at least 1).
     */
    public int tokens()
    {
        return tokens;
    }
}
