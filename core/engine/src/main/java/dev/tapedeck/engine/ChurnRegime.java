package dev.tapedeck.engine;

import dev.tapedeck.latency.DecodePacing;

/**
 * vllm-vcr's decode regime at admission: "churn" when a request with more than
 * {@value DecodePacing#BIG_CHUNK_TOKENS} uncached prompt tokens was admitted within
 * {@link DecodePacing#CHURN_WINDOW_NS} before, else calm. A trace latency model draws a churn request's decode gaps
 * from the recorded requests that saw big prefill chunks beside them. <b>Not thread safe</b>; owned by one engine.
 */
final class ChurnRegime
{
    private long lastBigAdmissionNs = Long.MIN_VALUE;

    /**
     * @param nowNs the admission's time.
     * @param uncachedTokens the admitted request's prompt tokens not in the KV cache.
     * @return true when the request is admitted in the churn regime (its own size does not count).
     */
    boolean admit(final long nowNs, final int uncachedTokens)
    {
        final boolean churn = Long.MIN_VALUE != lastBigAdmissionNs &&
            nowNs - lastBigAdmissionNs <= DecodePacing.CHURN_WINDOW_NS;
        if (uncachedTokens > DecodePacing.BIG_CHUNK_TOKENS)
        {
            lastBigAdmissionNs = nowNs;
        }
        return churn;
    }
}
