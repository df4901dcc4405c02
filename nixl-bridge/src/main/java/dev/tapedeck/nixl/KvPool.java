package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The KV bytes of one engine: {@code numBlocks} blocks of {@code blockBytes} each, block {@code i} at offset
 * {@code i * blockBytes} (vllm-vcr's layout; vLLM keeps one region per layer and K/V, which a later layout can add
 * without changing the wire). The memory is off-heap: Java direct buffers, or memory a native plane allocated (UCX
 * maps it so a same-host read is one-sided over shared memory). A direct buffer holds at most 2 GiB, so the pool is
 * split into regions of whole blocks of at most 1 GiB each.
 * <p>
 * <b>Threading</b>: the pool is plain memory. Which bytes a thread may touch is the caller's contract: a prefill
 * writes a block before it advertises it and leaves it alone until the decode's notification; a decode reads a block
 * only after its pull completed.
 */
public final class KvPool
{
    /** Largest region: 1 GiB, half of what a direct buffer can address. */
    public static final long MAX_REGION_BYTES = 1L << 30;

    private final ByteBuffer[] regions;
    private final int numBlocks;
    private final int blockBytes;
    private final int blocksPerRegion;

    private KvPool(final ByteBuffer[] regions, final int numBlocks, final int blockBytes, final int blocksPerRegion)
    {
        this.regions = regions;
        this.numBlocks = numBlocks;
        this.blockBytes = blockBytes;
        this.blocksPerRegion = blocksPerRegion;
    }

    /**
     * @param numBlocks blocks in the pool.
     * @param blockBytes bytes per block, a multiple of 8.
     * @return how many blocks one region holds.
     */
    public static int blocksPerRegion(final int numBlocks, final int blockBytes)
    {
        checkShape(numBlocks, blockBytes);
        return (int)Math.min(numBlocks, Math.max(1, MAX_REGION_BYTES / blockBytes));
    }

    /**
     * A pool of Java direct memory (the {@code noop} and {@code tcp} planes).
     *
     * @param numBlocks blocks in the pool.
     * @param blockBytes bytes per block, a multiple of 8.
     * @return the pool, zero-filled.
     */
    public static KvPool allocateDirect(final int numBlocks, final int blockBytes)
    {
        final int perRegion = blocksPerRegion(numBlocks, blockBytes);
        final ByteBuffer[] regions = new ByteBuffer[(numBlocks + perRegion - 1) / perRegion];
        for (int r = 0; r < regions.length; r++)
        {
            final int blocks = Math.min(perRegion, numBlocks - r * perRegion);
            regions[r] = ByteBuffer.allocateDirect(blocks * blockBytes);
        }
        return new KvPool(regions, numBlocks, blockBytes, perRegion);
    }

    /**
     * A pool over memory someone else allocated (a native plane).
     *
     * @param regions views of the memory, each {@link #blocksPerRegion} blocks long except perhaps the last.
     * @param numBlocks blocks in the pool.
     * @param blockBytes bytes per block, a multiple of 8.
     * @return the pool.
     */
    public static KvPool wrap(final ByteBuffer[] regions, final int numBlocks, final int blockBytes)
    {
        final int perRegion = blocksPerRegion(numBlocks, blockBytes);
        long capacity = 0;
        for (final ByteBuffer region : regions)
        {
            capacity += region.capacity();
        }
        if (capacity < (long)numBlocks * blockBytes)
        {
            throw new IllegalArgumentException("regions hold " + capacity + " bytes, the pool needs " +
                (long)numBlocks * blockBytes);
        }
        return new KvPool(regions.clone(), numBlocks, blockBytes, perRegion);
    }

    private static void checkShape(final int numBlocks, final int blockBytes)
    {
        if (numBlocks < 1 || blockBytes < 8 || blockBytes % 8 != 0)
        {
            throw new IllegalArgumentException("a KV pool needs at least one block of a positive multiple of 8 " +
                "bytes, got " + numBlocks + " blocks of " + blockBytes + " bytes");
        }
    }

    /**
     * @return blocks in the pool.
     */
    public int numBlocks()
    {
        return numBlocks;
    }

    /**
     * @return bytes per block.
     */
    public int blockBytes()
    {
        return blockBytes;
    }

    /**
     * @return the pool's size in bytes.
     */
    public long bytes()
    {
        return (long)numBlocks * blockBytes;
    }

    /**
     * @param blockId a block of this pool.
     * @return a little-endian view of exactly that block (a new buffer object; its position and limit are the
     *     caller's).
     */
    public ByteBuffer block(final int blockId)
    {
        if (blockId < 0 || blockId >= numBlocks)
        {
            throw new IndexOutOfBoundsException("block " + blockId + " is not in a pool of " + numBlocks);
        }
        final int offset = (blockId % blocksPerRegion) * blockBytes;
        return regions[blockId / blocksPerRegion].duplicate().position(offset).limit(offset + blockBytes).slice()
            .order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @param blockId a block of this pool.
     * @return its offset from the pool's start, in bytes.
     */
    public long offsetOf(final int blockId)
    {
        return (long)blockId * blockBytes;
    }
}
