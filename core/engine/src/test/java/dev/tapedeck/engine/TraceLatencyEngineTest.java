package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.TraceLatencyModel;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine on {@code --latency-trace}'s model, with a manual clock: TTFT from the service curve (held after the
 * prefill for what the steps did not charge), decode steps paced per request from recorded gaps with their bursts (from
 * the churn donors after a big admission), and spec-decode accounting for the trace's K.
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

    /** {@link #isolated()} plus requests at concurrency 4 whose marked gaps fit c0 = 0.02 ms, c1 = 4e-6 ms. */
    private static List<TraceRecord> withChunkLaw()
    {
        final List<TraceRecord> records = new ArrayList<>(isolated());
        for (int r = 0; r < 20; r++)
        {
            final double[] gaps = new double[20];
            final int[] marks = new int[20];
            final int[] running = new int[20];
            java.util.Arrays.fill(gaps, 10);
            java.util.Arrays.fill(running, 4);
            for (final int at : new int[] {5, 12})
            {
                final int chunk = 300 + 80 * r + at * 11;
                marks[at] = chunk;
                gaps[at] = 10 + 0.02 * chunk + 4e-6 * chunk * (double)chunk / 2;
            }
            records.add(new TraceRecord().promptTokens(2000).outputTokens(21).ttftMs(100).itlMs(gaps)
                .itlContext(new TraceRecord.ItlContext(running, marks)).concurrency(4L));
        }
        return records;
    }

    @Test
    void shouldHoldTheFirstTokenAfterThePrefillForWhatTheStepsDidNotCharge()
    {
        final TraceLatencyModel model = TraceLatencyModel.of(withChunkLaw(), 2048, "t");
        final EngineHarness alone = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(2048)
            .maxModelLen(10_000));
        final long startNs = alone.nowNs;
        final Request r = alone.submit("r", 1000, 4);
        alone.runUntilIdle();
        assertEquals(27 * MS, r.firstTokenNs() - startNs, MS / 10, "alone: T(1000), charged chunk plus overhead");

        // behind a long prompt, r's chunks wait: its first token comes T(u) - charge (27 - 22 ms) after its prefill
        // ends, the end of a step in which the long request decodes
        final EngineHarness busy = new EngineHarness(EngineHarness.config(model).maxNumBatchedTokens(2048)
            .maxModelLen(10_000));
        final Request big = busy.submit("big", 6000, 40);
        final Request behind = busy.submit("behind", 1000, 4);
        busy.runUntilIdle();
        final long heldNs = 5 * MS;
        assertTrue(busy.sink.timesOf(big).stream().anyMatch(t -> Math.abs(behind.firstTokenNs() - heldNs - t) < MS / 3),
            "first token " + (behind.firstTokenNs() - startNs) + " ns, the long request's tokens " +
            busy.sink.timesOf(big));
        assertTrue(behind.firstTokenNs() - startNs > 100 * MS, "it waited for the long prompt's chunks");
    }

    @Test
    void shouldPaceARequestAdmittedJustAfterABigChunkFromTheChurnDonors()
    {
        final List<TraceRecord> records = new ArrayList<>();
        for (int r = 0; r < 10; r++)
        {
            final double[] calm = new double[20];
            java.util.Arrays.fill(calm, 10);
            records.add(new TraceRecord().promptTokens(1000).outputTokens(21).ttftMs(30).itlMs(calm)
                .itlContext(new TraceRecord.ItlContext(new int[20], new int[20])).concurrency(2L));
            final double[] churn = new double[20];
            java.util.Arrays.fill(churn, 50);
            final int[] marks = new int[20];
            marks[3] = 5000;
            marks[11] = 5000;
            churn[3] = 300;
            churn[11] = 300;
            records.add(new TraceRecord().promptTokens(1000).outputTokens(21).ttftMs(30).itlMs(churn)
                .itlContext(new TraceRecord.ItlContext(new int[20], marks)).concurrency(2L));
        }
        final EngineHarness h = new EngineHarness(EngineHarness.config(TraceLatencyModel.of(records, 8192, "t"))
            .maxModelLen(10_000));
        h.submit("big", 5000, 1);
        final Request afterBig = h.submit("after-big", 1000, 10);
        h.runUntilIdle();
        h.nowNs += 2_000_000_000L;
        final Request calm = h.submit("calm", 1000, 10);
        h.runUntilIdle();
        assertEquals(List.of(50L), gapsMs(h.sink.timesOf(afterBig)), "admitted with a 5000-token prompt: churn");
        assertEquals(List.of(10L), gapsMs(h.sink.timesOf(calm)), "admitted 2 s later: calm");
    }

    private static List<Long> gapsMs(final List<Long> times)
    {
        final List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < times.size(); i++)
        {
            final long gapMs = Math.round((times.get(i) - times.get(i - 1)) / (double)MS);
            if (!gaps.contains(gapMs))
            {
                gaps.add(gapMs);
            }
        }
        return gaps;
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
