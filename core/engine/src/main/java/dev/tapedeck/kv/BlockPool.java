package dev.tapedeck.kv;

import java.util.Arrays;

/**
 * A fixed pool of KV-cache blocks with vLLM V1's prefix-cache semantics: every block has a reference count (requests
 * sharing a prefix share its blocks); a block whose count drops to 0 goes to the tail of the free queue but keeps its
 * hash, so it can still be hit; a new block is taken from the head of the free queue (the least recently freed),
 * and if that block still held a hash, the hash is dropped from the cache (an eviction); a cache hit on a free block
 * takes it out of the free queue wherever it sits. The free queue is a doubly linked list over two int arrays and
 * the hash index ({@link BlockHashIndex}) is an open-addressing table of block ids. About 31 bytes per block
 * taken: a pool of 33,600 blocks (an 8B model's on one GPU) holds 1.0 MiB once every block has been used.
 * <p>
 * The arrays grow with use: blocks never taken since the last reset sit at the head of vLLM's free queue in id
 * order (the queue starts as every block in id order, a taken block comes back at the tail), so the pool hands them
 * out from a high-water mark before any block of its free list, and keeps arrays only for the blocks below it,
 * doubled when the mark passes their length. A lightly used pool (a hundred simulated GPUs in one process, each
 * serving a few requests) holds kilobytes, not a megabyte. Growing is the only allocation, at most about
 * log2(blocks / 1024) times per pool (and in {@link #watch}, growing its copy to a longer hit than any before).
 * <p>
 * A hash is cached by at most one block: caching a hash that another block already holds leaves the second block
 * uncached (vLLM keeps both; the difference only matters for which copy a later hit takes).
 * <p>
 * An optional {@link KvEventSink} hears of every eviction ({@code BlockRemoved}) and reset ({@code AllBlocksCleared});
 * the caller that {@link #cache caches} blocks reports them as stored, since only it knows their tokens.
 * <p>
 * <b>Not thread safe</b>: owned by one engine's thread.
 */
public final class BlockPool
{
    private static final int NONE = -1;

    /** Arrays start with room for this many blocks (or the whole pool, if smaller). */
    static final int INITIAL_BLOCKS = 1024;

    private final int capacity;
    /** Blocks {@code [taken, capacity)} have not been taken since the last reset: free and uncached. */
    private int taken;
    private int[] refCounts;
    private long[] hashes;
    private boolean[] hashed;
    /** Free blocks, least recently freed first. */
    private final IndexList free;
    private final BlockHashIndex blockByHash;
    private long evictions;
    private long changes;
    private KvEventSink events;
    private KvResidency residency;
    /**
     * The watched hit ({@link #watch}): how often each block is in it (a lookup finds a block once, twice only on a
     * hash collision), the blocks, and what has happened since.
     */
    private short[] watchCounts;
    private int[] watched = new int[64];
    private int watchedCount;
    private int watchedFree;
    private boolean watchingMiss;
    private long watchedMissHash;
    private boolean watchHolds;

