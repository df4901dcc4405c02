package dev.tapedeck.engine;

/**
 * Order in which waiting requests are admitted (vLLM {@code --scheduling-policy}).
 */
public enum SchedulingPolicy
{
    /** First come, first served. */
    FCFS,
    /** Lowest {@code priority} value first, then arrival order (vLLM semantics: smaller is more urgent). */
    PRIORITY
}
