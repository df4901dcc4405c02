package dev.tapedeck.kv;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * vLLM's residency sample on a real {@link BlockPool}: a sampled block's lifetime runs from its allocation to the
 * allocation that takes it for new content, its idle time from its last prefix hit, and its reuse gaps are those
 * between its last four hits; a reset forgets the sample.
 */
class KvResidencyTest
{
    private static final long SECOND = 1_000_000_000L;

    private final List<long[]> evictions = new ArrayList<>();
    private final List<Long> gaps = new ArrayList<>();
    private final KvResidency.Listener listener = new KvResidency.Listener()
    {
        @Override
        public void onBlockEvicted(final long lifetimeNs, final long idleNs)
        {
            evictions.add(new long[] {lifetimeNs, idleNs});
        }

        @Override
        public void onBlockReuseGap(final long gapNs)
        {
            gaps.add(gapNs);
        }
    };

    @Test
    void shouldMeasureLifetimeIdleTimeAndTheLastReuseGaps()
    {
        final BlockPool pool = new BlockPool(1);
        final KvResidency residency = new KvResidency(1, 1.0, 7, listener);
        pool.residency(residency);
        residency.stepStarted(0);
        final int block = pool.allocate();
        pool.cache(block, 42);
        pool.release(block);
        for (final long at : new long[] {1, 3, 4, 6, 10})
        {
            residency.stepStarted(at * SECOND);
            pool.acquire(pool.cachedBlock(42)); // a prefix hit
            pool.release(block);
        }
        residency.stepStarted(20 * SECOND);
        assertEquals(block, pool.allocate(), "the only block is taken for new content: the eviction");
        assertEquals(1, evictions.size());
        assertEquals(20 * SECOND, evictions.get(0)[0], "lifetime: allocation to eviction");
        assertEquals(10 * SECOND, evictions.get(0)[1], "idle: last hit to eviction");
        assertEquals(List.of(SECOND, 2 * SECOND, 4 * SECOND), gaps, "the gaps of the last four hits: 3, 4, 6, 10");
    }

    @Test
    void shouldSampleTheGivenShareAndForgetOnReset()
    {
        final int blocks = 4000;
        final BlockPool pool = new BlockPool(blocks);
        pool.residency(new KvResidency(blocks, 0.25, 3, listener));
        for (int i = 0; i < blocks; i++)
        {
            pool.release(pool.allocate());
        }
        for (int i = 0; i < blocks; i++)
        {
            pool.release(pool.allocate()); // every block taken again: every sampled one is evicted
        }
        assertTrue(Math.abs(evictions.size() - blocks / 4) < blocks / 20, "about a quarter: " + evictions.size());
        evictions.clear();
        pool.reset();
        for (int i = 0; i < blocks; i++)
        {
            pool.allocate();
        }
        assertEquals(List.of(), evictions, "after a reset no block was sampled before");
    }
}
