package dev.tapedeck.kv;

/**
 * The blocks of a KV tier in host (CPU) memory, after vLLM's CPU offloading manager with its default LRU policy: a
 * fixed number of blocks, each holding the KV of one block hash; a store takes a free block or evicts the least
 * recently used one, a lookup that hits makes its block the most recently used. A stored block can be read only once
 * its copy from the GPU ended ({@code readyNs}); a block is never evicted while its copy in runs, nor while a load
 * from it runs (its pin count).
 * <p>
 * Only the hashes, times, pins and the LRU links ({@link IndexList}) are kept (28 bytes a block and about 6 of
 * index, allocated at construction): no KV bytes.
 * <b>Not thread safe</b>: owned by the engine's thread.
 */
public final class HostKvTier
{
    /** {@link #lookup} and {@link #store} return this for no block. */
    public static final int NONE = BlockHashIndex.NONE;

    private final long[] hashes;
    private final long[] readyNs;
    private final int[] pins;
    /** Blocks holding a hash, least recently used first (blocks are handed out in id order and never left empty). */
    private final IndexList lru;
    private final BlockHashIndex index;
    private long evicted;

    /**
     * @param capacityBlocks how many blocks the tier holds, at least 1.
     */
    public HostKvTier(final int capacityBlocks)
    {
        if (capacityBlocks < 1)
        {
            throw new IllegalArgumentException("a host KV tier needs at least one block, got " + capacityBlocks);
        }
        hashes = new long[capacityBlocks];
        readyNs = new long[capacityBlocks];
        pins = new int[capacityBlocks];
        lru = new IndexList(capacityBlocks);
        index = new BlockHashIndex(hashes);
    }

    /**
     * @return the tier's size in blocks.
     */
    public int capacity()
    {
        return hashes.length;
    }

    /**
     * @return blocks holding a hash.
     */
    public int used()
    {
        return lru.size();
    }

    /**
     * @return blocks evicted to make room, since creation.
     */
    public long evicted()
    {
        return evicted;
    }

    /**
     * @param hash a block hash.
     * @return true when a block holds it (ready or still being copied in).
     */
    public boolean contains(final long hash)
    {
        return NONE != index.get(hash);
    }

    /**
     * Find a block that can be read now, and make it the most recently used.
     *
     * @param hash a block hash.
     * @param nowNs the engine's time.
     * @return the block, or {@link #NONE} when no block holds the hash or its copy has not ended.
     */
    public int lookup(final long hash, final long nowNs)
    {
        final int block = index.get(hash);
        if (NONE == block || readyNs[block] - nowNs > 0)
        {
            return NONE;
        }
        lru.remove(block);
        lru.append(block);
        return block;
    }

    /**
     * Store a hash (nothing changes when a block holds it already), evicting the least recently used block that is
     * neither being read nor still being written when the tier is full.
     *
     * @param hash the block hash.
     * @param nowNs the engine's time: blocks whose copy in ends later are not evicted.
     * @param readyAtNs when its copy ends and it can be read.
     * @param evictedHashes where an evicted hash goes (index 0), or null.
     * @return 1 when stored without eviction, 2 when a block was evicted for it (its hash in
     *     {@code evictedHashes[0]}), 0 when it was there already, -1 when no block can be evicted (vLLM's manager
     *     then does not store).
     */
    public int store(final long hash, final long nowNs, final long readyAtNs, final long[] evictedHashes)
    {
        if (NONE != index.get(hash))
        {
            return 0;
        }
        int block;
        int outcome = 1;
        if (lru.size() < hashes.length)
        {
            block = lru.size();
        }
        else
        {
            block = lru.head();
            while (NONE != block && (pins[block] > 0 || readyNs[block] - nowNs > 0))
            {
                block = lru.next(block);
            }
            if (NONE == block)
            {
                return -1;
            }
            index.remove(hashes[block]);
            lru.remove(block);
            if (null != evictedHashes)
            {
                evictedHashes[0] = hashes[block];
            }
            evicted++;
            outcome = 2;
        }
        hashes[block] = hash;
        readyNs[block] = readyAtNs;
        pins[block] = 0;
        index.put(block);
        lru.append(block);
        return outcome;
    }

    /**
     * Keep a block from eviction while a load reads it.
     *
     * @param block a block {@link #lookup} returned.
     */
    public void pin(final int block)
    {
        pins[block]++;
    }

    /**
     * @param block a block pinned before.
     */
    public void unpin(final int block)
    {
        pins[block]--;
    }

    /**
     * @param block a block.
     * @return the hash it holds.
     */
    public long hashOf(final int block)
    {
        return hashes[block];
    }
}
