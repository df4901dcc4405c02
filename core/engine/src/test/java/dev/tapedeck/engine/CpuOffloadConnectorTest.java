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
        h.submit("a", promptA, 2);
        h.runUntilIdle();
        assertEquals(List.of("stored 4"), events.takeCpu(), "a's 4 full blocks, copied when its decode step starts");
        h.submit("b", EngineHarness.prompt("b", 100), 2); // 7 blocks: evicts a's last 3 from the GPU
        h.runUntilIdle();
        assertEquals(3, h.engine.kvBlockPool().evictions());
        assertEquals(List.of("stored 6"), events.takeCpu(), "b's 6 full prompt blocks");

        final int stepsBefore = model.steps.size();
        final long arrivalNs = h.nowNs;
        final Request again = h.submit("a2", promptA, 2);
        h.runUntilIdle();
        // a's first GPU block survived (16 tokens); blocks 2 to 4 come from the host, the last with the prompt's last
        // token, which is computed again
        assertEquals(16, again.numCachedTokens() - again.numExternalTokens(), "GPU prefix hit");
        assertEquals(47, again.numExternalTokens(), "loaded from the host tier, but the last token");
        assertEquals(1, model.steps.get(stepsBefore).prefillTokens(), "only the last token is computed");
        assertEquals(3_000_000 + EngineHarness.STEP_NS, again.firstTokenNs() - arrivalNs,
            "TTFT: the load (3 blocks of 16 KiB at 16 KiB/ms), then one step");
        final OffloadMetrics metrics = h.engine.metrics().offload();
        assertEquals(3 * 16 * BYTES_PER_TOKEN, metrics.bytes(1), "CPU_to_GPU bytes");
        assertEquals(10 * 16 * BYTES_PER_TOKEN, metrics.bytes(0), "GPU_to_CPU bytes");
        assertEquals(48, metrics.hitTokens());
        assertEquals(48, h.engine.metrics().externalPrefixCacheHits(), "what the connector offered, as vLLM counts it");
        assertEquals(64 - 16, h.engine.metrics().externalPrefixCacheQueries() - (64 + 100),
            "a2 asked the connector for what the GPU did not have (a and b asked for all of theirs)");

        final StringBuilder out = new StringBuilder();
        new PrometheusExposition("m", 0, List.of(h.engine), List.of(java.util.Map.of())).write(out);
        final String text = out.toString();
        assertTrue(text.contains("vllm:kv_offload_total_bytes_total{engine=\"0\",model_name=\"m\"," +
            "transfer_type=\"CPU_to_GPU\"} 49152"), text);
        assertTrue(text.contains("vllm:kv_offload_size_count{engine=\"0\",model_name=\"m\"," +
            "transfer_type=\"GPU_to_CPU\"} 2"), text);
        assertTrue(text.contains("vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"m\"," +
            "source=\"external_kv_transfer\"} 47"), text);
    }

    @Test
    void shouldEvictTheLeastRecentlyUsedHostBlocksButNotThoseBeingWritten()
    {
        final EngineHarness h = harness(8, 5, 0);
        final int[] promptA = EngineHarness.prompt("a", 64);
        h.submit("a", promptA, 2);
        h.runUntilIdle();
        h.submit("b", EngineHarness.prompt("b", 100), 2);
        h.runUntilIdle();
        // the tier holds 5: a's 4, then b's 6 take the free block and evict a's 4; b's last finds only blocks still
        // being written (b's own) and is not stored, as vLLM's manager does not store what it cannot make room for
        assertEquals(List.of("stored 4", "removed", "removed", "removed", "removed", "stored 5"), events.takeCpu());
        final int stepsBefore = model.steps.size();
        final Request again = h.submit("a2", promptA, 2);
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
        h.submit("a", promptA, 2);
        h.runUntilIdle();
        h.submit("b", EngineHarness.prompt("b", 112), 2);
        h.runUntilIdle();
        final Request again = h.submit("a2", promptA, 2);
        h.runUntilIdle();
        assertEquals(0, again.numExternalTokens());
        assertTrue(h.engine.metrics().offload().bytes(0) > 0, "the copies started");
    }

    @Test
    void shouldStoreAndLoadWholeOffloadedBlocksOfSeveralGpuBlocks()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).kvCacheBlocks(9).maxModelLen(144)
            .kvEventSink(events).kvOffload(new KvOffloadSettings(KvOffloadSettings.OFFLOADING_CONNECTOR, 0, 64, 32,
                BYTES_PER_TOKEN, BYTES_PER_TOKEN, BYTES_PER_SECOND)));
        final int[] promptA = EngineHarness.prompt("a", 112); // 7 GPU blocks: 3 offloaded blocks of 32 tokens
        h.submit("a", promptA, 2);
        h.runUntilIdle();
        assertEquals(List.of("stored 3 of 32"), events.takeCpuWithSize());
        h.submit("b", EngineHarness.prompt("b", 112), 2); // 8 blocks: 1 never used, a's decode block, a's last 6
        h.runUntilIdle();
        events.takeCpu();
        final int stepsBefore = model.steps.size();
        final long arrivalNs = h.nowNs;
        final Request again = h.submit("a2", promptA, 2);
        h.runUntilIdle();
        // GPU hit 16 tokens, mid-way through offloaded block 0: the load covers offloaded blocks 0 to 2 after it,
        // 80 tokens in 5 GPU blocks
        assertEquals(80, again.numExternalTokens());
        assertEquals(16, model.steps.get(stepsBefore).prefillTokens());
        assertEquals(5 * 16 * BYTES_PER_TOKEN, h.engine.metrics().offload().bytes(1));
        assertEquals(5_000_000 + EngineHarness.STEP_NS, again.firstTokenNs() - arrivalNs);
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
