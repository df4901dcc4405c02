package dev.tapedeck.kv;

import java.util.Locale;

import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.ModelArchitecture;

/**
 * How many KV blocks a GPU holds, computed the way vLLM sizes its cache at start: of the GPU's memory times
 * {@code gpu_memory_utilization}, what the weights and the profiled activations leave is divided into blocks of
 * {@code block_size} tokens, each token taking {@code 2 (K and V) x layers x kv_heads x head_dim x dtype bytes}
 * ({@link ModelArchitecture#kvBytesPerToken(int)}).
 * Stateless; thread safe.
 */
public final class KvCapacity
{
    /**
     * Activation peak plus non-torch memory (CUDA graphs, NCCL, allocator slack) vLLM keeps back, in bytes. Fitted to
     * one real start: Llama-3.1-8B, bf16, vLLM 0.19.0, RTX 4090 (25,250,627,584 bytes), utilization 0.9,
     * max_num_batched_tokens 2048: 2,588 blocks of 16 tokens (shared/data/fidelity llmservingsim-bench meta.json).
     */
    public static final long DEFAULT_OVERHEAD_BYTES = 1_237_000_000L;

    private static final long GB = 1_000_000_000L;

    private KvCapacity()
    {
    }

    /**
     * @param model the model.
     * @param gpu the GPU of each shard.
     * @param tensorParallel GPUs the model is split over: each holds 1/TP of the weights and of the KV heads (KV heads
     *     are replicated beyond their number).
     * @param utilization the fraction vLLM may use ({@code --gpu-memory-utilization}).
     * @param blockSize tokens per block.
     * @return the whole blocks of {@code blockSize} tokens each engine holds.
     * @throws IllegalArgumentException if nothing is left for the cache.
     */
    public static int blocks(final ModelArchitecture model, final GpuSpec gpu, final int tensorParallel,
        final double utilization, final int blockSize)
    {
        return blocks(gpu.memoryBytes(), utilization, model.weightBytesPerGpu(tensorParallel), DEFAULT_OVERHEAD_BYTES,
            (long)model.kvBytesPerTokenPerGpu(tensorParallel), blockSize);
    }

    /**
     * @param gpuMemoryBytes the GPU's memory.
     * @param utilization the fraction vLLM may use ({@code --gpu-memory-utilization}).
     * @param weightsBytes the model's weights.
     * @param overheadBytes activations and other memory kept back.
     * @param kvBytesPerToken KV bytes per token over all layers.
     * @param blockSize tokens per block.
     * @return whole blocks that fit.
     * @throws IllegalArgumentException if nothing is left for the cache, naming the numbers.
     */
    public static int blocks(final long gpuMemoryBytes, final double utilization, final long weightsBytes,
        final long overheadBytes, final long kvBytesPerToken, final int blockSize)
    {
        if (!(utilization > 0 && utilization <= 1))
        {
            throw new IllegalArgumentException("--gpu-memory-utilization must be in (0, 1], got " + utilization);
        }
        if (kvBytesPerToken <= 0 || blockSize <= 0)
        {
            throw new IllegalArgumentException("KV bytes per token and block size must be positive");
        }
        final long budget = (long)(gpuMemoryBytes * utilization);
        final long available = budget - weightsBytes - overheadBytes;
        final long blocks = available / (kvBytesPerToken * blockSize);
        if (blocks < 1)
        {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "no memory left for the KV cache: " +
                "%.2f GB x %.2f utilization = %.2f GB, weights take %.2f GB and activations %.2f GB; use a larger " +
                "--gpu-memory-gb or a higher --gpu-memory-utilization", gpuMemoryBytes / (double)GB, utilization,
                budget / (double)GB, weightsBytes / (double)GB, overheadBytes / (double)GB));
        }
        return (int)Math.min(Integer.MAX_VALUE, blocks);
    }
}