    /**
     * @param capacity blocks in the pool.
     */
    public BlockPool(final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("a block pool needs at least one block, got " + capacity);
        }
        this.capacity = capacity;
        final int length = Math.min(capacity, INITIAL_BLOCKS);
        refCounts = new int[length];
        hashes = new long[length];
        hashed = new boolean[length];
        free = new IndexList(length);
        watchCounts = new short[length];
        blockByHash = new BlockHashIndex(hashes);
        reset();
    }

    /**
     * Report evictions and resets to {@code sink} (KV-cache events); null for none.
     *
     * @param sink where the pool's events go.
     */
    public void eventSink(final KvEventSink sink)
    {
        events = sink;
    }

    /**
     * Follow a sample of blocks from allocation to eviction ({@code --kv-cache-metrics}); null for none.
     *
     * @param value the residency tracker.
     */
    public void residency(final KvResidency value)
    {
        residency = value;
    }

    /**
     * Forget every cached hash and free every block (in id order); only sound when no request holds blocks. The
     * event sink, if any, is told {@link KvEventSink#allBlocksCleared()}.
     */
    public void reset()
    {
        if (null != events)
        {
            events.allBlocksCleared();
        }
        Arrays.fill(refCounts, 0);
        Arrays.fill(hashed, false);
        if (null != residency)
        {
            residency.reset();
        }
        watchHolds = false;
        blockByHash.clear();
        free.clear();
        taken = 0;
        changes++;
    }

    /**
     * @return blocks in the pool.
     */
    public int capacity()
    {
        return capacity;
    }

    /**
     * @return blocks in the free queue (cached or not).
     */
    public int freeBlocks()
    {
        return free.size() + capacity - taken;
    }

    /**
     * @return blocks referenced by at least one request.
     */
    public int usedBlocks()
    {
        return taken - free.size();
    }

    /**
     * @return the used fraction, in [0, 1] (cached but free blocks count as free, as in vLLM).
     */
    public double usage()
    {
        return (double)usedBlocks() / capacity;
    }

    /**
     * @return a count that moves whenever a block is taken, released, cached or evicted: while it stays, every lookup
     *     and every free count is as it was.
     */
    public long changes()
    {
        return changes;
    }

    /**
     * @return cached blocks dropped from the cache because their block was reused.
     */
    public long evictions()
    {
        return evictions;
    }

    /**
     * @return hashes currently cached.
     */
    public int cachedBlocks()
    {
        return blockByHash.size();
    }

    /**
     * @param hash a block hash.
     * @return the block caching it, or -1.
     */
    public int cachedBlock(final long hash)
    {
        return blockByHash.get(hash);
    }

    /**
     * @param block a block id.
     * @return its reference count.
     */
    public int refCount(final int block)
    {
        return block < taken ? refCounts[block] : untouched(block, 0);
    }

    /**
     * @param block a block id.
     * @return true if the block caches a hash.
     */
    public boolean isCached(final int block)
    {
        return block < taken ? hashed[block] : 0 != untouched(block, 0);
    }

    /**
     * @param block a cached block id.
     * @return its hash (meaningful only when {@link #isCached(int)}).
     */
    public long hashOf(final int block)
    {
        return block < taken ? hashes[block] : untouched(block, 0);
    }

    /**
     * @return the block the next {@link #allocate()} takes, or -1 when none is free.
     */
    public int nextToAllocate()
    {
        return taken < capacity ? taken : free.head();
    }

    /**
     * Share a cached block (a prefix hit): its count goes up, and a free block leaves the free queue.
     *
     * @param block a block id.
     */
    public void acquire(final int block)
    {
        if (block >= taken)
        {
            throw new IllegalArgumentException("block " + untouched(block, block) + " was never taken: not shared");
        }
        if (0 == refCounts[block]++)
        {
            unlinkFree(block);
            watchedFree -= watchCounts[block];
        }
        if (null != residency)
        {
            residency.accessed(block);
        }
    }

    /**
     * Take the least recently freed block for new content; if it cached a hash, the hash is evicted.
     *
     * @return the block id with a reference count of 1, or -1 when every block is in use.
     */
    public int allocate()
    {
        if (taken < capacity)
        {
            return allocateUntouched();
        }
        final int block = free.head();
        if (NONE == block)
        {
            return NONE;
        }
        unlinkFree(block);
        if (null != residency)
        {
            residency.evicted(block);
            residency.allocated(block);
        }
        if (0 != watchCounts[block])
        {
            watchHolds = false; // a block of the watched hit is taken for new content: its hash is evicted
        }
        if (hashed[block])
        {
            hashed[block] = false;
            blockByHash.remove(hashes[block]);
            evictions++;
            if (null != events)
            {
                events.blockRemoved(hashes[block]);
            }
        }
        refCounts[block] = 1;
        return block;
    }

    /**
     * Drop one reference; a block nobody references goes to the tail of the free queue, keeping its cached hash.
     *
     * @param block a block id.
     */
    public void release(final int block)
    {
        if (block >= taken || refCounts[block] <= 0)
        {
            throw new IllegalStateException("block " + block + " released more often than acquired");
        }
        if (0 == --refCounts[block])
        {
            appendFree(block);
            watchedFree += watchCounts[block];
        }
    }

    /**
     * Make a full block findable by its hash.
     *
     * @param block a referenced block id.
     * @param hash the block's hash.
     * @return true if cached; false if another block already caches the hash or the block already caches one.
     */
    public boolean cache(final int block, final long hash)
    {
        if (block >= taken)
        {
            throw new IllegalArgumentException("block " + untouched(block, block) + " was never taken: not cached");
        }
        if (hashed[block] || NONE != blockByHash.get(hash))
        {
            return false;
        }
        hashes[block] = hash;
        hashed[block] = true;
        blockByHash.put(block);
        changes++;
        if (watchingMiss && hash == watchedMissHash)
        {
            watchHolds = false; // the hash that ended the watched hit is cached: the hit may now be longer
        }
        return true;
    }

    /**
     * Watch a prefix lookup's result: the blocks it found and, when it stopped at a hash that is not cached, that
     * hash. The watch holds ({@link #watchHolds()}) until a found block is taken for new content (its hash evicted),
     * the missing hash is cached, or the pool is reset: while it holds, the same lookup finds the same blocks, and
     * {@link #watchedFreeBlocks()} is how many of them are free (a block found twice counts twice). Replaces the
     * previous watch. The pool keeps its own copy of the blocks, grown (the only allocation) when a hit is longer than
     * any watched before.
     *
     * @param blocks the blocks found, in order.
     * @param count how many.
     * @param missed true if the lookup stopped at a hash that is not cached.
     * @param missHash that hash (when {@code missed}).
     */
    public void watch(final int[] blocks, final int count, final boolean missed, final long missHash)
    {
        unwatch();
        if (count > capacity)
        {
            throw new IllegalArgumentException(count + " blocks to watch in a pool of " + capacity);
        }
        if (count > watched.length)
        {
            watched = new int[Math.min(capacity, Math.max(count, 2 * watched.length))];
        }
        int free = 0;
        for (int i = 0; i < count; i++)
        {
            final int block = blocks[i];
            watched[i] = block;
            if (block >= taken)
            {
                watchedCount = i;
                unwatch();
                throw new IllegalArgumentException("block " + untouched(block, block) + " was never taken: not a hit");
            }
            if (Short.MAX_VALUE == watchCounts[block])
            {
                watchedCount = i; // so that unwatch() takes back the counts added so far
                unwatch();
                throw new IllegalArgumentException("block " + block + " found " + Short.MAX_VALUE +
                    " times in one hit");
            }
            watchCounts[block]++;
            if (0 == refCounts[block])
            {
                free++;
            }
        }
        watchedCount = count;
        watchedFree = free;
        watchingMiss = missed;
        watchedMissHash = missHash;
        watchHolds = true;
    }

    /**
     * Stop watching (the watch no longer holds).
     */
    public void unwatch()
    {
        for (int i = 0; i < watchedCount; i++)
        {
            watchCounts[watched[i]] = 0;
        }
        watchedCount = 0;
        watchedFree = 0;
        watchingMiss = false;
        watchHolds = false;
    }

    /**
     * @return true while the watched lookup would find the same blocks ({@link #watch}).
     */
    public boolean watchHolds()
    {
        return watchHolds;
    }

    /**
     * @return how many of the watched blocks are free (meaningful while the watch holds).
     */
    public int watchedFreeBlocks()
    {
        return watchedFree;
    }

    private int allocateUntouched()
    {
        final int block = taken;
        if (block == refCounts.length)
        {
            grow(Math.min(capacity, 2 * block));
        }
        taken++;
        changes++;
        if (null != residency)
        {
            residency.evicted(block);
            residency.allocated(block);
        }
        refCounts[block] = 1;
        return block;
    }

    private void grow(final int length)
    {
        refCounts = Arrays.copyOf(refCounts, length);
        hashes = Arrays.copyOf(hashes, length);
        hashed = Arrays.copyOf(hashed, length);
        watchCounts = Arrays.copyOf(watchCounts, length);
        free.grow(length);
        blockByHash.rebind(hashes);
    }

    /** The answer for a block not taken since the reset, after checking that it is one of the pool's. */
    private int untouched(final int block, final int answer)
    {
        if (block < 0 || block >= capacity)
        {
            throw new IndexOutOfBoundsException("block " + block + " of a pool of " + capacity);
        }
        return answer;
    }

    private void appendFree(final int block)
    {
        changes++;
        free.append(block);
    }

    private void unlinkFree(final int block)
    {
        changes++;
        free.remove(block);
    }
}
