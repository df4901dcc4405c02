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
    /** An admission of more uncached prompt tokens than this is a big chunk: it marks the regime as churn. */
    public static final int BIG_CHUNK_TOKENS = 4096;
    /** A request admitted within this time after a big-chunk admission decodes in the churn regime. */
    public static final long CHURN_WINDOW_NS = 1_000_000_000L;

    private final int calmCell;
    private final int churnCellOffset;
    int contextCell;
    final int[] donorByConcurrency;
    int tokens = 1;

    DecodePacing(final int calmCell, final int churnCellOffset, final int concurrencyBuckets)
    {
        this.calmCell = calmCell;
        this.churnCellOffset = churnCellOffset;
        contextCell = calmCell;
        donorByConcurrency = new int[concurrencyBuckets];
        Arrays.fill(donorByConcurrency, -1);
    }

    /**
     * Set the regime the request decodes in, at its admission: donors are then drawn from the recorded requests that
     * saw the same regime (big prefill chunks admitted beside them, or not).
     *
     * @param churn true when a big-chunk admission ({@link #BIG_CHUNK_TOKENS}) happened within
     *     {@link #CHURN_WINDOW_NS} before this request's.
     */
    public void regime(final boolean churn)
    {
        contextCell = calmCell + (churn ? churnCellOffset : 0);
    }

    /**
     * @return tokens the last paced step emits (at least 1).
     */
    public int tokens()
    {
        return tokens;
    }
}
