package dev.tapedeck.engine;

import org.junit.jupiter.api.Test;

import dev.tapedeck.kv.BlockPool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The KV block pool inside the scheduler, with a manual clock and fixed-length steps: prefix hits shorten prefill,
 * cached blocks survive their request until evicted least recently freed first, and running requests are preempted
 * newest first when blocks run out, then recomputed to the same output length.
 */
class KvCacheSchedulingTest
{
    private final FixedStepModel model = new FixedStepModel(EngineHarness.STEP_NS);

    @Test
    void shouldServeTheFullBlocksOfARepeatedPromptFromTheCache()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model));
        final int[] prompt = EngineHarness.prompt("shared", 100);
        final Request first = h.submit("first", prompt, 2);
        h.runUntilIdle();
        assertEquals(0, first.numCachedTokens());
        assertEquals(100, model.steps.get(0).prefillTokens());
        final int stepsBefore = model.steps.size();
        final Request second = h.submit("second", prompt, 2);
        h.runUntilIdle();
        // 6 full blocks of 16 = 96 tokens cached; only the last 4 are computed
        assertEquals(96, second.numCachedTokens());
        assertEquals(4, model.steps.get(stepsBefore).prefillTokens());
        assertEquals(2, second.numOutputTokens());
        assertEquals(200, h.engine.metrics().prefixCacheQueries());
        assertEquals(96, h.engine.metrics().prefixCacheHits());
        assertEquals(2, h.engine.metrics().prefixCacheRequests());
        assertEquals(0.0, h.engine.kvCacheUsage(), "finished requests hold no blocks");
        assertEquals(6, h.engine.kvBlockPool().cachedBlocks(), "the 6 full prompt blocks stay cached");
    }

    @Test
    void shouldForgetCachedBlocksOnResetWhenIdle()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model));
        final int[] prompt = EngineHarness.prompt("shared", 100);
        final Request running = h.submit("first", prompt, 3);
        h.poke();
        assertFalse(h.engine.resetPrefixCache(h.nowNs), "refused while a request holds blocks");
        h.runUntilIdle();
        assertEquals(3, running.numOutputTokens());
        assertTrue(h.engine.resetPrefixCache(h.nowNs));
        assertEquals(0, h.engine.kvBlockPool().cachedBlocks());
        final Request second = h.submit("second", prompt, 1);
        h.runUntilIdle();
        assertEquals(0, second.numCachedTokens());
    }

    @Test
    void shouldAlwaysComputeTheLastPromptToken()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model));
        final int[] prompt = EngineHarness.prompt("aligned", 96);
        h.submit("first", prompt, 1);
        h.runUntilIdle();
        final int stepsBefore = model.steps.size();
        final Request second = h.submit("second", prompt, 1);
        h.runUntilIdle();
        // 96 tokens = 6 full blocks, but the hit stops at 5 so the last block (with the last token) is computed
        assertEquals(80, second.numCachedTokens());
        assertEquals(16, model.steps.get(stepsBefore).prefillTokens());
    }

    @Test
    void shouldShareBlocksBetweenRunningRequestsWithTheSamePrefix()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(64));
        final int[] prompt = EngineHarness.prompt("shared", 64);
        final Request first = h.submit("first", prompt, 50);
        h.poke();
        h.advance(); // first's prompt computed, decoding
        final Request second = h.submit("second", prompt, 50);
        h.advance();
        assertEquals(48, second.numCachedTokens());
        // first: 64 prompt + 1 token -> 5 blocks; second: its 3 hit blocks are first's, plus 1 of its own
        assertEquals(6, h.engine.kvBlockPool().usedBlocks());
        assertTrue(first.numOutputTokens() > 0);
    }

    @Test
    void shouldNotShareAnythingWithPrefixCachingOff()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).enablePrefixCaching(false));
        final int[] prompt = EngineHarness.prompt("shared", 100);
        h.submit("first", prompt, 1);
        h.runUntilIdle();
        final int stepsBefore = model.steps.size();
        final Request second = h.submit("second", prompt, 1);
        h.runUntilIdle();
        assertEquals(0, second.numCachedTokens());
        assertEquals(100, model.steps.get(stepsBefore).prefillTokens());
        assertEquals(0, h.engine.metrics().prefixCacheQueries());
        assertEquals(0, h.engine.kvBlockPool().cachedBlocks());
    }

    @Test
    void shouldEvictTheLeastRecentlyFreedBlocksTailFirst()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).kvCacheBlocks(8).maxModelLen(128));
        final int[] promptA = EngineHarness.prompt("a", 64);
        h.submit("a", promptA, 1); // 4 blocks, cached, freed last block first
        h.runUntilIdle();
        final BlockPool pool = h.engine.kvBlockPool();
        assertEquals(4, pool.cachedBlocks());
        h.submit("b", EngineHarness.prompt("b", 112), 1); // 7 blocks: the 4 never used, then 3 of a's, tail first
        h.runUntilIdle();
        assertEquals(3, pool.evictions());
        final int stepsBefore = model.steps.size();
        final Request again = h.submit("a-again", promptA, 1);
        h.runUntilIdle();
        assertEquals(16, again.numCachedTokens(), "a's first block survived");
        assertEquals(48, model.steps.get(stepsBefore).prefillTokens());
    }

    @Test
    void shouldPreemptTheNewestRequestAndRecomputeItToTheSameLength()
    {
        // 3 requests of 4 prompt + 8 output tokens need 3 blocks of 4 each at the end; the pool has 6
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).blockSize(4).kvCacheBlocks(6)
            .maxModelLen(24).maxNumSeqs(3));
        final Request a = h.submit("a", 4, 8);
        final Request b = h.submit("b", 4, 8);
        final Request c = h.submit("c", 4, 8);
        h.runUntilIdle();
        assertEquals(0, a.preemptions);
        assertEquals(0, b.preemptions);
        assertEquals(1, c.preemptions, "the newest running request is the one preempted");
        assertEquals(1, h.engine.metrics().numPreemptions());
        for (final Request r : new Request[] {a, b, c})
        {
            assertEquals(FinishReason.LENGTH, r.finishReason());
            assertEquals(8, r.numOutputTokens());
            assertEquals(8, h.sink.tokensOf(r).size());
        }
        assertTrue(c.finishedNs() > b.finishedNs(), "c finishes after the others freed their blocks");
        // c was preempted with 5 tokens generated: its recompute step computes prompt + those 5 = 9 tokens
        assertTrue(model.steps.stream().anyMatch(s -> 9 == s.prefillTokens() && 1 == s.prefillRequests()),
            model.steps.toString());
        assertEquals(0, h.engine.kvBlockPool().usedBlocks());
    }

    @Test
    void shouldRefuseToStartWhenOneSequenceCannotFitThePool()
    {
        final EngineConfig config = EngineHarness.config(model).maxModelLen(1024).kvCacheBlocks(10)
            .tokenSpace(new int[] {1}, 0);
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class, config::conclude);
        assertTrue(error.getMessage().contains("--max-model-len 1024 needs 64 KV blocks of 16 tokens but " +
            "the KV cache holds 10 blocks"), error.getMessage());
    }
}
