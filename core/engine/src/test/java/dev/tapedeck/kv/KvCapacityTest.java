package dev.tapedeck.kv;

import org.junit.jupiter.api.Test;

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
        assertEquals(131_072, KvCapacity.profile("meta-llama/Llama-3.1-8B").kvBytesPerToken(2));
        assertEquals(147_456, KvCapacity.profile("Qwen/Qwen3-8B").kvBytesPerToken(2));
        assertEquals(98_304, KvCapacity.profile("Qwen/Qwen3-30B-A3B").kvBytesPerToken(2));
        assertEquals(73_728, KvCapacity.profile("Qwen/Qwen3-8B").kvBytesPerToken(1), "fp8 halves it");
    }

    @Test
    void shouldFindBuiltInModelsByTheirLastPathElement()
    {
        assertEquals("meta-llama/Llama-3.1-8B", KvCapacity.profile("meta-llama/Llama-3.1-8B-Instruct").name());
        assertEquals("Qwen/Qwen3-8B", KvCapacity.profile("/models/qwen3-8b").name());
        assertNull(KvCapacity.profile("my/unknown"));
        assertNull(KvCapacity.profile(null));
    }

    @Test
    void shouldReproduceTheRealStartTheOverheadWasFittedTo()
    {
        // vLLM 0.19.0, Llama-3.1-8B bf16, RTX 4090 (25,250,627,584 bytes), utilization 0.9: 2,588 blocks (41,408
        // tokens); the fitted overhead is the one free number, so this pins the formula and the weights
        final KvCapacity.ModelProfile llama = KvCapacity.profile("meta-llama/Llama-3.1-8B");
        assertEquals(2_588, KvCapacity.blocks(25_250_627_584L, 0.9, llama.parameters() * 2,
            KvCapacity.DEFAULT_OVERHEAD_BYTES, llama.kvBytesPerToken(2), 16));
        // a larger block size holds the same memory in fewer, larger blocks
        assertEquals(1_294, KvCapacity.blocks(25_250_627_584L, 0.9, llama.parameters() * 2,
            KvCapacity.DEFAULT_OVERHEAD_BYTES, llama.kvBytesPerToken(2), 32));
    }

    @Test
    void shouldRefuseWhenTheWeightsLeaveNoRoom()
    {
        final KvCapacity.ModelProfile llama = KvCapacity.profile("meta-llama/Llama-3.1-70B");
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> KvCapacity.blocks(
            80_000_000_000L, 0.9, llama.parameters() * 2, KvCapacity.DEFAULT_OVERHEAD_BYTES,
            llama.kvBytesPerToken(2), 16));
        assertTrue(ex.getMessage().contains("weights take 141.11 GB"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KvCapacity.blocks(80_000_000_000L, 1.5, 0, 0, 1, 16));
    }
}
