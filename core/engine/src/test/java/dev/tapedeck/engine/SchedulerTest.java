package dev.tapedeck.engine;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * vLLM V1 step composition, driven with a manual clock: budget split, chunked prefill order, running cap, priority,
 * queue cap, long-prefill threshold.
 */
class SchedulerTest
{
    private final FixedStepModel model = new FixedStepModel(EngineHarness.STEP_NS);

    @Test
    void shouldLetDecodesClaimTheBudgetBeforeChunkingPrefillsInAdmissionOrder()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(100));
        h.submit("a", 10, 50);
        h.submit("b", 10, 50);
        h.poke();
        assertEquals(new FixedStepModel.Shape(0, 20, 2, 2), model.steps.get(0));
        h.advance(); // both prompts done: a and b now decode
        h.submit("c", 80, 5);
        h.submit("d", 60, 5);
        h.advance();
        // 2 decodes take 2 tokens; c gets its whole 80; d gets what is left: 18
        assertEquals(new FixedStepModel.Shape(2, 98, 2, 4), model.steps.get(2));
        h.advance();
        // d (a running partial prefill) continues before anything new: 42 left
        assertEquals(new FixedStepModel.Shape(3, 42, 1, 4), model.steps.get(3));
    }

    @Test
    void withoutChunkedPrefillShouldStopAdmittingAtTheFirstPromptThatDoesNotFitWhole()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(100)
            .maxModelLen(100).enableChunkedPrefill(false));
        h.submit("a", 10, 50);
        h.submit("b", 10, 50);
        h.poke();
        h.advance();
        h.submit("c", 80, 5);
        h.submit("d", 60, 5);
        h.submit("e", 5, 5);
        h.advance();
        // 2 decodes take 2 tokens and c its whole 80; d's 60 do not fit in the 18 left, so admission stops there
        // (e, behind it, waits too, as vLLM's scheduler breaks out of its waiting loop)
        assertEquals(new FixedStepModel.Shape(2, 80, 1, 3), model.steps.get(2));
        h.advance();
        // c decodes now: 3 decodes, then d whole (60) and e whole (5)
        assertEquals(new FixedStepModel.Shape(3, 65, 2, 5), model.steps.get(3));
    }

    @Test
    void withoutChunkedPrefillABudgetBelowTheContextLengthIsRefusedAsVllmRefusesIt()
    {
        final IllegalArgumentException refused = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> EngineHarness.config(model).maxNumBatchedTokens(100)
                .maxModelLen(200).enableChunkedPrefill(false).conclude());
        assertTrue(refused.getMessage().contains("max_num_batched_tokens (100) is smaller than max_model_len (200)"),
            refused.getMessage());
    }

    @Test
    void shouldChunkALongPromptAcrossStepsAtTheBudget()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(64));
        final Request r = h.submit("long", 150, 3);
        h.runUntilIdle();
        assertEquals(64, model.steps.get(0).prefillTokens());
        assertEquals(64, model.steps.get(1).prefillTokens());
        assertEquals(22, model.steps.get(2).prefillTokens());
        // first token at the end of the third step, then one token per step
        final long start = 1_000_000_000L;
        assertEquals(List.of(start + 3 * EngineHarness.STEP_NS, start + 4 * EngineHarness.STEP_NS,
            start + 5 * EngineHarness.STEP_NS), h.sink.timesOf(r));
    }

    @Test
    void shouldCapEachRequestsChunkAtTheLongPrefillThreshold()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(1000)
            .longPrefillTokenThreshold(100));
        h.submit("a", 250, 1);
        h.submit("b", 30, 1);
        h.poke();
        assertEquals(new FixedStepModel.Shape(0, 130, 2, 2), model.steps.get(0));
    }

    @Test
    void shouldNeverRunMoreThanMaxNumSeqs()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumSeqs(2));
        for (int i = 0; i < 5; i++)
        {
            h.submit("r" + i, 8, 4);
        }
        h.poke();
        assertEquals(2, h.engine.numRunning());
        assertEquals(3, h.engine.numWaiting());
        int maxRunning = 0;
        while (h.advance())
        {
            maxRunning = Math.max(maxRunning, h.engine.numRunning());
        }
        assertEquals(2, maxRunning);
        assertEquals(5, h.sink.finished.size());
        for (final FixedStepModel.Shape shape : model.steps)
        {
            assertTrue(shape.running() <= 2, shape.toString());
        }
    }

    @Test
    void shouldAdmitByPriorityThenArrival()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumSeqs(1)
            .schedulingPolicy(SchedulingPolicy.PRIORITY));
        final Request busy = h.submit("busy", 4, 2);
        h.poke();
        final Request low = h.request("low", 4, 1).priority(5);
        final Request high = h.request("high", 4, 1).priority(-1);
        final Request highLater = h.request("high-later", 4, 1).priority(-1);
        h.engine.submit(low, h.nowNs);
        h.engine.submit(high, h.nowNs);
        h.engine.submit(highLater, h.nowNs);
        h.runUntilIdle();
        assertEquals(List.of(busy, high, highLater, low), h.sink.finished);
    }

    @Test
    void shouldAdmitInArrivalOrderUnderFcfsRegardlessOfPriority()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumSeqs(1));
        final Request first = h.request("first", 4, 1).priority(9);
        final Request second = h.request("second", 4, 1).priority(-9);
        h.engine.submit(first, h.nowNs);
        h.engine.submit(second, h.nowNs);
        h.runUntilIdle();
        assertEquals(List.of(first, second), h.sink.finished);
    }

    @Test
    void shouldRefuseWhenTheWaitingQueueIsFull()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumSeqs(1)
            .maxWaitingQueueLength(2));
        h.submit("running", 4, 10);
        h.poke();
        h.submit("w1", 4, 1);
        h.submit("w2", 4, 1);
        assertEquals(SubmitResult.QUEUE_FULL, h.engine.submit(h.request("w3", 4, 1), h.nowNs));
        h.advance();
        h.advance();
        assertEquals(2, h.engine.numWaiting());
        assertEquals(SubmitResult.QUEUE_FULL, h.engine.submit(h.request("w4", 4, 1), h.nowNs));
    }

    @Test
    void shouldRefuseRequestsThatDoNotFitTheContext()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxModelLen(100));
        assertEquals(SubmitResult.TOO_LONG, h.engine.submit(h.request("x", 90, 11), h.nowNs));
        assertEquals(SubmitResult.ACCEPTED, h.engine.submit(h.request("y", 90, 10), h.nowNs));
        assertEquals(SubmitResult.TOO_LONG, h.engine.submit(h.request("z", 100, Request.UNSET), h.nowNs));
        assertEquals(SubmitResult.INVALID, h.engine.submit(h.request("e", 0, 1), h.nowNs));
        assertEquals(SubmitResult.INVALID, h.engine.submit(h.request("m", 5, 0), h.nowNs));
    }

    @Test
    void shouldFreeTheSlotOfAnAbortedRequest()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumSeqs(1));
        final Request running = h.submit("running", 4, 1000);
        final Request waiting = h.submit("waiting", 4, 2);
        h.poke();
        h.advance();
        assertEquals(1, h.sink.tokensOf(running).size());
        assertTrue(h.engine.abort(running, FinishReason.ABORT, h.nowNs));
        assertEquals(FinishReason.ABORT, running.finishReason());
        assertEquals(0, h.engine.numRunning());
        h.runUntilIdle();
        assertEquals(FinishReason.LENGTH, waiting.finishReason());
        assertEquals(2, h.sink.tokensOf(waiting).size());
        assertEquals(1, h.sink.tokensOf(running).size());
        assertFalse(h.engine.abort(running, FinishReason.ABORT, h.nowNs));
    }

    @Test
    void shouldAbortAWaitingRequestWithoutScheduling()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxNumSeqs(1));
        h.submit("running", 4, 3);
        final Request waiting = h.submit("waiting", 4, 3);
        h.poke();
        assertTrue(h.engine.abort(waiting, FinishReason.ABORT, h.nowNs));
        assertEquals(0, h.engine.numWaiting());
        assertEquals(0, waiting.scheduledNs());
        h.runUntilIdle();
        assertEquals(List.of(waiting), h.sink.finished.subList(0, 1));
        assertEquals(0, h.sink.tokensOf(waiting).size());
    }

    @Test
    void shouldNotPutALateArrivalIntoACatchUpStepThatBeganBeforeIt()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model));
        h.submit("early", 8, 50);
        h.poke();
        // the driver wakes up 3.5 steps late; a request arrived just before it did
        h.nowNs += 3 * EngineHarness.STEP_NS + EngineHarness.STEP_NS / 2;
        final Request late = h.submit("late", 8, 2);
        h.poke();
        h.runUntilIdle();
        assertTrue(late.firstTokenNs() - late.arrivalNs() >= EngineHarness.STEP_NS,
            "first token " + (late.firstTokenNs() - late.arrivalNs()) + " ns after arrival");
    }
}
