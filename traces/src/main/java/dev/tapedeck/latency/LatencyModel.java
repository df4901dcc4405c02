package dev.tapedeck.latency;

/**
 * How long engine work takes. The engine composes steps exactly as vLLM's V1 scheduler does; a latency model
 * decides how long each step lasts and, optionally, how long a request's first token is held back.
 * <p>
 * Implementations are called on the engine's thread only and draw randomness from the generator passed in, so
 * the same seed gives the same timings. They must not allocate per call.
 * <p>
 * Contract: durations are never negative (both shipped models guarantee it, and the engine clamps a negative step
 * duration to 0). The engine asks for the duration of non-empty steps only. {@code LatencyModelTest} checks the
 * shipped models' formulas.
 */
public interface LatencyModel
{
    /**
     * @param step the composed step.
     * @param random the engine's generator.
     * @return the wall-clock duration of this step in nanoseconds, at least 0.
     */
    long stepDurationNs(StepShape step, SeededRandom random);

    /**
     * The least time between a request's admission (scheduled for the first time) and the emission of its first
     * token. The engine emits the first token at the end of the step that completes the prompt or at admission
     * plus this delay, whichever is later. Batch-driven models return 0: their prefill cost is in the steps.
     *
     * @param promptTokens prompt length in tokens.
     * @param cachedTokens prompt tokens served from the prefix cache.
     * @param runningRequests requests in the running set at admission, this one included.
     * @param random the engine's generator.
     * @return delay in nanoseconds, at least 0.
     */
    long firstTokenDelayNs(int promptTokens, int cachedTokens, int runningRequests, SeededRandom random);

    /**
     * Time between the end of the step that completes a request's prompt and the emission of its first token: work a
     * measured TTFT holds that the engine's steps do not charge (a trace model's TTFT beyond the prefill chunks it
     * prices). The engine emits the first token at the later of admission plus {@link #firstTokenDelayNs} and the end
     * of the prefill plus this overhead. Called once per request, at admission, with the same arguments.
     *
     * @param promptTokens prompt length in tokens.
     * @param cachedTokens prompt tokens already in the engine's KV at admission (prefix-cache hits, and tokens loaded
     *     from a remote prefill).
     * @param runningRequests requests in the running set at admission, this one included.
     * @param random the engine's generator.
     * @return overhead in nanoseconds, at least 0; 0 by default.
     */
    default long firstTokenOverheadNs(final int promptTokens, final int cachedTokens, final int runningRequests,
        final SeededRandom random)
    {
        return 0;
    }

    /**
     * Per-request decode pacing: a model that times each decoding request's steps itself (a trace's recorded gaps)
     * returns a fresh state for a new request; the engine then asks {@link #pacedStepNs} for every decode step of the
     * request, and the step's decode time is the gap of its pacing request (the one with the longest context).
     * Called once per request, at submission (it may allocate).
     *
     * @param promptTokens the request's prompt length.
     * @return the request's pacing state, or null when the model times steps with {@link #stepDurationNs} only.
     */
    default DecodePacing newDecodePacing(final int promptTokens)
    {
        return null;
    }

    /**
     * One decode step of a paced request: how long it takes and how many tokens it emits
     * ({@link DecodePacing#tokens()}, more than 1 for a speculative-decoding burst). Must not allocate.
     *
     * @param pacing the request's state from {@link #newDecodePacing}.
     * @param runningRequests requests in the running set.
     * @param random the engine's generator.
     * @return the step's decode time in nanoseconds, at least 0.
     */
    default long pacedStepNs(final DecodePacing pacing, final int runningRequests, final SeededRandom random)
    {
        throw new UnsupportedOperationException(describe() + " does not pace decodes");
    }

    /**
     * @return {@code K} when the model's bursts come from speculative decoding with K drafts (the engine then does
     *     vLLM's spec-decode accounting), else 0.
     */
    default int speculativeTokens()
    {
        return 0;
    }

    /**
     * The natural output length of a request without {@code max_tokens} (EOS emulation).
     *
     * @param random the request's generator.
     * @return a length of at least 1, or 0 to let the engine use its own output-length distribution.
     */
    default int sampleOutputLength(final SeededRandom random)
    {
        return 0;
    }

    /**
     * @return a one-line human-readable description, printed at start-up.
     */
    String describe();
}
