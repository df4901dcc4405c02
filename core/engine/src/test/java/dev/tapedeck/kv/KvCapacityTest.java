package dev.tapedeck.kv;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.ModelArchitecture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * KV-cache sizing from GPU memory: the per-token footprint from a model's dimensions, the lookup of built-in models,
 * the one real vLLM start the overhead was fitted to, and the error when nothing is left.
 */
class KvCapacityTest
{
    @Test
    void shouldComputeTheKvFootprintPerTokenFromTheModelDimensions()
    {
        // 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes
        assertEquals(131_072, ModelArchitecture.lookup("meta-llama/Llama-3.1-8B").kvBytesPerToken(2));
        assertEquals(147_456, ModelArchitecture.lookup("Qwen/Qwen3-8B").kvBytesPerToken(2));
        assertEquals(98_304, ModelArchitecture.lookup("Qwen/Qwen3-30B-A3B").kvBytesPerToken(2));
        assertEquals(73_728, ModelArchitecture.lookup("Qwen/Qwen3-8B").kvBytesPerToken(1), "fp8 halves it");
    }

    @Test
    void shouldFindBuiltInModelsByTheirLastPathElement()
    {
        assertEquals("meta-llama/Llama-3.1-8B", ModelArchitecture.lookup("meta-llama/Llama-3.1-8B-Instruct").name());
        assertEquals("Qwen/Qwen3-8B", ModelArchitecture.lookup("/models/qwen3-8b").name());
        assertNull(ModelArchitecture.lookup("my/unknown"));
        assertNull(ModelArchitecture.lookup(null));
        assertEquals("codellama/CodeLlama-34b-hf",
            ModelArchitecture.lookup("codellama/CodeLlama-34b-Instruct-hf").name());
        assertEquals("meta-llama/Llama-2-70b-hf", ModelArchitecture.lookup("meta-llama/Llama-2-70b-chat-hf").name());
    }

    @Test
    void shouldShardWeightsAndKvHeadsOverTensorParallelGpus()
    {
        final ModelArchitecture llama70 = ModelArchitecture.lookup("meta-llama/Llama-2-70b-hf");
        final GpuSpec h100 = GpuSpec.lookup("h100");
        // per GPU: 72 GB - 34.49 GB of weights - the overhead, in blocks of 16 x 327,680 / 4 bytes
        assertEquals(KvCapacity.blocks(80L << 30, 0.9, llama70.parameters() * 2 / 4,
            KvCapacity.DEFAULT_OVERHEAD_BYTES, 81_920, 16), KvCapacity.blocks(llama70, h100, 4, 0.9, 16));
        assertEquals(31_726, KvCapacity.blocks(llama70, h100, 4, 0.9, 16));
        // vLLM on one 80 GiB H100 gave Llama-2-7B 7,463 blocks (BLIS's recorded total_kv_blocks)
        assertEquals(7_461, KvCapacity.blocks(ModelArchitecture.lookup("meta-llama/Llama-2-7b-hf"), h100, 1, 0.9, 16));
        // 8 KV heads cannot shard 16 ways: each GPU keeps a copy of one head
        final int tp16 = KvCapacity.blocks(llama70, h100, 16, 0.9, 16);
        assertEquals(KvCapacity.blocks(80L << 30, 0.9, llama70.parameters() * 2 / 16,
            KvCapacity.DEFAULT_OVERHEAD_BYTES, 40_960, 16), tp16);
    }

    @Test
    void shouldReproduceTheRealStartTheOverheadWasFittedTo()
    {
        // vLLM 0.19.0, Llama-3.1-8B bf16, RTX 4090 (25,250,627,584 bytes), utilization 0.9: 2,588 blocks (41,408
        // tokens); the fitted overhead is the one free number, so this pins the formula and the weights
        final ModelArchitecture llama = ModelArchitecture.lookup("meta-llama/Llama-3.1-8B");
        assertEquals(2_588, KvCapacity.blocks(25_250_627_584L, 0.9, llama.parameters() * 2,
            KvCapacity.DEFAULT_OVERHEAD_BYTES, llama.kvBytesPerToken(2), 16));
        // a larger block size holds the same memory in fewer, larger blocks
        assertEquals(1_294, KvCapacity.blocks(25_250_627_584L, 0.9, llama.parameters() * 2,
            KvCapacity.DEFAULT_OVERHEAD_BYTES, llama.kvBytesPerToken(2), 32));
    }

    @Test
    void shouldRefuseWhenTheWeightsLeaveNoRoom()
    {
        final ModelArchitecture llama = ModelArchitecture.lookup("meta-llama/Llama-3.1-70B");
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> KvCapacity.blocks(
            80_000_000_000L, 0.9, llama.parameters() * 2, KvCapacity.DEFAULT_OVERHEAD_BYTES,
            llama.kvBytesPerToken(2), 16));
        assertTrue(ex.getMessage().contains("weights take 141.11 GB"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KvCapacity.blocks(80_000_000_000L, 1.5, 0, 0, 1, 16));
    }
}
