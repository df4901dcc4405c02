package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.metrics.EngineMetrics;
import dev.tapedeck.workload.OutputLengthDistribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Speculative decoding in the engine: bursts of 1 to K + 1 tokens per decode step, drafts against the token budget,
 * vLLM's accounting, and no token past max_tokens or EOS.
 */
class SpeculativeDecodingTest
{
    private static final long MS = 1_000_000L;

    @Test
    void shouldEmitKPlusOneTokensPerDecodeStepWhenEveryDraftIsAccepted()
    {
        final FixedStepModel model = new FixedStepModel(MS);
        final EngineHarness h = new EngineHarness(EngineHarness.config(model)
            .speculativeDecoding(SpeculativeDecoding.of(3, new double[] {1.0})));
        final Request r = h.submit("r", 20, 10);
        h.runUntilIdle();
        assertEquals(10, h.sink.tokensOf(r).size(), "never past max_tokens");
        assertEquals(List.of(1, 4, 4, 1), chunkSizes(h.sink.timesOf(r)), "first token, then bursts of K + 1, " +
            "the last one cut at max_tokens");
        final EngineMetrics m = h.engine.metrics();
        assertEquals(3, m.specDrafts());
        assertEquals(9, m.specDraftTokens());
        assertEquals(9, m.specAcceptedTokens(), "the last burst accepted 3 drafts, of which max_tokens kept 0");
        assertEquals(3, m.specAcceptedTokensAt(2));
        assertEquals(10, m.generationTokens());
        assertEquals(3, m.interTokenLatency().count(), "one gap per output, as vLLM observes it");
    }

    @Test
    void shouldEmitOneTokenPerStepAndCountRejectedDraftsWhenNoneIsAccepted()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS))
            .speculativeDecoding(SpeculativeDecoding.of(2, new double[] {0.0})));
        final Request r = h.submit("r", 20, 4);
        h.runUntilIdle();
        assertEquals(List.of(1, 1, 1, 1), chunkSizes(h.sink.timesOf(r)));
        assertEquals(3, h.engine.metrics().specDrafts());
        assertEquals(6, h.engine.metrics().specDraftTokens());
        assertEquals(0, h.engine.metrics().specAcceptedTokens());
    }

    @Test
    void shouldEndABurstAtTheEosToken()
    {
        final EngineConfig config = EngineHarness.config(new FixedStepModel(MS)).maxModelLen(1000)
            .outputLengths(new OutputLengthDistribution(new int[] {3, 3}))
            .speculativeDecoding(SpeculativeDecoding.of(4, new double[] {1.0}));
        final EngineHarness h = new EngineHarness(config);
        final Request r = h.submit("r", 10, Request.UNSET);
        h.runUntilIdle();
        final List<Integer> tokens = h.sink.tokensOf(r);
        assertEquals(3, tokens.size());
        assertEquals(EngineHarness.EOS, tokens.get(2), "the burst stops at the end-of-sequence token");
        assertEquals(FinishReason.STOP, r.finishReason());
        assertEquals(List.of(1, 2), chunkSizes(h.sink.timesOf(r)));
    }

    @Test
    void shouldCountDraftTokensAgainstTheStepBudget()
    {
        final FixedStepModel model = new FixedStepModel(MS);
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(10)
            .speculativeDecoding(SpeculativeDecoding.of(3, new double[] {0.0})));
        h.submit("a", 4, 50);
        h.submit("b", 4, 50);
        h.poke();
        h.advance(); // both prompts computed, first tokens out: both decode from now on
        h.submit("c", 6, 5);
        h.advance();
        final Step step = h.engine.currentStep();
        assertEquals(2, step.decodeRequests());
        assertEquals(6, step.draftTokens(), "K = 3 drafts for each decoding request");
        assertEquals(2, step.prefillTokens(), "the late request's chunk gets what is left of 10: 10 - 2 x (1 + 3)");
        assertEquals(10, step.totalTokens());
    }

    @Test
    void shouldTruncateDraftsWhenTheBudgetRunsOut()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS)).maxNumBatchedTokens(6)
            .speculativeDecoding(SpeculativeDecoding.of(4, new double[] {1.0})));
        h.submit("a", 3, 50);
        h.submit("b", 3, 50);
        h.poke();
        h.advance();
        h.advance();
        final Step step = h.engine.currentStep();
        assertEquals(2, step.decodeRequests());
        assertEquals(4, step.draftTokens(), "a takes 1 + 4, b gets 1 + 0: the budget of 6 is spent");
        assertEquals(6, step.totalTokens());
    }

    @Test
    void shouldAcceptDraftPositionsAtTheConfiguredRates()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS))
            .maxNumSeqs(64).speculativeDecoding(SpeculativeDecoding.of(3, new double[] {0.8, 0.5, 0.2})));
        for (int i = 0; i < 64; i++)
        {
            h.submit("r" + i, 16, 400);
        }
        h.runUntilIdle();
        final EngineMetrics m = h.engine.metrics();
        assertTrue(m.specDrafts() > 5000, "drafts: " + m.specDrafts());
        final double[] expected = {0.8, 0.5, 0.2};
        for (int p = 0; p < 3; p++)
        {
            final double rate = (double)m.specAcceptedTokensAt(p) / m.specDrafts();
            assertEquals(expected[p], rate, 0.03, "position " + p);
        }
        assertEquals(m.specAcceptedTokensAt(0) + m.specAcceptedTokensAt(1) + m.specAcceptedTokensAt(2),
            m.specAcceptedTokens());
    }

    @Test
    void shouldGiveTheSameBurstsForTheSameSeed()
    {
        assertEquals(burstsOf(7), burstsOf(7));
        assertTrue(!burstsOf(7).equals(burstsOf(8)), "another seed, other acceptances");
    }

    @Test
    void shouldRefuseBadSettings()
    {
        assertThrows(IllegalArgumentException.class, () -> SpeculativeDecoding.of(0, null));
        assertThrows(IllegalArgumentException.class, () -> SpeculativeDecoding.of(2, new double[] {0.5, 0.6}));
        assertThrows(IllegalArgumentException.class, () -> SpeculativeDecoding.of(2, new double[] {1.5}));
        assertThrows(IllegalArgumentException.class, () -> SpeculativeDecoding.of(3, new double[] {0.5, 0.4}));
        assertEquals(0.25, SpeculativeDecoding.of(2, new double[] {0.5}).acceptanceRate(1), 1e-12,
            "one value p means p, p^2, ...");
    }

    private static List<Integer> burstsOf(final long seed)
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS)).seed(seed)
            .speculativeDecoding(SpeculativeDecoding.of(4, new double[] {0.6})));
        final Request r = h.submit("r", 20, 60);
        h.runUntilIdle();
        return chunkSizes(h.sink.timesOf(r));
    }

    /** Tokens per output: consecutive tokens emitted at the same time form one output. */
    static List<Integer> chunkSizes(final List<Long> times)
    {
        final List<Integer> sizes = new ArrayList<>();
        for (int i = 0; i < times.size(); i++)
        {
            if (i > 0 && times.get(i).equals(times.get(i - 1)))
            {
                sizes.set(sizes.size() - 1, sizes.get(sizes.size() - 1) + 1);
            }
            else
            {
                sizes.add(1);
            }
        }
        return sizes;
    }
}
