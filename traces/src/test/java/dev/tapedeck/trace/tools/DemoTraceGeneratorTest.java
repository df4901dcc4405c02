package dev.tapedeck.trace.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceValidator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect gen-demo}: reproducible, valid, heavy-tailed, timed by the step model, with shared prefixes.
 */
class DemoTraceGeneratorTest
{
    @TempDir
    Path dir;

    @Test
    void shouldWriteTheSameBytesForTheSameSeed() throws IOException
    {
        final Path first = dir.resolve("a.jsonl");
        final Path second = dir.resolve("b.jsonl");
        final Path other = dir.resolve("c.jsonl");
        DemoTraceGenerator.write(new DemoTraceGenerator.Options(120, 42, false), first);
        DemoTraceGenerator.write(new DemoTraceGenerator.Options(120, 42, false), second);
        DemoTraceGenerator.write(new DemoTraceGenerator.Options(120, 43, false), other);
        assertArrayEquals(Files.readAllBytes(first), Files.readAllBytes(second));
        assertFalse(java.util.Arrays.equals(Files.readAllBytes(first), Files.readAllBytes(other)));
    }

    @Test
    void shouldPassValidationAndLookLikeACapture() throws IOException
    {
        final Path path = dir.resolve("demo.jsonl");
        final DemoTraceGenerator.Result result =
            DemoTraceGenerator.write(new DemoTraceGenerator.Options(200, 0, false), path);
        final List<TraceValidator.Problem> problems = new ArrayList<>();
        assertTrue(TraceValidator.validate(path, problems::add).valid(), problems.toString());
        final TraceReader.Trace trace = TraceReader.readAll(path);
        assertEquals("gen-demo", trace.meta().source());
        assertEquals(16L, trace.meta().blockSize());
        assertEquals(200, trace.records().size());
        assertEquals(200, result.records());

        double lastEndMs = 0;
        final List<TraceRecord> byArrival = new ArrayList<>(trace.records());
        byArrival.sort(java.util.Comparator.comparingDouble(TraceRecord::arrivalMs));
        assertEquals(0.0, byArrival.get(0).arrivalMs(), "the first request arrives at the capture start");
        long outputTokens = 0;
        final Map<Long, Integer> firstBlockUses = new HashMap<>();
        int cachedRecords = 0;
        for (final TraceRecord record : trace.records())
        {
            final double endMs = record.arrivalMs() + record.ttftMs() + sum(record.itlMs());
            assertTrue(endMs >= lastEndMs - 0.01, "records are in finish order");
            lastEndMs = Math.max(lastEndMs, endMs);
            assertEquals(record.outputTokens() - 1, record.itlMs().length, "one token per step");
            assertTrue(record.ttftMs() >= StepCoefficients.DENSE_8B_RTXPRO6000.baseUs() / 1000.0 - 0.001,
                "a first token takes at least one step: " + record.ttftMs());
            for (int g = 0; g < record.itlMs().length; g++)
            {
                assertTrue(record.itlMs()[g] >= 15.0, "a decode step of the 8B model lasts at least its base");
                assertTrue(record.itlContext().numRunning()[g] >= 1);
            }
            assertTrue(record.concurrency() >= 1);
            assertTrue("stop".equals(record.finishReason()) || "length".equals(record.finishReason()));
            assertEquals(record.promptTokens() / 16, record.blockHashes().length);
            firstBlockUses.merge(record.blockHashes()[0], 1, Integer::sum);
            cachedRecords += record.cachedTokens() > 0 ? 1 : 0;
            assertTrue(record.cachedTokens() < record.promptTokens());
            assertEquals(0, record.cachedTokens() % 16);
            outputTokens += record.outputTokens();
        }
        assertEquals(outputTokens, result.outputTokens());
        assertEquals(lastEndMs, result.spanMs(), 0.01);
        assertTrue(firstBlockUses.values().stream().anyMatch(uses -> uses >= 10), "shared system prompts");
        assertTrue(cachedRecords >= 50, "later requests hit the prefix cache: " + cachedRecords);

        final TraceSummary summary = TraceSummary.of(path);
        assertTrue(summary.rows().size() >= 5, "concurrency varies: " + summary.rows().size() + " rows");
        assertTrue(result.peakConcurrency() >= 5, "peak concurrency " + result.peakConcurrency());
        final TraceSummary.Row all = summary.all();
        assertTrue(all.promptTokensMax() > 8 * 600, "heavy-tailed prompts: max " + all.promptTokensMax());
        assertTrue(all.outputTokensMax() >= 5 * 150, "heavy-tailed outputs: max " + all.outputTokensMax());
        assertTrue(all.ttftMs().p99() > 2 * all.ttftMs().p50(), "TTFT tail: " + all.ttftMs());
        assertTrue(all.itlMs().p50() > 15.0 && all.itlMs().p50() < 40.0, "ITL of a loaded 8B model: " + all.itlMs());
    }

    @Test
    void shouldMakeAShortTraceWhenFast() throws IOException
    {
        final Path path = dir.resolve("fast.jsonl.gz");
        final DemoTraceGenerator.Result result =
            DemoTraceGenerator.write(new DemoTraceGenerator.Options(200, 0, true), path);
        assertTrue(result.spanMs() < 20_000, "200 fast records span " + result.spanMs() + " ms");
        final TraceReader.Trace trace = TraceReader.readAll(path);
        assertTrue(trace.records().stream().allMatch(record -> record.outputTokens() <= 64));
        assertEquals("fast", trace.meta().extra().get("gen_demo").get("profile").asText());
        assertTrue(TraceValidator.validate(path, problem -> { }).valid());
        assertThrows(IllegalArgumentException.class, () -> new DemoTraceGenerator.Options(0, 0, false));
    }

    private static double sum(final double[] values)
    {
        double sum = 0;
        for (final double value : values)
        {
            sum += value;
        }
        return sum;
    }
}
