package dev.tapedeck.kv;

import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block pool's hot path allocates nothing once warm: a block's whole life (allocate, evicting a cached hash;
 * cache under a new hash; release to the free queue), prefix lookups and hits, measured with the thread's
 * allocated-bytes counter (as {@code BlockPoolBenchmark} measures it with JMH's {@code -prof gc}).
 */
class BlockPoolAllocationTest
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
    private static final int BLOCKS = 1 << 14;

    @Test
    void shouldAllocateNothingPerBlockOnceWarm()
    {
        final BlockPool pool = new BlockPool(BLOCKS);
        long nextHash = 1;
        for (int round = 0; round < 3; round++) // warm: every block cached at least once, the hash index at its size
        {
            for (int i = 0; i < BLOCKS; i++)
            {
                lifeOfABlock(pool, nextHash++);
            }
        }
        final long evictionsBefore = pool.evictions();
        final long before = THREADS.getCurrentThreadAllocatedBytes();
        long found = 0;
        for (int i = 0; i < 200_000; i++)
        {
            lifeOfABlock(pool, nextHash++);
            final int hit = pool.cachedBlock(nextHash - 1 - (i % 1000));
            if (hit >= 0)
            {
                pool.acquire(hit);
                pool.release(hit);
                found++;
            }
        }
        final long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        assertTrue(pool.evictions() - evictionsBefore >= 200_000, "every allocation evicted a cached block");
        assertEquals(200_000, found, "the last thousand hashes are still cached");
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes for 200,000 block lives and prefix hits");
    }

    private static void lifeOfABlock(final BlockPool pool, final long hash)
    {
        final int block = pool.allocate();
        pool.cache(block, hash);
        pool.release(block);
    }
}
