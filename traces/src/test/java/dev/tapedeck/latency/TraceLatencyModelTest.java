package dev.tapedeck.latency;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The trace latency model's fits and draws on synthetic records whose truth is known.
 */
class TraceLatencyModelTest
{
    private static final double MS = 1e6;

    @TempDir
    Path dir;

    /** Isolated requests (concurrency 1) with TTFT 20 + 0.01 u ms and steady 10 ms gaps, some in bursts of 3. */
    private static List<TraceRecord> isolated()
    {
        final List<TraceRecord> records = new ArrayList<>();
        for (int u = 100; u <= 5000; u += 100)
        {
            records.add(new TraceRecord().promptTokens(u).outputTokens(8).ttftMs(20 + 0.01 * u)
                .itlMs(new double[] {9, 10, 11, 10, 12}).itlTokens(new int[] {1, 1, 3, 1, 1}).concurrency(1L)
                .arrivalMs((double)u));
        }
        return records;
    }

    @Test
    void shouldFitThePrefillServiceCurveToTheLowPercentileOfEachWindow()
    {
        final TraceLatencyModel model = TraceLatencyModel.of(isolated(), 8192, "test");
        // each 600-token window holds 6 requests; its p10 is its first, its u its fourth: T(u) = 17 + 0.01 u
        // no itl_ctx: no chunk law, the steps charge nothing for a prefill and the whole T(u) is held after it
        assertEquals(27.0, model.firstTokenOverheadNs(1000, 0, 1, new SeededRandom(1)) / MS, 0.05);
        assertEquals(27.0, model.firstTokenOverheadNs(1500, 500, 1, new SeededRandom(1)) / MS, 0.05,
            "cached tokens are not computed");
        assertEquals(21.0, model.firstTokenOverheadNs(1, 0, 1, new SeededRandom(1)) / MS, 0.05,
            "the smallest window's p10 is the floor");
        assertEquals(0, model.firstTokenDelayNs(1000, 0, 1, new SeededRandom(1)), "nothing is held from admission");
    }

    @Test
    void shouldPaceDecodesFromRecordedGapsWithTheirBurstsAndKeepTheDonor()
    {
        final TraceLatencyModel model = TraceLatencyModel.of(isolated(), 8192, "test");
        assertEquals(2, model.speculativeTokens(), "K = max(itl_tokens) - 1");
        final DecodePacing pacing = model.newDecodePacing(700);
        final SeededRandom random = new SeededRandom(3);
        final Set<Integer> tokens = new HashSet<>();
        for (int i = 0; i < 2000; i++)
        {
            final double gapMs = model.pacedStepNs(pacing, 1, random) / MS;
            assertTrue(gapMs >= 9 && gapMs <= 12, "between the donor's gaps: " + gapMs);
            tokens.add(pacing.tokens());
        }
        assertEquals(Set.of(1, 3), tokens, "the nearer recorded step's itl_tokens");
        final long[] again = new long[2];
        for (int seed = 0; seed < 2; seed++)
        {
            again[seed] = model.pacedStepNs(model.newDecodePacing(700), 1, new SeededRandom(11));
        }
        assertEquals(again[0], again[1], "the same seed, the same draw");
    }

    @Test
    void shouldFitTheChunkCostLawFromGapsThatAdmittedAPrefill()
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
                final int chunk = 300 + 97 * r + at * 11;
                marks[at] = chunk;
                gaps[at] = 10 + 0.02 * chunk + 4e-6 * chunk * (double)chunk / 2;
            }
            records.add(new TraceRecord().promptTokens(2000).outputTokens(21).ttftMs(100).itlMs(gaps)
                .itlContext(new TraceRecord.ItlContext(running, marks)).concurrency(4L));
        }
        final TraceLatencyModel model = TraceLatencyModel.of(records, 8192, "test");
        final double expected = 0.02 * 1000 + 4e-6 * 1000 * 1000 / 2;
        assertEquals(expected, model.cost(1000), expected * 0.01);
        final StepShape prefill = new FixedStepShape(0, 1000, 1, 0, 1);
        assertEquals(expected, model.stepDurationNs(prefill, new SeededRandom(1)) / MS, expected * 0.01);
        // the same chunk after 3000 computed tokens: c0 t + c1 ((3000 + t)^2 - 3000^2) / 2
        final StepShape deep = new FixedStepShape(0, 1000, 1, 0, 1, 1000L * 3000 + 1000L * 1001 / 2);
        final double deeper = 0.02 * 1000 + 4e-6 * (4000.0 * 4000 - 3000.0 * 3000) / 2;
        assertEquals(deeper, model.stepDurationNs(deep, new SeededRandom(1)) / MS, deeper * 0.01);
        // the first token is held after the prefill for T(u) less what the steps charged: 27 - 22 ms
        assertEquals(27.0 - expected, model.firstTokenOverheadNs(1000, 0, 1, new SeededRandom(1)) / MS, 0.3);
        assertEquals(0, model.firstTokenOverheadNs(4000, 3000, 1, new SeededRandom(1)),
            "the steps charge more than T(u) for a chunk that deep: nothing more is held");
    }

    @Test
    void shouldDrawOutputLengthsFromTheTrace()
    {
        final TraceLatencyModel model = TraceLatencyModel.of(isolated(), 8192, "test");
        final SeededRandom random = new SeededRandom(5);
        for (int i = 0; i < 100; i++)
        {
            assertEquals(8, model.sampleOutputLength(random));
        }
    }

    @Test
    void shouldRefuseTracesWithoutItlDataAndNameTheFileAndLineOfABadRecord() throws Exception
    {
        final IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () ->
            TraceLatencyModel.of(List.of(new TraceRecord().promptTokens(10).outputTokens(1).ttftMs(5)), 8192, "x"));
        assertTrue(none.getMessage().contains("no record has ITL data"), none.getMessage());
        final Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"prompt_tokens\":4,\"output_tokens\":1,\"ttft_ms\":1}\n{\"prompt_tokens\":[]}\n");
        final IllegalArgumentException line = assertThrows(IllegalArgumentException.class,
            () -> TraceLatencyModel.read(List.of(bad), 8192));
        assertTrue(line.getMessage().contains("bad.jsonl") && line.getMessage().contains("2"), line.getMessage());
    }
}
