package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine's side of P/D disaggregation ({@link KvConnector}): a decode parks a request while its remote KV loads
 * (no running slot, no budget), then computes only the last token; a failed load recomputes or fails as the policy
 * says; a prefill keeps a finished request's blocks until the connector releases them; an aborted pull frees its
 * blocks only when the pull ends.
 */
class KvConnectorTest
{
    private static final long MS = 1_000_000L;
    private static final KvTransferParams PULL = KvTransferParams.fromMap(Map.of("do_remote_prefill", true,
        "remote_block_ids", List.of(7, 8, 9), "remote_engine_id", "p", "remote_request_id", "p-1",
        "remote_host", "127.0.0.1", "remote_port", 5600));

    /** A connector the test drives: modelled loads end at a set time, asynchronous ones when the test says. */
    private static final class ScriptedConnector implements KvConnector
    {
        long modelledNs = -1;
        boolean keepFinished;
        final List<int[]> loads = new ArrayList<>();
        final List<Integer> localHits = new ArrayList<>();
        final List<Request> loaded = new ArrayList<>();
        final List<Request> failed = new ArrayList<>();
        final List<Request> toRelease = new ArrayList<>();
        final List<Request> finished = new ArrayList<>();
        boolean recompute;

        @Override
        public int remoteTokens(final Request request, final int localHitTokens)
        {
            localHits.add(localHitTokens);
            return null != request.kvTransferParams() && request.kvTransferParams().doRemotePrefill() ?
                request.promptLength() - localHitTokens : 0;
        }

        @Override
        public long startLoad(final Request request, final int fromBlock, final int toBlock, final long nowNs)
        {
            loads.add(new int[] {fromBlock, toBlock});
            return modelledNs >= 0 ? nowNs + modelledNs : LOAD_ASYNC;
        }

        @Override
        public boolean requestFinished(final Request request, final long nowNs)
        {
            finished.add(request);
            return keepFinished;
        }

        @Override
        public void poll(final Completions completions, final long nowNs)
        {
            loaded.forEach(completions::onLoaded);
            loaded.clear();
            failed.forEach(r -> completions.onLoadFailed(r, recompute));
            failed.clear();
            toRelease.forEach(completions::onReleased);
            toRelease.clear();
        }

        @Override
        public long nextDeadlineNs()
        {
            return Long.MAX_VALUE;
        }
    }

