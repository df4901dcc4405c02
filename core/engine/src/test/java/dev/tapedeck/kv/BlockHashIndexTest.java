package dev.tapedeck.kv;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The prefix-cache index against a {@link HashMap}: random puts and removes over a small table (so probe runs wrap
 * around the end and backward-shift deletion moves entries across it), hashes drawn from a narrow range so that many
 * share a home slot, and every hash looked up after each change.
 */
class BlockHashIndexTest
{
    @Test
    void shouldAgreeWithAHashMapThroughRandomPutsAndRemoves()
    {
        for (final int blocks : new int[] {1, 2, 3, 6, 7, 12, 64, 1000}) // 3, 6, 12: tables three quarters full
        {
            final long[] hashes = new long[blocks];
            final BlockHashIndex index = new BlockHashIndex(hashes);
            final Map<Long, Integer> expected = new HashMap<>();
            final boolean[] indexed = new boolean[blocks];
            final SplittableRandom random = new SplittableRandom(blocks);
            for (int operation = 0; operation < 20_000; operation++)
            {
                final int block = random.nextInt(blocks);
                if (indexed[block])
                {
                    index.remove(hashes[block]);
                    expected.remove(hashes[block]);
                    indexed[block] = false;
                }
                else
                {
                    final long hash = random.nextInt(4 * blocks) - 2L * blocks;
                    if (!expected.containsKey(hash))
                    {
                        hashes[block] = hash;
                        index.put(block);
                        expected.put(hash, block);
                        indexed[block] = true;
                    }
                }
                assertEquals(expected.size(), index.size());
                if (0 == operation % 97 || blocks < 100)
                {
                    for (long hash = -2L * blocks; hash < 2L * blocks; hash++)
                    {
                        assertEquals(expected.getOrDefault(hash, BlockHashIndex.NONE), index.get(hash),
                            "hash " + hash + " after operation " + operation + " on " + blocks + " blocks");
                    }
                }
            }
        }
    }

    @Test
    void shouldRemoveNothingForAHashNotIndexedAndForgetAllOnClear()
    {
        final long[] hashes = {Long.MIN_VALUE, Long.MAX_VALUE, 0};
        final BlockHashIndex index = new BlockHashIndex(hashes);
        index.put(0);
        index.put(1);
        index.put(2);
        index.remove(42);
        assertEquals(3, index.size());
        assertEquals(0, index.get(Long.MIN_VALUE));
        assertEquals(1, index.get(Long.MAX_VALUE));
        assertEquals(2, index.get(0));
        index.clear();
        assertEquals(0, index.size());
        assertEquals(BlockHashIndex.NONE, index.get(0));
    }

    @Test
    void shouldKeepEveryEntryFindableWhenThePoolsHashesGrow()
    {
        long[] hashes = new long[4];
        final BlockHashIndex index = new BlockHashIndex(hashes);
        int blocks = 0;
        for (int length = 4; length <= 4096; length *= 2)
        {
            if (length > hashes.length)
            {
                hashes = Arrays.copyOf(hashes, length);
                index.rebind(hashes);
            }
            for (; blocks < length; blocks++)
            {
                hashes[blocks] = blocks * 0x9E3779B97F4A7C15L;
                index.put(blocks);
            }
            for (int block = 0; block < blocks; block++)
            {
                assertEquals(block, index.get(hashes[block]), "block " + block + " of " + blocks);
            }
            assertEquals(BlockHashIndex.NONE, index.get(-1));
        }
        assertEquals(4096, index.size());
        index.remove(hashes[17]);
        assertEquals(BlockHashIndex.NONE, index.get(hashes[17]));
        assertEquals(18, index.get(hashes[18]));
    }
}
