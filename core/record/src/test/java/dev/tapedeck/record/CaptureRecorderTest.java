package dev.tapedeck.record;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.protocol.enginecore.RequestType;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceTestData;
import dev.tapedeck.trace.TraceValidation;
import dev.tapedeck.trace.TraceWriter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The capture logic on decoded messages, without sockets: records written to a real file and read back.
 */
class CaptureRecorderTest
{
    private static final long MS = 1_000_000L;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private CaptureRecorder recorder(final VllmLine line, final boolean recordTokens, final Path stepStats)
        throws IOException
    {
        return new CaptureRecorder(TraceWriter.open(dir.resolve("trace.jsonl"), new TraceMeta().source("tap")),
            null == stepStats ? null : StepStatsWriter.open(stepStats), line, 16, recordTokens, 0);
    }

    private List<TraceRecord> records() throws IOException
    {
        final TraceReader.Trace trace = TraceReader.readAll(dir.resolve("trace.jsonl"));
        for (final TraceRecord record : trace.records())
        {
            assertTrue(TraceValidation.problems(record).isEmpty(), TraceValidation.problems(record).toString());
        }
        return trace.records();
    }

    private static int[] prompt(final int length)
    {
        final int[] prompt = new int[length];
        for (int i = 0; i < length; i++)
        {
            prompt[i] = 1000 + i;
        }
        return prompt;
    }

