package dev.tapedeck.engine;

/**
 * A KV tier in host (CPU) memory behind the GPU's, as vLLM configures it: {@code --kv-transfer-config} with the
 * {@code OffloadingConnector} ({@code cpu_bytes_to_use}, or {@code num_cpu_blocks} before 0.14; {@code block_size})
 * or LMCache's {@code LMCacheConnectorV1} ({@code lmcache.max_local_cpu_size}), or {@code --kv-offloading-size} with
 * {@code --kv-offloading-backend native|lmcache}. Each engine (data-parallel rank) has a tier of this size; the size
 * is the total over its tensor-parallel workers, as vLLM's is.
 * <p>
 * Immutable; thread safe.
 *
 * @param connector the connector's name as vLLM's {@code kv_connector} gives it (for reports and logs).
 * @param cpuBytes host memory of the tier, over all tensor-parallel workers; 0 when {@code cpuBlocks} gives the
 *     size.
 * @param cpuBlocks the tier's size in offloaded blocks ({@code num_cpu_blocks}); 0 when {@code cpuBytes} gives it.
 * @param blockTokens tokens per offloaded block, a multiple of the GPU block size; 0 for the GPU block size.
 * @param kvBytesPerToken KV bytes of one token over all layers and all tensor-parallel workers (sizes the tier).
 * @param kvBytesPerTokenPerGpu KV bytes of one token on one GPU (each GPU copies its share over its own link).
 * @param bytesPerSecond host-to-device (and device-to-host) bandwidth of one GPU's link, bytes per second.
 */
public record KvOffloadSettings(String connector, long cpuBytes, int cpuBlocks, int blockTokens,
    long kvBytesPerToken, long kvBytesPerTokenPerGpu, double bytesPerSecond)
{
    /** vLLM's connector name for its own CPU offloading. */
    public static final String OFFLOADING_CONNECTOR = "OffloadingConnector";
    /** LMCache's connector name in vLLM. */
    public static final String LMCACHE_CONNECTOR = "LMCacheConnectorV1";

    /**
     * Validates the figures.
     */
    public KvOffloadSettings
    {
        if (cpuBytes < 0 || cpuBlocks < 0 || (0 == cpuBytes) == (0 == cpuBlocks))
        {
            throw new IllegalArgumentException("the CPU KV tier needs a positive size in bytes or in blocks, not both");
        }
        if (blockTokens < 0 || kvBytesPerToken < 1 || kvBytesPerTokenPerGpu < 1 || !(bytesPerSecond > 0))
        {
            throw new IllegalArgumentException("the CPU KV tier needs a block size >= 0, KV bytes per token >= 1 " +
                "and a positive bandwidth");
        }
    }

    /**
     * @param gpuBlockSize the GPU's block size in tokens.
     * @return tokens per offloaded block.
     * @throws IllegalArgumentException when the offloaded block size is not a multiple of the GPU's.
     */
    public int offloadedBlockTokens(final int gpuBlockSize)
    {
        final int tokens = 0 == blockTokens ? gpuBlockSize : blockTokens;
        if (tokens % gpuBlockSize != 0)
        {
            throw new IllegalArgumentException("the offloaded block_size (" + tokens + ") must be a multiple of " +
                "the GPU block size (" + gpuBlockSize + ")");
        }
        return tokens;
    }

    /**
     * @param gpuBlockSize the GPU's block size in tokens.
     * @return the tier's size in offloaded blocks.
     * @throws IllegalArgumentException when it holds no block, or more than the 2^25 this model keeps (about a GiB of
     *     heap).
     */
    public int capacityBlocks(final int gpuBlockSize)
    {
        final long blocks = cpuBlocks > 0 ? cpuBlocks :
            cpuBytes / (kvBytesPerToken * offloadedBlockTokens(gpuBlockSize));
        if (blocks < 1 || blocks > 1 << 25)
        {
            throw new IllegalArgumentException("the CPU KV tier of " + cpuBytes + " bytes holds " + blocks +
                " blocks of " + offloadedBlockTokens(gpuBlockSize) + " tokens at " + kvBytesPerToken +
                " KV bytes per token; it must hold between 1 and 2^25 (raise block_size for a larger tier)");
        }
        return (int)blocks;
    }
}
