package dev.tapedeck.kv;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The block pool's vLLM semantics: allocation from the head of the free queue, release to its tail, reference counts,
 * cached free blocks kept findable until their block is reused (LRU eviction), a hit taking a block out of the middle
 * of the free queue.
 */
class BlockPoolTest
{
    @Test
    void shouldHandOutEveryBlockOnceThenRefuse()
    {
        final BlockPool pool = new BlockPool(3);
        assertEquals(0, pool.allocate());
        assertEquals(1, pool.allocate());
        assertEquals(2, pool.allocate());
        assertEquals(-1, pool.allocate());
        assertEquals(0, pool.freeBlocks());
        assertEquals(1.0, pool.usage());
        assertEquals(1, pool.refCount(1));
    }

    @Test
    void shouldReuseTheLeastRecentlyFreedBlockFirst()
    {
        final BlockPool pool = new BlockPool(4);
        for (int i = 0; i < 4; i++)
        {
            pool.allocate();
        }
        pool.release(2);
        pool.release(0);
        pool.release(3);
        assertEquals(3, pool.freeBlocks());
        assertEquals(0.25, pool.usage());
        assertEquals(2, pool.allocate());
        assertEquals(0, pool.allocate());
        assertEquals(3, pool.allocate());
    }

    @Test
    void shouldKeepASharedBlockUntilTheLastReferenceGoes()
    {
        final BlockPool pool = new BlockPool(2);
        final int block = pool.allocate();
        pool.cache(block, 42L);
        pool.acquire(block);
        assertEquals(2, pool.refCount(block));
        pool.release(block);
        assertEquals(1, pool.freeBlocks(), "still referenced once");
        pool.release(block);
        assertEquals(2, pool.freeBlocks());
        assertThrows(IllegalStateException.class, () -> pool.release(block));
    }

    @Test
    void shouldKeepAFreedBlockCachedUntilItIsReused()
    {
        final BlockPool pool = new BlockPool(2);
        final int a = pool.allocate();
        final int b = pool.allocate();
        pool.cache(a, 100L);
        pool.cache(b, 200L);
        pool.release(a);
        pool.release(b);
        assertEquals(a, pool.cachedBlock(100L), "free but still cached");
        assertEquals(2, pool.cachedBlocks());
        assertEquals(a, pool.allocate(), "the head of the free queue is reused");
        assertEquals(-1, pool.cachedBlock(100L), "reusing it evicts its hash");
        assertFalse(pool.isCached(a));
        assertEquals(b, pool.cachedBlock(200L));
        assertEquals(1, pool.evictions());
    }

    @Test
    void shouldTakeAHitBlockOutOfTheFreeQueue()
    {
        final BlockPool pool = new BlockPool(3);
        final int a = pool.allocate();
        final int b = pool.allocate();
        final int c = pool.allocate();
        pool.cache(b, 7L);
        pool.release(a);
        pool.release(b);
        pool.release(c);
        assertEquals(a, pool.nextToAllocate());
        pool.acquire(pool.cachedBlock(7L));
        assertEquals(1, pool.refCount(b));
        assertEquals(2, pool.freeBlocks());
        assertEquals(a, pool.allocate());
        assertEquals(c, pool.allocate(), "b left the queue between a and c");
        assertEquals(-1, pool.allocate());
        assertEquals(b, pool.cachedBlock(7L), "a hit block is never evicted while used");
        assertEquals(0, pool.evictions());
    }

    @Test
    void shouldCacheAHashInOneBlockOnly()
    {
        final BlockPool pool = new BlockPool(2);
        final int a = pool.allocate();
        final int b = pool.allocate();
        assertTrue(pool.cache(a, 5L));
        assertFalse(pool.cache(b, 5L));
        assertFalse(pool.cache(a, 6L), "a block caches one hash");
        assertEquals(a, pool.cachedBlock(5L));
        assertEquals(5L, pool.hashOf(a));
    }

    @Test
    void shouldForgetEverythingOnReset()
    {
        final BlockPool pool = new BlockPool(2);
        final int a = pool.allocate();
        pool.cache(a, 9L);
        pool.release(a);
        pool.reset();
        assertEquals(-1, pool.cachedBlock(9L));
        assertEquals(2, pool.freeBlocks());
        assertEquals(0, pool.allocate());
    }

    @Test
    void shouldHoldAWatchUntilAFoundBlockIsEvictedAndCountItsFreeBlocks()
    {
        final BlockPool pool = new BlockPool(4);
        final int a = pool.allocate();
        final int b = pool.allocate();
        pool.cache(a, 10L);
        pool.cache(b, 11L);
        pool.release(b); // free, still cached: the tail of the free queue
        pool.watch(new int[] {a, b}, 2, true, 12L);
        assertTrue(pool.watchHolds());
        assertEquals(1, pool.watchedFreeBlocks(), "b is free");
        pool.release(a);
        assertEquals(2, pool.watchedFreeBlocks());
        pool.acquire(b);
        assertEquals(1, pool.watchedFreeBlocks());
        pool.release(b);
        final int other = pool.allocate(); // an uncached free block: nothing watched is evicted
        assertTrue(pool.watchHolds());
        pool.cache(other, 13L); // another hash than the missing one
        assertTrue(pool.watchHolds());
        pool.allocate();
        pool.allocate(); // takes a, evicting 10
        assertFalse(pool.watchHolds(), "a found block was evicted");
    }

