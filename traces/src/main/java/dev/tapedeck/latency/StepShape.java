package dev.tapedeck.latency;

/**
 * What a latency model sees of one composed engine step: how much work the batch carries.
 * <p>
 * A view owned by the engine; it is valid only for the duration of the call it is passed to and must not be
 * kept. Read on the engine's thread only.
 */
public interface StepShape
{
    /**
     * @return requests that generate one token in this step (running decodes).
     */
    int decodeRequests();

    /**
     * @return prompt tokens computed in this step (sum of the prefill chunks, cached tokens excluded).
     */
    int prefillTokens();

    /**
     * @return requests that have a prefill chunk in this step.
     */
    int prefillRequests();

    /**
     * @return sum, over the decoding requests, of their context length (prompt plus generated tokens): the KV
     * depth their attention reads.
     */
    long decodeContextTokens();

    /**
     * @return query-key pairs the prefill chunks' causal attention covers: for each chunk of {@code c} tokens after
     * {@code s} computed ones, {@code c x s + c (c + 1) / 2}. What the physics model charges attention FLOPs for.
     */
    default long prefillAttentionPairs()
    {
        return 0;
    }

    /**
     * @return requests in the running set when the step was composed (scheduled in this step or not).
     */
    int runningRequests();

    /**
     * @return tokens scheduled in the step, speculative drafts included (what counts against the token budget).
     */
    default int scheduledTokens()
    {
        return decodeRequests() + prefillTokens();
    }
}
