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
}
