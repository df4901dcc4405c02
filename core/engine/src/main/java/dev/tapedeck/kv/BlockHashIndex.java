package dev.tapedeck.kv;

import java.util.Arrays;

import org.agrona.collections.Hashing;

/**
 * The prefix cache's index: which block caches a hash. An open-addressing table (linear probing, backward-shift
 * deletion) of block ids only; the hashes it is keyed by stay where the pool already keeps them ({@code hashes}, one
 * per block), so an entry costs 4 bytes of table instead of the 16 a {@code long -> long} map spends. Sized at
 * construction for every block of the pool at a load of at most three quarters (linear probing stays short: a
 * miss probes about 8 slots at that load, 2.5 at the half most pools stay under): a pool of 33,600 blocks holds a
 * 256 KiB table, and nothing allocates afterwards.
 * <p>
 * <b>Not thread safe</b>: owned by one {@link BlockPool}.
 */
final class BlockHashIndex
{
    static final int NONE = -1;

    private final long[] hashes;
    private final int[] slots;
    private final int mask;
    private int size;

    /**
     * @param hashes the pool's per-block hashes, read as the keys of the blocks put here.
     */
    BlockHashIndex(final long[] hashes)
    {
        this.hashes = hashes;
        final long wanted = Math.max(2L, (4L * hashes.length + 2) / 3);
        final long length = Long.highestOneBit(wanted - 1) << 1;
        if (length > 1 << 30)
        {
            throw new IllegalArgumentException("a pool of " + hashes.length + " blocks is too large to index");
        }
        slots = new int[(int)length];
        mask = (int)length - 1;
        clear();
    }

    /**
     * @return blocks indexed.
     */
    int size()
    {
        return size;
    }

    /**
     * @param hash a block hash.
     * @return the block indexed under it, or {@link #NONE}.
     */
    int get(final long hash)
    {
        for (int slot = Hashing.hash(hash, mask); ; slot = (slot + 1) & mask)
        {
            final int block = slots[slot];
            if (NONE == block || hashes[block] == hash)
            {
                return block;
            }
        }
    }

    /**
     * Index {@code block} under its hash, which {@code hashes[block]} must already hold and no indexed block may
     * share.
     *
     * @param block a block id.
     */
    void put(final int block)
    {
        int slot = Hashing.hash(hashes[block], mask);
        while (NONE != slots[slot])
        {
            slot = (slot + 1) & mask;
        }
        slots[slot] = block;
        size++;
    }

    /**
     * Remove the block indexed under {@code hash}, if any; {@code hashes} must still hold the hash of every indexed
     * block.
     *
     * @param hash a block hash.
     */
    void remove(final long hash)
    {
        int slot = Hashing.hash(hash, mask);
        while (true)
        {
            final int block = slots[slot];
            if (NONE == block)
            {
                return;
            }
            if (hashes[block] == hash)
            {
                break;
            }
            slot = (slot + 1) & mask;
        }
        size--;
        int hole = slot;
        for (int next = (hole + 1) & mask; NONE != slots[next]; next = (next + 1) & mask)
        {
            final int home = Hashing.hash(hashes[slots[next]], mask);
            // move the entry back into the hole unless its home lies cyclically in (hole, next]
            final boolean homeBetween = hole <= next ? hole < home && home <= next : hole < home || home <= next;
            if (!homeBetween)
            {
                slots[hole] = slots[next];
                hole = next;
            }
        }
        slots[hole] = NONE;
    }

    /**
     * Forget every block.
     */
    void clear()
    {
        Arrays.fill(slots, NONE);
        size = 0;
    }
}
