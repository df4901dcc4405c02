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
    /** Waiting requests the LoRA cap held back in the last step ({@code num_skipped_waiting_reqs}; sent when > 0). */
    public int numSkippedWaitingReqs;
    /**
     * The engine's LoRA adapters, sent as {@code waiting_lora_adapters} / {@code running_lora_adapters} (adapter name
     * to request count, only adapters with requests; each map only when not empty, its default), or null for none.
     */
    public LoraCounts loraCounts;
    /**
     * {@code spec_decoding_stats.num_spec_tokens}: K, or 0 when the engine does not speculate or nothing was drafted
     * since the last report (then {@code spec_decoding_stats} is not sent, its default None).
     */
    public int numSpecTokens;
    /** Drafts verified since the last report. */
    public long specNumDrafts;
    /** Draft tokens verified since the last report. */
    public long specNumDraftTokens;
    /** Draft tokens accepted since the last report. */
    public long specNumAcceptedTokens;
    /** Accepted drafts per position since the last report; the first {@link #numSpecTokens} entries are sent. */
    public long[] specNumAcceptedTokensPerPos = new long[0];

    /** Requests per LoRA adapter, read when the stats are encoded (on the engine's thread). */
    public interface LoraCounts
    {
        /**
         * @return adapters known, indexed 0 to this minus one.
         */
        int adapters();

        /**
         * @param adapter an index.
         * @return its name in UTF-8.
         */
        byte[] nameUtf8(int adapter);

        /**
         * @param adapter an index.
         * @return its waiting requests.
         */
        int waiting(int adapter);

        /**
         * @param adapter an index.
         * @return its running requests.
         */
        int running(int adapter);
    }
}
