package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The content a prefill writes into a block it advertises and a decode checks after the pull ({@code --kv-verify}):
 * 64-bit words derived from a per-block seed, so a lost, torn, stale or misplaced block is caught. The seed comes
 * from the prefill's request id and the block's index in that request, which both sides know from
 * {@code kv_transfer_params}.
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
