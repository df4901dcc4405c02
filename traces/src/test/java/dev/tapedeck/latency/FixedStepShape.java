package dev.tapedeck.latency;

/**
 * A step shape with given numbers, for the latency models' tests. Immutable.
 *
 * @param decodeRequests requests decoding.
 * @param prefillTokens prompt tokens computed.
 * @param prefillRequests requests with a prefill chunk.
 * @param decodeContextTokens the decodes' KV context.
 * @param runningRequests the running set.
 * @param prefillAttentionPairs the chunks' query-key pairs.
 * @param scheduledTokens tokens scheduled, drafts included.
 */
record FixedStepShape(int decodeRequests, int prefillTokens, int prefillRequests, long decodeContextTokens,
    int runningRequests, long prefillAttentionPairs, int scheduledTokens) implements StepShape
{
    /**
     * A step without speculative drafts.
     */
    FixedStepShape(final int decodeRequests, final int prefillTokens, final int prefillRequests,
        final long decodeContextTokens, final int runningRequests, final long prefillAttentionPairs)
    {
        this(decodeRequests, prefillTokens, prefillRequests, decodeContextTokens, runningRequests,
            prefillAttentionPairs, decodeRequests + prefillTokens);
    }

    /**
     * A step without speculative drafts whose chunks start at depth 0.
     */
    FixedStepShape(final int decodeRequests, final int prefillTokens, final int prefillRequests,
        final long decodeContextTokens, final int runningRequests)
    {
        this(decodeRequests, prefillTokens, prefillRequests, decodeContextTokens, runningRequests, 0);
    }
}
