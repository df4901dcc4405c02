package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.kv.KvEventSink;
import dev.tapedeck.kv.MediaSpans;
import dev.tapedeck.metrics.OffloadMetrics;
import dev.tapedeck.metrics.PrometheusExposition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The host KV tier behind the GPU's, with a manual clock and fixed 10 ms steps: computed prompt blocks are copied
 * there as they are scheduled, a prompt whose GPU blocks were evicted loads its prefix back over the link instead of
 * computing it (the load's time shows in its TTFT), the tier evicts least recently used blocks, and the stores and
 * evictions are KV events of medium CPU.
 */
class CpuOffloadConnectorTest
{
    /** 1 KiB of KV per token on the GPU; a 16-token block is 16 KiB. */
    private static final long BYTES_PER_TOKEN = 1024;
    /** 16 KiB per ms: one GPU block loads in 1 ms. */
    private static final double BYTES_PER_SECOND = 16 * 1024 * 1000;

    private final FixedStepModel model = new FixedStepModel(EngineHarness.STEP_NS);
    private final Events events = new Events();

    private EngineHarness harness(final int gpuBlocks, final int cpuBlocks, final int offloadedBlockTokens)
    {
        return new EngineHarness(EngineHarness.config(model).kvCacheBlocks(gpuBlocks).maxModelLen(128)
            .kvEventSink(events).kvOffload(new KvOffloadSettings(KvOffloadSettings.OFFLOADING_CONNECTOR, 0,
                cpuBlocks, offloadedBlockTokens, BYTES_PER_TOKEN, BYTES_PER_TOKEN, BYTES_PER_SECOND)));
    }

    @Test
    void shouldLoadAnEvictedPrefixFromTheHostTierInsteadOfComputingIt()
    {
        final EngineHarness h = harness(8, 64, 0);
        final int[] promptA = EngineHarness.prompt("a", 64);
        final Request first = h.submit("a", promptA, 1);
        h.runUntilIdle();
        final long recomputeTtftNs = first.firstTokenNs() - first.arrivalNs();
        assertEquals(List.of("stored 4"), events.takeCpu(), "a's 4 full blocks copied to the host");
        h.submit("b", EngineHarness.prompt("b", 112), 1); // 7 blocks: evicts a's from the GPU
        h.runUntilIdle();
        assertEquals(3, h.engine.kvBlockPool().evictions());
        assertEquals(List.of("stored 7"), events.takeCpu());

        final int stepsBefore = model.steps.size();
        final Request again = h.submit("a2", promptA, 1);
        h.runUntilIdle();
        // a's first GPU block survived (1 block = 16 tokens), blocks 2 and 3 come from the host; the last block holds
        // the last token, so it is computed
        assertEquals(16, again.numCachedTokens() - again.numExternalTokens(), "GPU prefix hit");
        assertEquals(32, again.numExternalTokens(), "loaded from the host tier");
        assertEquals(16, model.steps.get(stepsBefore).prefillTokens(), "only the last block is computed");
        final long loadTtftNs = again.firstTokenNs() - again.arrivalNs();
        assertTrue(loadTtftNs >= EngineHarness.STEP_NS + 2_000_000, "the load (2 ms), then the prefill step: " +
            loadTtftNs);
        final OffloadMetrics metrics = h.engine.metrics().offload();
        assertEquals(2 * 16 * BYTES_PER_TOKEN, metrics.bytes(1), "CPU_to_GPU bytes");
        assertEquals(11 * 16 * BYTES_PER_TOKEN, metrics.bytes(0), "GPU_to_CPU bytes");
        assertEquals(32, metrics.hitTokens());
        assertEquals(32, h.engine.metrics().externalPrefixCacheHits());
        assertTrue(recomputeTtftNs > 0);

        final StringBuilder out = new StringBuilder();
        new PrometheusExposition("m", 0, List.of(h.engine), List.of(java.util.Map.of())).write(out);
        final String text = out.toString();
        assertTrue(text.contains("vllm:kv_offload_total_bytes_total{engine=\"0\",model_name=\"m\"," +
            "transfer_type=\"CPU_to_GPU\"} 32768"), text);
        assertTrue(text.contains("vllm:kv_offload_size_count{engine=\"0\",model_name=\"m\"," +
            "transfer_type=\"GPU_to_CPU\"} 2"), text);
        assertTrue(text.contains("vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"m\"," +
            "source=\"external_kv_transfer\"} 32"), text);
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedHostBlocksAndThenRecompute()
    {
        final EngineHarness h = harness(8, 6, 0);
        final int[] promptA = EngineHarness.prompt("a", 64);
        h.submit("a", promptA, 1);
        h.runUntilIdle();
        h.submit("b", EngineHarness.prompt("b", 112), 1);
        h.runUntilIdle();
        // the tier holds 6: a's 4, then b's 7 take the 2 free blocks and evict a's 4 and b's first, oldest first
        final List<String> cpu = events.takeCpu();
        assertEquals(List.of("stored 4", "removed", "removed", "removed", "removed", "removed", "stored 7"), cpu);
        final int stepsBefore = model.steps.size();
        final Request again = h.submit("a2", promptA, 1);
        h.runUntilIdle();
        assertEquals(0, again.numExternalTokens(), "nothing of a is left on the host");
        assertEquals(48, model.steps.get(stepsBefore).prefillTokens(), "the GPU's one block hit, the rest computed");
    }

    @Test
    void shouldNotLoadWhatIsStillBeingCopied()
    {
        // 1 byte/s: a store never ends within the test
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).kvCacheBlocks(8).maxModelLen(128)
            .kvOffload(new KvOffloadSettings(KvOffloadSettings.OFFLOADING_CONNECTOR, 0, 64, 0, BYTES_PER_TOKEN,
                BYTES_PER_TOKEN, 1)));
        final int[] promptA = EngineHarness.prompt("a", 64);
        h.submit("a", promptA, 1);
        h.runUntilIdle();
        h.submit("b", EngineHarness.prompt("b", 112), 1);
        h.runUntilIdle();
        final Request again = h.submit("a2", promptA, 1);
        h.runUntilIdle();
        assertEquals(0, again.numExternalTokens());
    }

    @Test
    void shouldStoreAndLoadWholeOffloadedBlocksOfSeveralGpuBlocks()
    {
        final EngineHarness h = harness(8, 64, 32);
        final int[] promptA = EngineHarness.prompt("a", 64);
        h.submit("a", promptA, 1);
        h.runUntilIdle();
        assertEquals(List.of("stored 2 of 32"), events.takeCpuWithSize());
        h.submit("b", EngineHarness.prompt("b", 112), 1);
        h.runUntilIdle();
        final Request again = h.submit("a2", promptA, 1);
        h.runUntilIdle();
        // GPU hit 16 tokens (mid-way through offloaded block 0); block 0 ends at 32 and block 1 holds the last
        // token: 16 tokens loaded, less than an offloaded block, so none (as vLLM)
        assertEquals(0, again.numExternalTokens());
    }

    @Test
    void shouldRefuseATierThatHoldsNoBlockOrMisalignedBlocks()
    {
        assertThrows(IllegalArgumentException.class, () -> new EngineHarness(EngineHarness.config(model)
            .kvOffload(new KvOffloadSettings(KvOffloadSettings.OFFLOADING_CONNECTOR, 100, 0, 0, 1024, 1024, 1e9))));
        final IllegalArgumentException misaligned = assertThrows(IllegalArgumentException.class,
            () -> new EngineHarness(EngineHarness.config(model).kvOffload(new KvOffloadSettings(
                KvOffloadSettings.OFFLOADING_CONNECTOR, 0, 10, 24, 1024, 1024, 1e9))));
        assertTrue(misaligned.getMessage().contains("multiple of the GPU block size"), misaligned.getMessage());
    }

    /** Records the host tier's events. */
    private static final class Events implements KvEventSink
    {
        final List<String> cpu = new ArrayList<>();
        final List<String> cpuWithSize = new ArrayList<>();

        List<String> takeCpu()
        {
            final List<String> taken = List.copyOf(cpu);
            cpu.clear();
            cpuWithSize.clear();
            return taken;
        }

        List<String> takeCpuWithSize()
        {
            final List<String> taken = List.copyOf(cpuWithSize);
            cpu.clear();
            cpuWithSize.clear();
            return taken;
        }

        @Override
        public void blockStored(final long[] blockHashes, final int firstBlock, final int blockCount,
            final int[] tokenIds, final int blockSize, final int loraId, final byte[] loraNameUtf8,
            final byte[] cacheSaltUtf8, final MediaSpans media)
        {
        }

        @Override
        public void blockRemoved(final long blockHash)
        {
        }

        @Override
        public void offloadedBlocksStored(final long[] blockHashes, final int blockCount, final int blockSize)
        {
            cpu.add("stored " + blockCount);
            cpuWithSize.add("stored " + blockCount + " of " + blockSize);
        }

        @Override
        public void offloadedBlockRemoved(final long blockHash)
        {
            cpu.add("removed");
            cpuWithSize.add("removed");
        }

        @Override
        public void allBlocksCleared()
        {
        }

        @Override
        public void endOfStep(final long nowNs)
        {
        }
    }
}