    @Test
    void shouldBreakAWatchWhenTheMissingHashIsCachedOrThePoolReset()
    {
        final BlockPool pool = new BlockPool(3);
        final int a = pool.allocate();
        pool.cache(a, 10L);
        pool.watch(new int[] {a}, 1, true, 11L);
        final int b = pool.allocate();
        pool.cache(b, 11L);
        assertFalse(pool.watchHolds(), "the lookup would now find a longer hit");
        pool.watch(new int[] {a, b}, 2, false, 0L);
        assertTrue(pool.watchHolds());
        assertEquals(0, pool.watchedFreeBlocks());
        pool.unwatch();
        assertFalse(pool.watchHolds());
        pool.watch(new int[] {a, b}, 2, false, 0L);
        pool.release(a);
        pool.release(b);
        pool.reset();
        assertFalse(pool.watchHolds());
    }

    /**
     * The pool keeps arrays only for blocks it has handed out (a high-water mark) but must behave as vLLM's free queue
     * of every block: checked against an explicit queue of all blocks through random allocations, hits, releases and
     * resets on pools larger than the arrays' first size, so the arrays grow (and the hash index re-places its
     * entries) while blocks are held and cached.
     */
    @Test
    void shouldHandOutBlocksInVllmsFreeQueueOrderWhileItsArraysGrow()
    {
        for (final int capacity : new int[] {5, BlockPool.INITIAL_BLOCKS + 1, 3 * BlockPool.INITIAL_BLOCKS + 7})
        {
            final BlockPool pool = new BlockPool(capacity);
            final ArrayDeque<Integer> freeQueue = new ArrayDeque<>();
            final int[] refCounts = new int[capacity];
            final Map<Long, Integer> cached = new HashMap<>();
            final Map<Integer, Long> hashOfBlock = new HashMap<>();
            final List<Integer> held = new ArrayList<>();
            resetModel(capacity, freeQueue, refCounts, cached, hashOfBlock, held);
            final SplittableRandom random = new SplittableRandom(capacity);
            long nextHash = 1;
            int highestTaken = -1;
            for (int operation = 0; operation < 40 * capacity; operation++)
            {
                final int choice = random.nextInt(100);
                if (0 == (operation + 1) % (10 * capacity)) // four resets, each after every block was taken
                {
                    assertEquals(capacity - 1, highestTaken, "the pool was used through before the reset");
                    highestTaken = -1;
                    for (final int block : held)
                    {
                        pool.release(block);
                    }
                    pool.reset();
                    resetModel(capacity, freeQueue, refCounts, cached, hashOfBlock, held);
                }
                else if (choice < 45)
                {
                    final Integer expected = freeQueue.pollFirst();
                    final int block = pool.allocate();
                    assertEquals(null == expected ? -1 : expected, block, "allocation " + operation);
                    if (block >= 0)
                    {
                        highestTaken = Math.max(highestTaken, block);
                        final Long evicted = hashOfBlock.remove(block);
                        if (null != evicted)
                        {
                            cached.remove(evicted);
                        }
                        refCounts[block] = 1;
                        held.add(block);
                        if (random.nextBoolean())
                        {
                            final long hash = nextHash++;
                            assertTrue(pool.cache(block, hash));
                            cached.put(hash, block);
                            hashOfBlock.put(block, hash);
                        }
                    }
                }
                else if (choice < 85 && !held.isEmpty())
                {
                    final int block = held.remove(random.nextInt(held.size()));
                    pool.release(block);
                    if (0 == --refCounts[block])
                    {
                        freeQueue.addLast(block);
                    }
                }
                else if (nextHash > 1)
                {
                    final long hash = 1 + random.nextLong(nextHash - 1);
                    final Integer expected = cached.get(hash);
                    assertEquals(null == expected ? -1 : expected, pool.cachedBlock(hash), "hit on " + hash);
                    if (null != expected)
                    {
                        pool.acquire(expected);
                        if (0 == refCounts[expected]++)
                        {
                            freeQueue.remove(expected);
                        }
                        held.add(expected);
                    }
                }
                assertEquals(freeQueue.size(), pool.freeBlocks(), "free blocks after operation " + operation);
                assertEquals(capacity - freeQueue.size(), pool.usedBlocks());
                assertEquals(null == freeQueue.peekFirst() ? -1 : freeQueue.peekFirst(), pool.nextToAllocate());
                assertEquals(cached.size(), pool.cachedBlocks());
            }
            for (int block = 0; block < capacity; block++)
            {
                assertEquals(refCounts[block], pool.refCount(block), "block " + block);
                assertEquals(hashOfBlock.containsKey(block), pool.isCached(block), "block " + block);
            }
        }
    }

    @Test
    void shouldRefuseToShareOrCacheABlockNeverTaken()
    {
        final BlockPool pool = new BlockPool(4);
        assertEquals(0, pool.allocate());
        assertEquals(0, pool.refCount(3));
        assertFalse(pool.isCached(3));
        assertThrows(IllegalArgumentException.class, () -> pool.acquire(2));
        assertThrows(IllegalArgumentException.class, () -> pool.cache(2, 7L));
        assertThrows(IllegalStateException.class, () -> pool.release(2));
        assertThrows(IndexOutOfBoundsException.class, () -> pool.refCount(4));
        assertThrows(IllegalArgumentException.class, () -> pool.watch(new int[] {0, 1}, 2, false, 0));
        assertEquals(3, pool.freeBlocks());
    }

    private static void resetModel(
        final int capacity,
        final ArrayDeque<Integer> freeQueue,
        final int[] refCounts,
        final Map<Long, Integer> cached,
        final Map<Integer, Long> hashOfBlock,
        final List<Integer> held)
    {
        freeQueue.clear();
        for (int block = 0; block < capacity; block++)
        {
            freeQueue.addLast(block);
        }
        Arrays.fill(refCounts, 0);
        cached.clear();
        hashOfBlock.clear();
        held.clear();
    }
}
