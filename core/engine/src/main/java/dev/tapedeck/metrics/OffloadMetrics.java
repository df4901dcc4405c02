package dev.tapedeck.metrics;

/**
 * vLLM's offloading connector metrics for one engine, by direction ({@code transfer_type} {@code GPU_to_CPU} for
 * stores, {@code CPU_to_GPU} for loads): bytes moved and seconds spent ({@code vllm:kv_offload_total_bytes},
 * {@code vllm:kv_offload_total_time}, counters) and the size of each transfer ({@code vllm:kv_offload_size}, a
 * histogram with vLLM's buckets), and the host tier's use.
 * <p>
 * <b>Not thread safe</b>: written and read on the engine's thread.
 */
public final class OffloadMetrics
{
    /** The {@code transfer_type} label values, stores first. */
    public static final String[] TRANSFER_TYPES = {"GPU_to_CPU", "CPU_to_GPU"};
    private static final double[] SIZE_BUCKETS = {1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6};

    final long[] bytes = new long[2];
    final double[] seconds = new double[2];
    final Histogram[] sizes = {new Histogram(SIZE_BUCKETS), new Histogram(SIZE_BUCKETS)};
    private final int capacityBlocks;
    private int usedBlocks;
    private long hitTokens;
    private long loads;

    /**
     * @param capacityBlocks the host tier's size in blocks.
     */
    public OffloadMetrics(final int capacityBlocks)
    {
        this.capacityBlocks = capacityBlocks;
    }

    /**
     * Blocks were copied from the GPU to the host tier.
     *
     * @param transferBytes bytes copied.
     * @param transferNs how long the copy took.
     * @param usedBlocksAfter host blocks in use after it.
     */
    public void onStore(final long transferBytes, final long transferNs, final int usedBlocksAfter)
    {
        bytes[0] += transferBytes;
        seconds[0] += transferNs / 1e9;
        sizes[0].observe(transferBytes);
        usedBlocks = usedBlocksAfter;
    }

    /**
     * Blocks were copied from the host tier back to the GPU.
     *
     * @param transferBytes bytes copied.
     * @param transferNs how long the copy took.
     * @param tokens prompt tokens the copy holds (not computed).
     */
    public void onLoad(final long transferBytes, final long transferNs, final int tokens)
    {
        bytes[1] += transferBytes;
        seconds[1] += transferNs / 1e9;
        sizes[1].observe(transferBytes);
        hitTokens += tokens;
        loads++;
    }

    /**
     * @param transferType 0 for stores, 1 for loads.
     * @return bytes copied that way.
     */
    public long bytes(final int transferType)
    {
        return bytes[transferType];
    }

    /**
     * @return loads from the host tier.
     */
    public long loads()
    {
        return loads;
    }

    /**
     * @return prompt tokens loaded from the host tier instead of computed.
     */
    public long hitTokens()
    {
        return hitTokens;
    }

    /**
     * @return the host tier's share in use, 0 to 1.
     */
    public double usage()
    {
        return (double)usedBlocks / capacityBlocks;
    }
}
