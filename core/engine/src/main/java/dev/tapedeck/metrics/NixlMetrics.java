package dev.tapedeck.metrics;

/**
 * vLLM's NIXL connector metrics for one engine ({@code vllm:nixl_*}): per-transfer histograms of duration, post time,
 * bytes and descriptors with vLLM's buckets, and counters of failed transfers, failed notifications and requests whose
 * KV expired on the prefill before its decode read it.
 * <p>
 * <b>Not thread safe</b>: written and read on the engine's thread.
 */
public final class NixlMetrics
{
    private static final double[] POST_TIME_BUCKETS = {
        0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0,
    };
    private static final double[] XFER_TIME_BUCKETS = {
        0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0,
    };
    private static final double[] DESCRIPTOR_BUCKETS = {
        10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000,
    };

    final Histogram xferTimeSeconds = new Histogram(XFER_TIME_BUCKETS);
    final Histogram postTimeSeconds = new Histogram(POST_TIME_BUCKETS);
    final Histogram bytesTransferred = new Histogram(bytesBuckets());
    final Histogram numDescriptors = new Histogram(DESCRIPTOR_BUCKETS);
    long numFailedTransfers;
    long numFailedNotifications;
    long numKvExpiredReqs;

    /** 2 KiB to 8 GiB in powers of four, as vLLM's {@code 2 ** (10 + i) for i in range(1, 25, 2)}. */
    private static double[] bytesBuckets()
    {
        final double[] bounds = new double[12];
        for (int i = 0; i < bounds.length; i++)
        {
            bounds[i] = Math.pow(2, 11 + 2 * i);
        }
        return bounds;
    }

    /**
     * A transfer completed.
     *
     * @param transferNs post to completion.
     * @param postNs time to post it.
     * @param bytes bytes moved.
     * @param descriptors blocks moved.
     */
    public void onTransfer(final long transferNs, final long postNs, final long bytes, final int descriptors)
    {
        xferTimeSeconds.observe(transferNs / 1e9);
        postTimeSeconds.observe(postNs / 1e9);
        bytesTransferred.observe(bytes);
        numDescriptors.observe(descriptors);
    }

    /** A transfer (or the handshake before it) failed. */
    public void onFailedTransfer()
    {
        numFailedTransfers++;
    }

    /** A done-notification could not be delivered. */
    public void onFailedNotification()
    {
        numFailedNotifications++;
    }

    /** A prefill freed a request's blocks because no notification came before the expiry. */
    public void onKvExpired()
    {
        numKvExpiredReqs++;
    }

    /**
     * @return transfers observed.
     */
    public long transfers()
    {
        return xferTimeSeconds.count();
    }

    /**
     * @return failed transfers.
     */
    public long failedTransfers()
    {
        return numFailedTransfers;
    }

    /**
     * @return failed notifications.
     */
    public long failedNotifications()
    {
        return numFailedNotifications;
    }

    /**
     * @return requests whose KV expired.
     */
    public long kvExpiredReqs()
    {
        return numKvExpiredReqs;
    }
}
