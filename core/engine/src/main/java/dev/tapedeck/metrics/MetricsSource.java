package dev.tapedeck.metrics;

/**
 * One engine as {@code /metrics} sees it: its stored counters and histograms plus the gauges read at scrape time.
 * Read on the engine's thread only.
 */
public interface MetricsSource
{
    /**
     * @return the engine's counters and histograms.
     */
    EngineMetrics metrics();

    /**
     * @return requests in the running set.
     */
    int numRunning();

    /**
     * @return requests waiting for admission.
     */
    int numWaiting();

    /**
     * @return used fraction of the KV cache, in [0, 1].
     */
    double kvCacheUsage();

    /**
     * @return waiting requests held back by a transient constraint (the LoRA cap) rather than by capacity.
     */
    default int numWaitingDeferred()
    {
        return 0;
    }

    /**
     * @param running true for the LoRA adapters with running requests, false for those with waiting requests.
     * @param names where their names are added.
     */
    default void loraAdapters(final boolean running, final java.util.Collection<String> names)
    {
    }

    /**
     * @return the engine time (on the engine's clock) the running or waiting adapters last changed,
     *     {@link Long#MIN_VALUE} if never.
     */
    default long loraAdaptersChangedNs()
    {
        return Long.MIN_VALUE;
    }
}
