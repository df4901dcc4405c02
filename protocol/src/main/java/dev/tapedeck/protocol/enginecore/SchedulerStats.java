package dev.tapedeck.protocol.enginecore;

/**
 * What an engine reports of itself with every output batch ({@code EngineCoreOutputs.scheduler_stats}); the prefix
 * cache counters are deltas since the previous report, as vLLM's frontend adds them up. Plain mutable data owned by
 * the engine's thread.
 */
public final class SchedulerStats
{
    /** Requests running. */
    public int numRunningReqs;
    /** Requests waiting. */
    public int numWaitingReqs;
    /** Steps so far. */
    public long stepCounter;
    /** Data-parallel wave. */
    public int currentWave;
    /** KV cache usage in [0, 1]. */
    public double kvCacheUsage;
    /** New requests that looked up the prefix cache since the last report. */
    public long prefixCacheRequests;
    /** Prompt tokens looked up since the last report. */
    public long prefixCacheQueries;
    /** Prompt tokens found since the last report. */
    public long prefixCacheHits;
}
