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
     * @return a one-line human-readable description, printed at start-up.
     */
    String describe();
}