    @Test
    void shouldRecordTtftGapsBatchContextCachedTokensAndFinish() throws IOException
    {
        try (CaptureRecorder r = recorder(VllmLine.NEWEST, false, null))
        {
            r.onInput(RequestType.ADD, Wire.add("a", prompt(40), 4), 10 * MS);
            r.onInput(RequestType.ADD, Wire.add("b", prompt(20), 4), 12 * MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("a", new int[] {1}, null, 11, Wire.prefillStats(40, 16, 4))),
                Wire.stats(2, 0), null), 30 * MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("a", new int[] {2, 3}, null),
                Wire.output("b", new int[] {9}, null, 11, Wire.prefillStats(20, 0, 0))), Wire.stats(2, 0), null),
                40 * MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("a", new int[] {4}, 1)), null, null), 50 * MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("b", new int[0], 0)), null, null), 55 * MS);
            assertEquals(2, r.records());
            assertEquals(0, r.inFlight());
        }
        final List<TraceRecord> records = records();
        final TraceRecord a = records.get(0);
        assertEquals(40, a.promptTokens());
        assertEquals(20, a.cachedTokens(), "local + external cached tokens of prefill_stats");
        assertEquals(4, a.outputTokens());
        assertEquals(10.0, a.arrivalMs(), 1e-9);
        assertEquals(20.0, a.ttftMs(), 1e-9);
        assertEquals(40.0, a.e2eMs(), 1e-9, "arrival at 10 ms to the finishing output at 50 ms");
        assertArrayEquals(new double[] {10.0, 10.0}, a.itlMs(), 1e-9);
        assertArrayEquals(new int[] {2, 1}, a.itlTokens());
        assertArrayEquals(new int[] {2, 2}, a.itlContext().numRunning(), "stats, else the tracked count");
        assertArrayEquals(new int[] {20, 0}, a.itlContext().prefillTokens(), "b's prompt got its first token");
        assertEquals(1, a.concurrency());
        assertArrayEquals(PromptBlockHashes.of(prompt(40), 40, 16), a.blockHashes());
        assertEquals(2, a.blockHashes().length);
        assertEquals("length", a.finishReason());
        final TraceRecord b = records.get(1);
        assertEquals(2, b.concurrency(), "a was in flight");
        assertEquals(28.0, b.ttftMs(), 1e-9);
        assertEquals(43.0, b.e2eMs(), 1e-9, "its finish came alone, without tokens, at 55 ms");
        assertEquals(1, b.outputTokens());
        assertEquals(0, b.cachedTokens());
        assertEquals("stop", b.finishReason());
        assertNull(b.outputTokenIds());
    }

    @Test
    void shouldLeaveAbortedRequestsOut() throws IOException
    {
        try (CaptureRecorder r = recorder(VllmLine.NEWEST, false, null))
        {
            for (final String id : new String[] {"by-frontend", "by-engine", "listed", "kept"})
            {
                r.onInput(RequestType.ADD, Wire.add(id, prompt(8), 4), MS);
            }
            r.onOutput(Wire.outputs(List.of(Wire.output("by-frontend", new int[] {1}, null),
                Wire.output("by-engine", new int[] {1}, null), Wire.output("kept", new int[] {1}, null)), null,
                null), 2 * MS);
            r.onInput(RequestType.ABORT, Wire.abort("by-frontend", "never-added"), 3 * MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("by-engine", new int[0], 2),
                Wire.output("kept", new int[] {2}, 1)), null, List.of("listed", "kept")), 4 * MS);
            assertEquals(3, r.dropped());
            assertEquals(0, r.inFlight());
        }
        final List<TraceRecord> records = records();
        assertEquals(1, records.size());
        assertEquals(2, records.get(0).outputTokens());
        assertEquals(4, records.get(0).concurrency());
    }

    @Test
    void shouldReadCachedTokensWhereTheEnginesLinePutsThem() throws IOException
    {
        try (CaptureRecorder r = recorder(VllmLine.V0_11, false, null))
        {
            r.onInput(RequestType.ADD, Wire.add("old", prompt(32), 2), MS);
            // 0.10.2-0.12: trace_headers at 9, num_cached_tokens at 10; a later output's value is not the first
            r.onOutput(Wire.outputs(List.of(Wire.output("old", new int[] {5}, null, 10, 16)), null, null), 2 * MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("old", new int[] {6}, 1, 10, 0)), null, null), 3 * MS);
        }
        assertEquals(16, records().get(0).cachedTokens());
    }

    @Test
    void shouldRecordTokenIdsMultimodalHashesAndFinishReasonsTheLineKnows() throws IOException
    {
        final byte[] multimodal = HexFormat.of().parseHex(Files.readString(
            TraceTestData.path("vllm-vcr-fixtures/mm_request_large_aux.hex")).trim());
        try (CaptureRecorder r = recorder(VllmLine.V0_11, true, null))
        {
            r.onInput(RequestType.ADD, multimodal, MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("req-mm-large", new int[] {7, 8}, null)), null, null),
                2 * MS);
            // ERROR (3) does not exist on 0.10.2-0.12: recorded as error all the same, and counted
            r.onOutput(Wire.outputs(List.of(Wire.output("req-mm-large", new int[] {9}, 3)), null, null), 3 * MS);
            assertEquals(1, r.problems());
        }
        final TraceRecord record = records().get(0);
        assertEquals(259, record.promptTokens());
        assertArrayEquals(new String[] {"processor-hash"}, record.mmHashes());
        assertArrayEquals(new int[] {7, 8, 9}, record.outputTokenIds());
        assertEquals("error", record.finishReason());
        assertEquals(16, record.blockHashes().length, "259 tokens = 16 full blocks of 16");
    }

    @Test
    void shouldNotCountRemotelyPrefilledPromptsAsPrefillWork() throws IOException
    {
        try (CaptureRecorder r = recorder(VllmLine.NEWEST, false, null))
        {
            r.onInput(RequestType.ADD, Wire.add("decode-side", prompt(64), 3,
                Wire.map("do_remote_prefill", true, "remote_engine_id", "p0")), MS);
            r.onInput(RequestType.ADD, Wire.add("local", prompt(10), 3), MS);
            r.onInput(RequestType.ADD, Wire.add("other", prompt(5), 2), MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("other", new int[] {1}, null)), null, null), 2 * MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("decode-side", new int[] {1}, null),
                Wire.output("local", new int[] {1}, null), Wire.output("other", new int[] {2}, 1)), null, null),
                3 * MS);
        }
        final TraceRecord other = records().get(0);
        assertArrayEquals(new int[] {10}, other.itlContext().prefillTokens(), "only the locally prefilled prompt");
        assertArrayEquals(new int[] {3}, other.itlContext().numRunning(), "tracked count without stats");
    }

    @Test
    void shouldWriteStepStatsWithNamedFields() throws IOException
    {
        final Path sidecar = dir.resolve("steps.jsonl.gz");
        try (CaptureRecorder r = recorder(VllmLine.NEWEST, false, sidecar))
        {
            r.onOutput(Wire.outputs(List.of(), Wire.stats(3, 1), null), 5 * MS);
            // positional, as a serde (Rust) engine writes the struct: named in the crate's order
            r.onOutput(Wire.outputs(List.of(), Wire.array(2, 0, 11, 0, 0.5, 0.0,
                Wire.array(false, 1, 32, 16, 0, 0, 0), null, Wire.array(Wire.array(1.5, 0.5, Wire.array(0.25))),
                null, null, Wire.map(), Wire.map(), null, null, "future-field"), null), 6 * MS);
            // a layout the table does not know: generic from the first mismatch
            r.onOutput(Wire.outputs(List.of(), Wire.array(4, "not-a-count"), null), 7 * MS);
            r.onOutput(Wire.outputs(List.of(), null, null), 8 * MS);
        }
        final List<String> lines = new String(new java.util.zip.GZIPInputStream(Files.newInputStream(sidecar))
            .readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines().toList();
        assertEquals(3, lines.size(), "one line per message with stats");
        final JsonNode map = JSON.readTree(lines.get(0));
        assertEquals(5.0, map.get("ts_ms").doubleValue(), 1e-9);
        assertEquals(3, map.at("/scheduler/num_running_reqs").intValue());
        assertEquals(16, map.at("/scheduler/prefix_cache_stats/queries").intValue());
        final JsonNode positional = JSON.readTree(lines.get(1)).get("scheduler");
        assertEquals(2, positional.get("num_running_reqs").intValue());
        assertEquals(11, positional.get("step_counter").intValue());
        assertEquals(0.5, positional.get("kv_cache_usage").doubleValue(), 1e-9);
        assertEquals(16, positional.at("/prefix_cache_stats/hits").intValue());
        assertEquals(1.5, positional.at("/kv_cache_eviction_events/0/lifetime_seconds").doubleValue(), 1e-9);
        assertTrue(positional.get("perf_stats").isNull());
        assertEquals("future-field", positional.get("field_15").textValue(), "unknown trailing fields are kept");
        final JsonNode unknown = JSON.readTree(lines.get(2)).get("scheduler");
        assertEquals(4, unknown.get("num_running_reqs").intValue());
        assertEquals("not-a-count", unknown.get("field_1").textValue());
    }

    @Test
    void shouldSkipMessagesItCannotReadAndGoOn() throws IOException
    {
        try (CaptureRecorder r = recorder(VllmLine.NEWEST, false, null))
        {
            r.onInput(RequestType.ADD, new byte[] {(byte)0xc1}, MS);
            r.onInput(RequestType.ABORT, new byte[] {(byte)0x92, (byte)0xa1}, MS);
            r.onOutput("ENGINE_CORE_DEAD".getBytes(java.nio.charset.StandardCharsets.US_ASCII), MS);
            r.onOutput(new byte[] {(byte)0x93, 0, (byte)0x91}, MS);
            r.onInput(RequestType.UTILITY, Wire.utility(5, "get_supported_tasks"), MS);
            r.onInput(RequestType.ADD, Wire.add("fine", prompt(4), 1), MS);
            r.onOutput(Wire.outputs(List.of(Wire.output("fine", new int[] {1}, 1)), null, null), 2 * MS);
            assertEquals(3, r.problems());
        }
        assertEquals(1, records().size());
    }
}
