package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.KnobLatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.workload.OutputLengthDistribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Token generation, finish reasons, EOS emulation, determinism and the latency models as the engine applies them.
 */
class EngineTest
{
    private static final long MS = 1_000_000L;

    @Test
    void shouldGenerateExactlyMaxTokensAndFinishWithLength()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS)));
        final Request r = h.submit("r", 20, 7);
        h.runUntilIdle();
        assertEquals(7, h.sink.tokensOf(r).size());
        assertEquals(FinishReason.LENGTH, r.finishReason());
        assertEquals(List.of(r), h.sink.finished);
        for (final int token : h.sink.tokensOf(r))
        {
            assertTrue(token >= 11 && token <= 20, "token from the token space: " + token);
        }
    }

    @Test
    void shouldStopARequestWhenTheSinkSaysSoAtAToken()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS)));
        h.sink.stopAtOutputTokens.put("stopped", 3);
        final Request stopped = h.submit("stopped", 20, 10);
        final Request other = h.submit("other", 20, 5);
        h.runUntilIdle();
        assertEquals(3, h.sink.tokensOf(stopped).size(), "no token after the one the face stopped at");
        assertEquals(FinishReason.STOP, stopped.finishReason());
        assertEquals(5, h.sink.tokensOf(other).size(), "the other request of the same steps goes on");
        assertEquals(FinishReason.LENGTH, other.finishReason());
        assertEquals(List.of(stopped, other), h.sink.finished, "the stopped one finishes first, at its token's step");
        assertEquals(h.sink.tokenTimes.get(stopped).get(2), stopped.lastTokenNs());
        assertEquals(0, h.engine.numRunning());
    }

    @Test
    void shouldDrawTheNaturalLengthWhenMaxTokensIsUnsetAndEndWithEos()
    {
        final EngineConfig config = EngineHarness.config(new FixedStepModel(MS)).maxModelLen(100_000)
            .outputLengths(new OutputLengthDistribution(new int[] {5, 5}));
        final EngineHarness h = new EngineHarness(config);
        final Request r = h.submit("r", 10, Request.UNSET);
        h.runUntilIdle();
        assertEquals(FinishReason.STOP, r.finishReason());
        final List<Integer> tokens = h.sink.tokensOf(r);
        assertEquals(5, tokens.size());
        assertEquals(EngineHarness.EOS, tokens.get(4));
        assertTrue(r.lastTokenIsEos());
    }

    @Test
    void shouldRespectMinTokensOverTheNaturalLength()
    {
        final EngineConfig config = EngineHarness.config(new FixedStepModel(MS)).maxModelLen(1000)
            .outputLengths(new OutputLengthDistribution(new int[] {3, 3}));
        final EngineHarness h = new EngineHarness(config);
        final Request r = h.request("r", 10, Request.UNSET).minTokens(8);
        h.engine.submit(r, h.nowNs);
        h.runUntilIdle();
        assertEquals(8, r.numOutputTokens());
        assertEquals(FinishReason.STOP, r.finishReason());
    }

    @Test
    void shouldRunToTheContextLimitWithIgnoreEos()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS)).maxModelLen(64));
        final Request r = h.request("r", 40, Request.UNSET).ignoreEos(true);
        h.engine.submit(r, h.nowNs);
        h.runUntilIdle();
        assertEquals(24, r.numOutputTokens());
        assertEquals(FinishReason.LENGTH, r.finishReason());
    }

    @Test
    void shouldStopOnAStopTokenIdOnlyAfterMinTokens()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS)));
        final Request r = h.request("r", 4, 500).stopTokenIds(new int[] {13}).minTokens(3);
        h.engine.submit(r, h.nowNs);
        h.runUntilIdle();
        final List<Integer> tokens = h.sink.tokensOf(r);
        assertEquals(FinishReason.STOP, r.finishReason());
        assertEquals(13, (int)tokens.get(tokens.size() - 1));
        assertTrue(tokens.size() >= 3);
        for (int i = 2; i < tokens.size() - 1; i++)
        {
            assertNotEquals(13, (int)tokens.get(i), "no stop token after min_tokens before the last");
        }
    }

    @Test
    void shouldEchoThePromptTokensThenStop()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS)));
        final Request r = h.request("r", 4, 100).fixedOutput(new int[] {7, 8, 9}, false);
        h.engine.submit(r, h.nowNs);
        h.runUntilIdle();
        assertEquals(List.of(7, 8, 9), h.sink.tokensOf(r));
        assertEquals(FinishReason.STOP, r.finishReason());
        final Request capped = h.request("capped", 4, 2).fixedOutput(new int[] {7, 8, 9}, false);
        h.engine.submit(capped, h.nowNs);
        h.runUntilIdle();
        assertEquals(List.of(7, 8), h.sink.tokensOf(capped));
        assertEquals(FinishReason.LENGTH, capped.finishReason());
    }

    @Test
    void shouldEndAFixedOutputWithEndOfSequenceWhenAsked()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(MS)));
        final Request r = h.request("r", 4, 100).eosTokenId(99).fixedOutput(new int[] {7, 8, 9}, true);
        h.engine.submit(r, h.nowNs);
        h.runUntilIdle();
        assertEquals(List.of(7, 8, 9, 99), h.sink.tokensOf(r));
        assertEquals(FinishReason.STOP, r.finishReason());
        assertTrue(r.lastTokenIsEos());
        final Request capped = h.request("capped", 4, 3).eosTokenId(99).fixedOutput(new int[] {7, 8, 9}, true);
        h.engine.submit(capped, h.nowNs);
        h.runUntilIdle();
        assertEquals(List.of(7, 8, 9), h.sink.tokensOf(capped), "max_tokens cuts before the end-of-sequence");
        assertEquals(FinishReason.LENGTH, capped.finishReason());
    }

    @Test
    void shouldProduceIdenticalStepsAndTokensForTheSameSeed()
    {
        final List<String> first = runSeeded(42);
        final List<String> second = runSeeded(42);
        final List<String> other = runSeeded(43);
        assertEquals(first, second);
        assertNotEquals(first, other);
    }

    private static List<String> runSeeded(final long seed)
    {
        final StepCoefficients jittery = StepCoefficients.DENSE_8B_RTXPRO6000.with(15000, 30, 120, 1, 0.1);
        final EngineHarness h = new EngineHarness(new EngineConfig().seed(seed).maxNumSeqs(4)
            .latencyModel(new StepLatencyModel(jittery)).maxModelLen(4096)
            .outputLengths(OutputLengthDistribution.MOONCAKE_CONVERSATION));
        final List<Request> requests = new ArrayList<>();
        for (int i = 0; i < 10; i++)
        {
            requests.add(h.submit("r" + i, 50 + 30 * i, i % 2 == 0 ? 20 : Request.UNSET));
        }
        h.runUntilIdle();
        final List<String> trace = new ArrayList<>();
        for (final Request r : requests)
        {
            trace.add(r.requestId() + " " + h.sink.tokensOf(r) + " " + h.sink.timesOf(r) + " " + r.finishReason());
        }
        return trace;
    }

    @Test
    void shouldHoldTheFirstTokenForTheKnobTtftAndPaceDecodesAtTheItl()
    {
        final KnobLatencyModel knob = new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO, 100 * MS, 0,
            12 * MS, 0, 0, 0, 0, 1.0, 256);
        final EngineHarness h = new EngineHarness(EngineHarness.config(knob));
        final long arrival = h.nowNs;
        final Request r = h.submit("r", 30, 4);
        h.runUntilIdle();
        assertEquals(List.of(arrival + 100 * MS, arrival + 112 * MS, arrival + 124 * MS, arrival + 136 * MS),
            h.sink.timesOf(r));
        assertEquals(FinishReason.LENGTH, r.finishReason());
    }

    @Test
    void shouldScaleKnobLatencyWithLoad()
    {
        final KnobLatencyModel knob = new KnobLatencyModel(KnobLatencyModel.Calculator.AUTO, 0, 0,
            10 * MS, 0, 0, 0, 0, 3.0, 5);
        assertEquals(1.0, knob.loadFactor(1));
        assertEquals(2.0, knob.loadFactor(3));
        assertEquals(3.0, knob.loadFactor(5));
        final EngineHarness h = new EngineHarness(EngineHarness.config(knob).maxNumSeqs(5));
        final List<Request> requests = new ArrayList<>();
        for (int i = 0; i < 5; i++)
        {
            requests.add(h.submit("r" + i, 10, 3));
        }
        h.runUntilIdle();
        final List<Long> times = h.sink.timesOf(requests.get(0));
        assertEquals(30 * MS, times.get(1) - times.get(0), "5 running: ITL x 3");
    }

    @Test
    void shouldGrowTtftWithPromptLengthAndItlWithBatchSizeUnderTheStepModel()
    {
        final double shortTtft = isolatedTtftMs(100);
        final double longTtft = isolatedTtftMs(4000);
        assertTrue(longTtft > shortTtft + 100, shortTtft + " vs " + longTtft);
        final double itlAlone = itlMs(1);
        final double itlLoaded = itlMs(128);
        assertTrue(itlLoaded > itlAlone * 1.5, itlAlone + " vs " + itlLoaded);
    }

    private static double isolatedTtftMs(final int promptTokens)
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(
            new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000)));
        final long arrival = h.nowNs;
        final Request r = h.submit("r", promptTokens, 2);
        h.runUntilIdle();
        return (h.sink.timesOf(r).get(0) - arrival) / 1e6;
    }

    private static double itlMs(final int concurrent)
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(
            new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000)));
        final List<Request> requests = new ArrayList<>();
        for (int i = 0; i < concurrent; i++)
        {
            requests.add(h.submit("r" + i, 16, 20));
        }
        h.runUntilIdle();
        final List<Long> times = h.sink.timesOf(requests.get(0));
        return (times.get(19) - times.get(10)) / 9e6;
    }

    @Test
    void aFrontendDelayComesBeforeTheQueueAndAddsToTtftOnly()
    {
        final EngineHarness plain = new EngineHarness(EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS)));
        final EngineHarness delayed = new EngineHarness(EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS))
            .frontendDelayNs(7 * MS));
        final Request a = plain.submit("r", 20, 4);
        final Request b = delayed.submit("r", 20, 4);
        plain.runUntilIdle();
        delayed.runUntilIdle();
        assertEquals(a.firstTokenNs() - a.arrivalNs() + 7 * MS, b.firstTokenNs() - b.arrivalNs(),
            "the idle engine is woken when the request reaches its queue");
        assertEquals(plain.sink.tokenTimes.get(a).get(3) - a.firstTokenNs(),
            delayed.sink.tokenTimes.get(b).get(3) - b.firstTokenNs(), "the gaps are the engine's");
        assertEquals(a.scheduledNs - a.queuedNs, b.scheduledNs - b.queuedNs, "the queue time excludes it");
    }

    @Test
    void aJitteredFrontendDelayKeepsItsMeanAndQueuesRequestsInTheOrderTheyArrive()
    {
        final EngineConfig config = EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS))
            .frontendDelayNs(10 * MS).frontendDelayJitter(0.6).maxNumSeqs(1);
        final EngineHarness first = new EngineHarness(config);
        final EngineHarness again = new EngineHarness(config.copy());
        final List<Request> requests = new ArrayList<>();
        double sumMs = 0;
        long shortest = Long.MAX_VALUE;
        long longest = 0;
        for (int i = 0; i < 400; i++)
        {
            final Request r = first.submit("r" + i, 20, 1);
            requests.add(r);
            assertEquals(r.queuedNs(), again.submit("r" + i, 20, 1).queuedNs(), "the same seed, the same delays");
            final long delayNs = r.queuedNs() - r.arrivalNs();
            sumMs += delayNs / 1e6;
            shortest = Math.min(shortest, delayNs);
            longest = Math.max(longest, delayNs);
        }
        assertEquals(10, sumMs / 400, 1, "log-normal around the mean");
        assertTrue(shortest < 5 * MS && longest > 20 * MS, shortest + " .. " + longest);
        first.runUntilIdle();
        // one running slot: admitted one at a time, in the order they reached the queue
        final List<Request> byQueue = new ArrayList<>(requests);
        byQueue.sort(java.util.Comparator.comparingLong(Request::queuedNs));
        for (int i = 1; i < byQueue.size(); i++)
        {
            assertTrue(byQueue.get(i - 1).scheduledNs <= byQueue.get(i).scheduledNs, "admitted in queue order");
        }
    }

    @Test
    void theChildrenOfOneRequestWithNShareOneJitteredFrontendDelay()
    {
        final EngineConfig config = EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS))
            .frontendDelayNs(10 * MS).frontendDelayJitter(0.8);
        final EngineHarness h = new EngineHarness(config);
        final EngineHarness again = new EngineHarness(config.copy());
        final List<Request> children = submitChildrenOfN(h, "parent", 3);
        final Request alone = h.submit("alone", 20, 4);
        final List<Request> repeated = submitChildrenOfN(again, "parent", 3);
        final long queuedNs = children.get(0).queuedNs();
        assertTrue(queuedNs > h.nowNs, "the first child draws the delay");
        assertNotEquals(queuedNs - h.nowNs, alone.queuedNs() - h.nowNs, "another request draws a delay of its own");
        for (int i = 0; i < 3; i++)
        {
            assertEquals(queuedNs, children.get(i).queuedNs(), "child " + i + " reaches the queue with the first");
            assertEquals(queuedNs, repeated.get(i).queuedNs(), "the same seed, the same delay");
        }
        h.runUntilIdle();
        for (final Request child : children)
        {
            assertEquals(children.get(0).scheduledNs, child.scheduledNs, "the children share their first step");
            assertEquals(children.get(0).firstTokenNs(), child.firstTokenNs());
        }
    }

    /** Submit the n children of one client request as serve does: the first reports n, the others follow it. */
    private static List<Request> submitChildrenOfN(final EngineHarness h, final String id, final int n)
    {
        final List<Request> children = new ArrayList<>();
        final int[] prompt = EngineHarness.prompt(id, 20);
        for (int i = 0; i < n; i++)
        {
            final Request child = new Request(id + "-" + i, prompt).maxTokens(4).arrivalNs(h.nowNs)
                .parallelN(0 == i ? n : 0).firstSibling(0 == i ? null : children.get(0));
            assertEquals(SubmitResult.ACCEPTED, h.engine.submit(child, h.nowNs));
            children.add(child);
        }
        return children;
    }

    @Test
    void anUrgentRequestStillInItsFrontendDelayHoldsBackNoQueuedRequest()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(new FixedStepModel(EngineHarness.STEP_NS))
            .schedulingPolicy(SchedulingPolicy.PRIORITY).frontendDelayNs(25 * MS).maxNumSeqs(4));
        final Request busy = h.request("busy", 20, 100).priority(9);
        assertEquals(SubmitResult.ACCEPTED, h.engine.submit(busy, h.nowNs));
        h.poke();
        while (0 == busy.scheduledNs)
        {
            h.advance();
        }
        final Request queued = h.request("queued", 20, 3).priority(5);
        assertEquals(SubmitResult.ACCEPTED, h.engine.submit(queued, h.nowNs));
        h.nowNs += 15 * MS;
        final Request urgent = h.request("urgent", 20, 3).priority(0);
        assertEquals(SubmitResult.ACCEPTED, h.engine.submit(urgent, h.nowNs));
        h.runUntilIdle();
        assertTrue(queued.scheduledNs < urgent.queuedNs(), "admitted at " + queued.scheduledNs + ", before the " +
            "urgent request reached the queue at " + urgent.queuedNs());
        assertTrue(urgent.scheduledNs >= urgent.queuedNs(), "and the urgent one once it reached it");
    }
}