    private static EngineHarness harness(final ScriptedConnector connector)
    {
        return new EngineHarness(EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS))
            .kvConnector(connector));
    }

    private static Request decode(final EngineHarness h, final String id, final int[] prompt, final int maxTokens)
    {
        final Request request = new Request(id, prompt).maxTokens(maxTokens).arrivalNs(h.nowNs).kvTransferParams(PULL);
        assertEquals(SubmitResult.ACCEPTED, h.engine.submit(request, h.nowNs));
        return request;
    }

    @Test
    void aDecodeWaitsForTheModelledLoadThenComputesOnlyTheLastToken()
    {
        final ScriptedConnector connector = new ScriptedConnector();
        connector.modelledNs = 5 * MS;
        final EngineHarness h = harness(connector);
        final long arrivalNs = h.nowNs;
        final Request r = decode(h, "d", EngineHarness.prompt("d", 40), 3);
        h.poke();
        assertEquals(0, h.engine.numRunning(), "a loading request takes no running slot");
        assertEquals(1, h.engine.numWaiting(), "it counts as waiting, as vLLM's WAITING_FOR_REMOTE_KVS");
        assertEquals(List.of(0), connector.localHits);
        assertEquals(0, connector.loads.get(0)[0]);
        assertEquals(3, connector.loads.get(0)[1], "40 tokens in blocks of 16");
        h.runUntilIdle();
        assertEquals(FinishReason.LENGTH, r.finishReason());
        assertEquals(39, r.numExternalTokens(), "everything but the last token came from the remote engine");
        assertEquals(39, r.numCachedTokens());
        assertTrue(r.firstTokenNs() >= arrivalNs + 5 * MS + EngineHarness.STEP_NS,
            "the first token comes one step after the load: " + (r.firstTokenNs() - arrivalNs));
        assertEquals(0, h.engine.kvBlockPool().usedBlocks());
    }

    @Test
    void aLocalPrefixHitLoadsOnlyTheRest()
    {
        final ScriptedConnector connector = new ScriptedConnector();
        connector.modelledNs = MS;
        final EngineHarness h = harness(connector);
        final int[] prompt = EngineHarness.prompt("shared", 40);
        h.submit("local", prompt, 1);
        h.runUntilIdle();
        final Request r = decode(h, "d", prompt, 2);
        h.runUntilIdle();
        assertEquals(List.of(0, 32), connector.localHits, "the second request finds two cached blocks");
        assertEquals(2, connector.loads.get(0)[0]);
        assertEquals(3, connector.loads.get(0)[1]);
        assertEquals(7, r.numExternalTokens(), "tokens 32 to 38 were pulled; 39 is computed");
        assertEquals(39, r.numCachedTokens());
    }

    @Test
    void aFailedLoadRecomputesOrFailsAsThePolicySays()
    {
        for (final boolean recompute : new boolean[] {true, false})
        {
            final ScriptedConnector connector = new ScriptedConnector();
            connector.recompute = recompute;
            final EngineHarness h = harness(connector);
            final Request r = decode(h, "d", EngineHarness.prompt("d", 40), 3);
            h.poke();
            assertFalse(h.advance(), "nothing to do until the load ends");
            connector.failed.add(r);
            h.runUntilIdle();
            assertEquals(recompute ? FinishReason.LENGTH : FinishReason.ERROR, r.finishReason());
            assertEquals(0, r.numExternalTokens());
            assertEquals(recompute ? 3 : 0, r.numOutputTokens());
            assertEquals(0, h.engine.kvBlockPool().usedBlocks());
        }
    }

    @Test
    void anAsynchronousLoadEndsWhenTheConnectorReportsIt()
    {
        final ScriptedConnector connector = new ScriptedConnector();
        final EngineHarness h = harness(connector);
        final Request r = decode(h, "d", EngineHarness.prompt("d", 20), 2);
        h.poke();
        assertEquals(2, h.engine.kvBlockPool().usedBlocks(), "blocks are allocated for the pull");
        connector.loaded.add(r);
        h.runUntilIdle();
        assertEquals(FinishReason.LENGTH, r.finishReason());
        assertEquals(19, r.numExternalTokens());
    }

    @Test
    void anAbortedPullFreesItsBlocksOnlyWhenThePullEnds()
    {
        final ScriptedConnector connector = new ScriptedConnector();
        final EngineHarness h = harness(connector);
        final Request r = decode(h, "d", EngineHarness.prompt("d", 40), 2);
        h.poke();
        assertTrue(h.engine.abort(r, FinishReason.ABORT, h.nowNs));
        assertEquals(FinishReason.ABORT, r.finishReason());
        assertEquals(List.of(r), connector.finished, "the connector hears of the abort (it notifies the prefill)");
        assertEquals(0, h.engine.numWaiting());
        assertEquals(3, h.engine.kvBlockPool().usedBlocks(), "the pull still writes into them");
        connector.loaded.add(r);
        h.poke();
        assertEquals(0, h.engine.kvBlockPool().usedBlocks());
    }

    @Test
    void aPrefillKeepsTheBlocksTheConnectorKeepsUntilItReleasesThem()
    {
        final ScriptedConnector connector = new ScriptedConnector();
        connector.keepFinished = true;
        final EngineHarness h = harness(connector);
        final Request r = h.submit("p", 40, 1);
        h.runUntilIdle();
        assertEquals(FinishReason.LENGTH, r.finishReason());
        assertNull(r.kvTransferParams());
        assertEquals(3, h.engine.kvBlockPool().usedBlocks(), "kept for the decode");
        connector.toRelease.add(r);
        h.poke();
        assertEquals(0, h.engine.kvBlockPool().usedBlocks());
    }
}
