package dev.tapedeck.kv;

import java.util.List;
import java.util.Locale;

/**
 * How many KV blocks a GPU holds, computed the way vLLM sizes its cache at start: of the GPU's memory times
 * {@code gpu_memory_utilization}, what the weights and the profiled activations leave is divided into blocks of
 * {@code block_size} tokens, each token taking {@code 2 (K and V) x layers x kv_heads x head_dim x dtype bytes}.
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

    /**
     * The dimensions of a model that set its KV footprint, from its Hugging Face {@code config.json}.
     *
     * @param name the model id.
     * @param layers {@code num_hidden_layers}.
     * @param kvHeads {@code num_key_value_heads}.
     * @param headDim {@code head_dim}.
     * @param parameters total parameters (weights are {@code parameters x dtypeBytes}).
     */
    public record ModelProfile(String name, int layers, int kvHeads, int headDim, long parameters)
    {
        /**
         * @param dtypeBytes bytes per KV element (2 for bf16/fp16, 1 for fp8).
         * @return KV bytes one token takes over all layers.
         */
        public long kvBytesPerToken(final int dtypeBytes)
        {
            return 2L * layers * kvHeads * headDim * dtypeBytes;
        }
    }

    /** Models whose dimensions are built in (from their published config.json), looked up by the end of the id. */
    public static final List<ModelProfile> KNOWN = List.of(
        new ModelProfile("Qwen/Qwen3-0.6B", 28, 8, 128, 751_632_384L),
        new ModelProfile("Qwen/Qwen3-8B", 36, 8, 128, 8_190_735_360L),
        new ModelProfile("Qwen/Qwen3-32B", 64, 8, 128, 32_762_123_264L),
        new ModelProfile("Qwen/Qwen3-30B-A3B", 48, 4, 128, 30_532_122_624L),
        new ModelProfile("meta-llama/Llama-3.1-8B", 32, 8, 128, 8_030_261_248L),
        new ModelProfile("meta-llama/Llama-3.1-70B", 80, 8, 128, 70_553_706_496L));

    private KvCapacity()
    {
    }

    /**
     * @param model a model id or path ({@code Qwen/Qwen3-8B}, {@code /models/Qwen3-8B},
     *     {@code meta-llama/Llama-3.1-8B-Instruct}).
     * @return its built-in profile, or null: matched on the last path element, case-insensitively, with an
     *     {@code -Instruct} suffix ignored.
     */
    public static ModelProfile profile(final String model)
    {
        if (null == model)
        {
            return null;
        }
        String base = model.substring(model.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT);
        if (base.endsWith("-instruct"))
        {
            base = base.substring(0, base.length() - "-instruct".length());
        }
        for (final ModelProfile profile : KNOWN)
        {
            if (profile.name().substring(profile.name().indexOf('/') + 1).toLowerCase(Locale.ROOT).equals(base))
            {
                return profile;
            }
        }
        return null;
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
