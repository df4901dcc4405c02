package dev.tapedeck.kv;

import java.util.Arrays;

import org.agrona.collections.Hashing;

/**
 * The prefix cache's index: which block caches a hash. An open-addressing table (linear probing, backward-shift
 * deletion) of block ids only; the hashes it is keyed by stay where the pool already keeps them ({@code hashes}, one
 * per block), so an entry costs 4 bytes of table instead of the 16 a {@code long -> long} map spends. Sized for
 * every block of the hash array at a load of at most three quarters (linear probing stays short: a
 * miss probes about 8 slots at that load, 2.5 at the half most pools stay under): a pool of 33,600 blocks holds a
 * 256 KiB table once every block has been used; it grows ({@link #rebind}) with the pool's arrays and allocates
 * nothing otherwise.
 * <p>
 * <b>Not thread safe</b>: owned by one {@link BlockPool}.
 */
final class BlockHashIndex
{
    static final int NONE = -1;

    private long[] hashes;
    private int[] slots;
    private int mask;
    private int size;

    /**
     * @param hashes the pool's per-block hashes, read as the keys of the blocks put here.
     */
    BlockHashIndex(final long[] hashes)
    {
        this.hashes = hashes;
        slots = new int[tableLength(hashes.length)];
        mask = slots.length - 1;
        clear();
    }

    /**
     * Follow the pool's grown hash array (same hashes for the blocks already put, room for more blocks): the table
     * grows to keep the same load bound, re-placing every entry (the only allocation, once per growth).
     *
     * @param grownHashes the pool's new per-block hashes.
     */
    void rebind(final long[] grownHashes)
    {
        hashes = grownHashes;
        final int length = tableLength(grownHashes.length);
        if (length > slots.length)
        {
            final int[] old = slots;
            slots = new int[length];
            mask = length - 1;
            Arrays.fill(slots, NONE);
            for (final int block : old)
            {
                if (NONE != block)
                {
                    place(block);
                }
            }
        }
    }

    private static int tableLength(final int blocks)
    {
        final long wanted = Math.max(2L, (4L * blocks + 2) / 3);
        final long length = Long.highestOneBit(wanted - 1) << 1;
        if (length > 1 << 30)
        {
            throw new IllegalArgumentException("a pool of " + blocks + " blocks is too large to index");
        }
        return (int)length;
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
        place(block);
        size++;
    }

    private void place(final int block)
    {
        int slot = Hashing.hash(hashes[block], mask);
        while (NONE != slots[slot])
        {
            slot = (slot + 1) & mask;
        }
        slots[slot] = block;
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
