package dev.tapedeck.kv;

import java.util.Arrays;

import dev.tapedeck.latency.SeededRandom;

/**
 * vLLM's KV-cache residency sampling ({@code --kv-cache-metrics}): a sampled share of the blocks the pool hands out
 * is followed from allocation to eviction. A block is sampled when it is allocated (with probability
 * {@code --kv-cache-metrics-sample}); a prefix-cache hit on it is an access (the last four are kept); when the pool
 * takes it for new content (the eviction, as vLLM notes it, whether or not it still held a hash) the listener hears
 * its lifetime (allocation to eviction), its idle time (last access, or allocation, to eviction) and the gaps between
 * its kept accesses. Times are the engine's: the start of the step that allocates, hits or evicts
 * ({@link #stepStarted}).
 * <p>
 * Nothing allocates after construction. <b>Not thread safe</b>: owned by one engine's pool.
 */
public final class KvResidency
{
    /** Accesses kept per sampled block (vLLM's ring of four). */
    private static final int HISTORY = 4;

    /** Hears of sampled blocks' evictions. */
    public interface Listener
    {
        /**
         * @param lifetimeNs allocation to eviction.
         * @param idleNs last access (or allocation) to eviction.
         */
        void onBlockEvicted(long lifetimeNs, long idleNs);

        /**
         * @param gapNs time between two successive accesses of an evicted block.
         */
        void onBlockReuseGap(long gapNs);
    }

    private final double sampleRate;
    private final SeededRandom random;
    private final Listener listener;
    private final boolean[] sampled;
    private final long[] birthNs;
    private final long[] lastAccessNs;
    private final long[] accessNs;
    private final int[] accessCount;
    private long nowNs;

    /**
     * @param capacity blocks in the pool.
     * @param sampleRate share of allocated blocks followed, in (0, 1].
     * @param seed seed of the sampling draws.
     * @param listener where evictions go.
     */
    public KvResidency(final int capacity, final double sampleRate, final long seed, final Listener listener)
    {
        if (!(sampleRate > 0 && sampleRate <= 1))
        {
            throw new IllegalArgumentException("--kv-cache-metrics-sample must be in (0, 1], got " + sampleRate);
        }
        this.sampleRate = sampleRate;
        this.random = new SeededRandom(SeededRandom.mix(seed, 0x4b56L));
        this.listener = listener;
        sampled = new boolean[capacity];
        birthNs = new long[capacity];
        lastAccessNs = new long[capacity];
        accessNs = new long[capacity * HISTORY];
        accessCount = new int[capacity];
    }

    /**
     * @param startNs the start of the step now being scheduled, on the engine's clock.
     */
    public void stepStarted(final long startNs)
    {
        nowNs = startNs;
    }

    void allocated(final int block)
    {
        sampled[block] = random.nextDouble() < sampleRate;
        if (sampled[block])
        {
            birthNs[block] = nowNs;
            lastAccessNs[block] = nowNs;
            accessCount[block] = 0;
        }
    }

    void accessed(final int block)
    {
        if (!sampled[block])
        {
            return;
        }
        lastAccessNs[block] = nowNs;
        accessNs[block * HISTORY + accessCount[block] % HISTORY] = nowNs;
        accessCount[block]++;
    }

    void evicted(final int block)
    {
        if (!sampled[block])
        {
            return;
        }
        sampled[block] = false;
        listener.onBlockEvicted(nowNs - birthNs[block], nowNs - lastAccessNs[block]);
        final int count = accessCount[block];
        final int kept = Math.min(count, HISTORY);
        for (int i = 1; i < kept; i++)
        {
            final int from = (count - kept + i - 1) % HISTORY;
            final int to = (count - kept + i) % HISTORY;
            listener.onBlockReuseGap(accessNs[block * HISTORY + to] - accessNs[block * HISTORY + from]);
        }
    }

    void reset()
    {
        Arrays.fill(sampled, false);
    }
}
