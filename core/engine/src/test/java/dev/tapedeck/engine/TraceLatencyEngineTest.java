package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.TraceLatencyModel;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine on {@code --latency-trace}'s model, with a manual clock: TTFT from the service curve, decode steps paced
 * per request from recorded gaps with their bursts, and spec-decode accounting for the trace's K.
 */
class TraceLatencyEngineTest
{
    private static final long MS = 1_000_000L;

    private static List<TraceRecord> isolated()
    {
        final List<TraceRecord> records = new ArrayList<>();
        for (int u = 100; u <= 5000; u += 100)
        {
            records.add(new TraceRecord().promptTokens(u).outputTokens(8).ttftMs(20 + 0.01 * u)
                .itlMs(new double[] {9, 10, 11, 10, 12}).itlTokens(new int[] {1, 1, 3, 1, 1}).concurrency(1L));
        }
        return records;
    }

    @Test
    void shouldTimeALoneRequestFromTheTrace()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(TraceLatencyModel.of(isolated(), 8192, "t"))
            .maxModelLen(10_000));
        final long startNs = h.nowNs;
        final Request r = h.submit("r", 1000, 60);
        h.runUntilIdle();
        assertEquals(60, h.sink.tokensOf(r).size());
        assertEquals(27 * MS, r.firstTokenNs() - startNs, MS / 10, "T(1000) = 17 + 0.01 x 1000 ms");
        final List<Long> times = h.sink.timesOf(r);
        for (int i = 1; i < times.size(); i++)
        {
            final long gapNs = times.get(i) - times.get(i - 1);
            assertTrue(0 == gapNs || (gapNs >= 9 * MS && gapNs <= 12 * MS), "a recorded gap: " + gapNs);
        }
        final List<Integer> bursts = SpeculativeDecodingTest.chunkSizes(times);
        assertTrue(bursts.subList(1, bursts.size() - 1).stream().allMatch(b -> 1 == b || 3 == b), "bursts " + bursts);
        assertTrue(bursts.contains(3), "bursts of 3: " + bursts);
        assertEquals(2, h.engine.metrics().numSpeculativeTokens());
        assertEquals(bursts.size() - 1, h.engine.metrics().specDrafts(), "one draft per decode step");
    }

    @Test
    void shouldDrawTheOutputLengthFromTheTraceWithoutMaxTokens()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(TraceLatencyModel.of(isolated(), 8192, "t"))
            .maxModelLen(10_000));
        final Request r = h.submit("r", 200, Request.UNSET);
        h.runUntilIdle();
        assertEquals(8, r.numOutputTokens(), "every recorded request had 8 output tokens");
        assertEquals(FinishReason.STOP, r.finishReason());
    }
}
