package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The content a prefill writes into a block it advertises and a decode checks after the pull ({@code --kv-verify}):
 * 64-bit words derived from a per-block seed, so a lost, torn, stale or misplaced block is caught. The seed of a block
 * is a chained hash of the prompt's tokens up to the block's end ({@link #promptSeeds}), which both sides know: two
 * requests that share a cached prefix block write the same bytes into it, as real KV would be.
 * <p>
 * Stateless; thread safe.
 */
public final class KvBlockPattern
{
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private KvBlockPattern()
    {
    }

    /**
     * The seed of every block of a prompt: block {@code i}'s is a chained hash of tokens {@code [0, min((i + 1) *
     * blockSize, prompt length))}, so equal prefixes give equal seeds.
     *
     * @param promptTokenIds the prompt.
     * @param blockSize tokens per block.
     * @return one seed per block, {@code ceil(prompt length / blockSize)} of them.
     */
    public static long[] promptSeeds(final int[] promptTokenIds, final int blockSize)
    {
        final long[] seeds = new long[(promptTokenIds.length + blockSize - 1) / blockSize];
        long h = 0x6a09e667f3bcc908L;
        for (int i = 0; i < promptTokenIds.length; i++)
        {
            h = (h ^ (promptTokenIds[i] & 0xffffffffL)) * 0x100000001b3L;
            if ((i + 1) % blockSize == 0 || i + 1 == promptTokenIds.length)
            {
                seeds[i / blockSize] = mix(h + GOLDEN * (i + 1));
            }
        }
        return seeds;
    }

    /**
     * @param requestId the prefill's request id ({@code remote_request_id}).
     * @param blockIndex the block's index among the request's blocks ({@code remote_block_ids}).
     * @return the block's seed.
     */
    public static long seed(final String requestId, final int blockIndex)
    {
        long h = 0xcbf29ce484222325L;
        for (final byte b : requestId.getBytes(StandardCharsets.UTF_8))
        {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return mix(h + GOLDEN * (blockIndex + 1L));
    }

    /**
     * Write the block's pattern.
     *
     * @param block a block view ({@link KvPool#block}), written from index 0 to its limit.
     * @param seed the block's seed.
     */
    public static void fill(final ByteBuffer block, final long seed)
    {
        final int words = block.limit() / Long.BYTES;
        for (int i = 0; i < words; i++)
        {
            block.putLong(i * Long.BYTES, seed ^ (i * GOLDEN));
        }
    }

    /**
     * @param block a block view ({@link KvPool#block}).
     * @param seed the seed it should have been written with.
     * @return the index of the first wrong 64-bit word, or -1 when the block is intact.
     */
    public static int firstMismatch(final ByteBuffer block, final long seed)
    {
        final int words = block.limit() / Long.BYTES;
        for (int i = 0; i < words; i++)
        {
            if (block.getLong(i * Long.BYTES) != (seed ^ (i * GOLDEN)))
            {
                return i;
            }
        }
        return -1;
    }

    private static long mix(final long value)
    {
        long z = value;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
