package dev.tapedeck.capture;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceValidator;
import dev.tapedeck.trace.tools.DemoTraceGenerator;
import dev.tapedeck.trace.tools.PerfettoExport;
import dev.tapedeck.trace.tools.TraceSummary;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect gen-demo}: the demo workload through the real engine in virtual time gives a reproducible, valid
 * trace timed by the step model, with prefix-cache hits and exact output lengths.
 */
class DemoTraceRunTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void shouldWriteTheSameBytesForTheSameSeed() throws IOException
    {
        final Path first = dir.resolve("a.jsonl");
        final Path second = dir.resolve("b.jsonl");
        final Path other = dir.resolve("c.jsonl");
        DemoTraceRun.write(new DemoTraceGenerator.Options(120, 42, false), first);
        DemoTraceRun.write(new DemoTraceGenerator.Options(120, 42, false), second);
        DemoTraceRun.write(new DemoTraceGenerator.Options(120, 43, false), other);
        assertArrayEquals(Files.readAllBytes(first), Files.readAllBytes(second));
        assertFalse(Arrays.equals(Files.readAllBytes(first), Files.readAllBytes(other)));
    }

    @Test
    void shouldPassValidationAndLookLikeACapture() throws IOException
    {
        final Path path = dir.resolve("demo.jsonl");
        final DemoTraceGenerator.Options options = new DemoTraceGenerator.Options(200, 0, false);
        final DemoTraceGenerator.Result result = DemoTraceRun.write(options, path);
        final List<TraceValidator.Problem> problems = new ArrayList<>();
        assertTrue(TraceValidator.validate(path, problems::add).valid(), problems.toString());
        final TraceReader.Trace trace = TraceReader.readAll(path);
        assertEquals("gen-demo", trace.meta().source());
        assertEquals(16L, trace.meta().blockSize());
        assertEquals(256L, trace.meta().maxNumSeqs());
        assertEquals(200, trace.records().size());
        assertEquals(200, result.records());

        final Map<Double, DemoTraceGenerator.DemoRequest> workload = new HashMap<>();
        for (final DemoTraceGenerator.DemoRequest request : DemoTraceGenerator.requests(options))
        {
            workload.put(request.arrivalMs(), request);
        }
        assertEquals(200, workload.size(), "arrivals are distinct, so they name the requests");
        double lastEndMs = 0;
        final List<TraceRecord> byArrival = new ArrayList<>(trace.records());
        byArrival.sort(Comparator.comparingDouble(TraceRecord::arrivalMs));
        assertEquals(0.0, byArrival.get(0).arrivalMs(), "the first request arrives at the capture start");
        long outputTokens = 0;
        final Map<Long, Integer> firstBlockUses = new HashMap<>();
        int cachedRecords = 0;
        int lengths = 0;
        for (final TraceRecord record : trace.records())
        {
            final DemoTraceGenerator.DemoRequest request = workload.get(record.arrivalMs());
            assertEquals(request.promptTokenIds().length, record.promptTokens());
            assertEquals(request.outputTokens(), record.outputTokens(), "exactly the drawn output length");
            assertEquals(request.finishReason(), record.finishReason());
            lengths += "length".equals(record.finishReason()) ? 1 : 0;
            final double endMs = record.arrivalMs() + record.ttftMs() + sum(record.itlMs());
            assertTrue(endMs >= lastEndMs - 0.0001, "records are in finish order");
            assertEquals(endMs - record.arrivalMs(), record.e2eMs(), 0.005,
                "e2e_ms: arrival to the last token, which ends the request");
            lastEndMs = Math.max(lastEndMs, endMs);
            assertEquals(record.outputTokens() - 1, record.itlMs().length, "one token per step");
            assertTrue(record.ttftMs() >= StepCoefficients.DENSE_8B_RTXPRO6000.baseUs() / 1000.0 - 0.001,
                "a first token takes at least one step: " + record.ttftMs());
            for (int g = 0; g < record.itlMs().length; g++)
            {
                assertTrue(record.itlMs()[g] >= 15.0, "a decode step of the 8B model lasts at least its base");
                assertEquals(record.itlMs()[g], DemoTraceGenerator.roundMs(record.itlMs()[g]), "whole microseconds");
                assertTrue(record.itlContext().numRunning()[g] >= 1);
            }
            assertTrue(record.concurrency() >= 1);
            assertEquals(record.promptTokens() / 16, record.blockHashes().length);
            if (record.blockHashes().length > 0)
            {
                firstBlockUses.merge(record.blockHashes()[0], 1, Integer::sum);
            }
            cachedRecords += record.cachedTokens() > 0 ? 1 : 0;
            assertTrue(record.cachedTokens() < record.promptTokens());
            assertEquals(0, record.cachedTokens() % 16);
            outputTokens += record.outputTokens();
        }
        assertTrue(lengths > 0, "some outputs reach max_tokens");
        assertEquals(outputTokens, result.outputTokens());
        assertEquals(lastEndMs, result.spanMs(), 0.0001);
        assertTrue(firstBlockUses.values().stream().anyMatch(uses -> uses >= 10), "shared system prompts");
        assertTrue(cachedRecords >= 50, "later requests hit the prefix cache: " + cachedRecords);

        final TraceSummary summary = TraceSummary.of(path);
        assertTrue(summary.rows().size() >= 5, "concurrency varies: " + summary.rows().size() + " rows");
        assertTrue(result.peakConcurrency() >= 5, "peak concurrency " + result.peakConcurrency());
        final TraceSummary.Row all = summary.all();
        assertTrue(all.ttftMs().p99() > 2 * all.ttftMs().p50(), "TTFT tail: " + all.ttftMs());
        assertTrue(all.itlMs().p50() > 15.0 && all.itlMs().p50() < 40.0, "ITL of a loaded 8B model: " + all.itlMs());
    }

    @Test
    void shouldMakeAShortTraceWhenFast() throws IOException
    {
        final Path path = dir.resolve("fast.jsonl.gz");
        final DemoTraceGenerator.Result result =
            DemoTraceRun.write(new DemoTraceGenerator.Options(200, 0, true), path);
        assertTrue(result.spanMs() < 20_000, "200 fast records span " + result.spanMs() + " ms");
        final TraceReader.Trace trace = TraceReader.readAll(path);
        assertEquals(200, trace.records().size());
        assertTrue(trace.records().stream().allMatch(record -> record.outputTokens() <= 64));
        assertEquals("fast", trace.meta().extra().get("gen_demo").get("profile").asText());
        assertTrue(TraceValidator.validate(path, problem -> { }).valid());
    }

    @Test
    void shouldNeverOverlapSlicesOnALaneAndUseAsManyLanesAsThePeakConcurrency() throws IOException
    {
        final Path demo = dir.resolve("demo.jsonl");
        DemoTraceRun.write(new DemoTraceGenerator.Options(300, 9, false), demo);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final PerfettoExport.Result result = PerfettoExport.write(demo, PerfettoExport.Options.defaults(), out);
        final JsonNode events = JSON.readTree(out.toByteArray()).get("traceEvents");
        final Map<Integer, List<long[]>> byLane = new TreeMap<>();
        long peakActive = 0;
        for (final JsonNode event : events)
        {
            if ("X".equals(event.get("ph").asText()))
            {
                final long startNs = ns(event.get("ts"));
                byLane.computeIfAbsent(event.get("tid").asInt(), tid -> new ArrayList<>())
                    .add(new long[] {startNs, startNs + ns(event.get("dur"))});
            }
            else if ("C".equals(event.get("ph").asText()) && "active_requests".equals(event.get("name").asText()))
            {
                peakActive = Math.max(peakActive, event.get("args").get("active_requests").asLong());
            }
        }
        assertEquals(result.peakConcurrency(), byLane.size());
        assertEquals(result.peakConcurrency(), peakActive, "lanes = the peak of active_requests");
        int slices = 0;
        for (final List<long[]> lane : byLane.values())
        {
            lane.sort(Comparator.comparingLong(slice -> slice[0]));
            for (int i = 1; i < lane.size(); i++)
            {
                assertTrue(lane.get(i)[0] >= lane.get(i - 1)[1], "slice " + i + " starts before the one before ends");
            }
            slices += lane.size();
        }
        assertEquals(events.size(), result.events());
        assertEquals(events.size(), slices + countOf(events, "M") + countOf(events, "C"), "only X, M and C events");
    }

    private static long ns(final JsonNode microseconds)
    {
        return new BigDecimal(microseconds.asText()).movePointRight(3).longValueExact();
    }

    private static int countOf(final JsonNode events, final String phase)
    {
        int count = 0;
        for (final JsonNode event : events)
        {
            count += phase.equals(event.get("ph").asText()) ? 1 : 0;
        }
        return count;
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
