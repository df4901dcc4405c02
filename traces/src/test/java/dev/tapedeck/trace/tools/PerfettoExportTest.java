package dev.tapedeck.trace.tools;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect perfetto}: the trace-event document of the vllm-vcr fixtures, event by event where the values can be
 * worked out by hand.
 */
class PerfettoExportTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void shouldExportTheBatchContextFixture() throws IOException
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final PerfettoExport.Result result = PerfettoExport.write(fixture("batch_context_trace.jsonl"),
            PerfettoExport.Options.defaults(), out);
        final JsonNode document = JSON.readTree(out.toByteArray());
        assertEquals("ms", document.get("displayTimeUnit").asText());
        final JsonNode events = document.get("traceEvents");
        // ends: req0 0+45+42 = 87, req1 50+60+98 = 208, req2 100+55+59 = 214, req3 150+90+161 = 401,
        // req4 250+35+26 = 311; lanes: req0 0, req1 1, req2 0 (req0 ended at 87), req3 2, req4 0 (lowest free)
        assertEquals(new PerfettoExport.Result(5, 0, 3, 3, 0, 75, List.of()), result);
        assertEquals(75, events.size());
        assertEquals("inference trace: synthetic-model", metadata(events, "process_name", 1, 0));
        assertEquals("lane 2", metadata(events, "thread_name", 1, 3));
        assertEquals(List.of(1, 2, 1, 3, 1), prefillTids(events));

        final JsonNode prefill = slice(events, "req3 prefill");
        assertEquals(150_000, prefill.get("ts").asLong());
        assertEquals(90_000, prefill.get("dur").asLong());
        assertEquals("prefill", prefill.get("cat").asText());
        assertEquals(200, prefill.get("args").get("prompt_tokens").asInt());
        assertEquals(1, prefill.get("args").get("first_chunk_tokens").asInt());
        assertEquals("stop", prefill.get("args").get("finish_reason").asText());
        assertEquals("[400]", prefill.get("args").get("token_ids").toString());

        final List<JsonNode> decodes = slices(events, "decode", 3);
        assertEquals(9, decodes.size());
        assertEquals(240_000, decodes.get(0).get("ts").asLong());
        assertEquals(18_000, decodes.get(0).get("dur").asLong());
        assertEquals(8, decodes.get(0).get("args").get("num_running").asInt());
        assertEquals(200, decodes.get(0).get("args").get("prefill_tokens").asInt());
        assertEquals("[401]", decodes.get(0).get("args").get("token_ids").toString());
        assertEquals(383_000, decodes.get(8).get("ts").asLong());

        assertEquals(List.of("0:1", "50:2", "87:1", "100:2", "150:3", "208:2", "214:1", "250:2", "311:1", "401:0"),
            counter(events, "active_requests"));
        // itl_ctx sampled at gap ends, written when the value changes (at 294 ms req3 says 8 and req4 6: the max)
        assertEquals(List.of("55:1", "125:2", "167:4", "181:2", "191:4", "194:2", "203:3", "208:2", "214:3", "258:8",
            "302:5", "311:4", "312:8", "366:7", "401:6"), counter(events, "engine_running"));
        assertEquals(List.of("55:0", "167:96", "178:0", "258:200", "275:0", "294:128", "302:0", "347:64", "366:0"),
            counter(events, "prefill_tokens"));
    }

    @Test
    void shouldGiveEachRequestATrackOnRequestAndNameTheProcess() throws IOException
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final PerfettoExport.Result result = PerfettoExport.write(fixture("batch_context_trace.jsonl"),
            new PerfettoExport.Options("my run", true, null), out);
        final JsonNode events = JSON.readTree(out.toByteArray()).get("traceEvents");
        assertEquals(5, result.tracks());
        assertEquals(3, result.peakConcurrency());
        assertEquals("my run", metadata(events, "process_name", 1, 0));
        assertEquals("req 3 (p200 o10)", metadata(events, "thread_name", 1, 4));
        assertEquals(List.of(1, 2, 3, 4, 5), prefillTids(events));
    }

    @Test
    void shouldNameMultiTokenChunksAndSummaries() throws IOException
    {
        final JsonNode speculative = export("speculative_trace.jsonl");
        final List<JsonNode> first = slices(speculative, null, 0);
        assertEquals(List.of("req0 prefill", "decode x3", "decode x4", "decode x2", "decode x3"),
            first.stream().map(event -> event.get("name").asText()).toList());
        // 15 tokens, 12 after the gaps: the first chunk carried 3
        assertEquals(3, first.get(0).get("args").get("first_chunk_tokens").asInt());
        assertEquals("[100,101,102]", first.get(0).get("args").get("token_ids").toString());
        assertEquals("[103,104,105]", first.get(1).get("args").get("token_ids").toString());

        final JsonNode edges = export("edge_cases_trace.jsonl");
        final JsonNode summary = slice(edges, "decode summary");
        assertEquals(250_000, summary.get("ts").asLong(), "after req1's TTFT: 50 + 200 ms");
        assertEquals(544_500, summary.get("dur").asLong(), "99 x 5.5 ms");
        assertEquals(99, summary.get("args").get("gaps").asInt());
    }

    @Test
    void shouldSkipAndCountRecordsWithoutArrival() throws IOException
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final PerfettoExport.Result result = PerfettoExport.write(fixture("spec_decode_trace.jsonl"),
            PerfettoExport.Options.defaults(), out);
        assertEquals(0, result.requests());
        assertEquals(8, result.skippedWithoutArrival());
        assertEquals(2, JSON.readTree(out.toByteArray()).get("traceEvents").size(), "only the process metadata");
    }

    @Test
    void shouldAddSchedulerCountersAndAStepTrackFromTheSidecar() throws IOException
    {
        final Path sidecar = dir.resolve("steps.jsonl");
        Files.writeString(sidecar, String.join("\n",
            "{\"ts_ms\": 10.0, \"scheduler\": {\"num_running_reqs\": 1, \"num_waiting_reqs\": 0, " +
                "\"kv_cache_usage\": 0.01, \"prefix_cache_stats\": {\"reset\": false, \"requests\": 1, " +
                "\"queries\": 64, \"hits\": 0}}}",
            "{\"ts_ms\": 55.0, \"scheduler\": {\"num_running_reqs\": 2, \"num_waiting_reqs\": 1, " +
                "\"kv_cache_usage\": 0.02, \"prefix_cache_stats\": {\"requests\": 1, \"queries\": 128, \"hits\": 0}}}",
            "{\"ts_ms\": 67.0, \"scheduler\": {\"num_running_reqs\": 2, \"num_waiting_reqs\": 0, " +
                "\"kv_cache_usage\": 0.02, \"prefix_cache_stats\": {\"requests\": 0, \"queries\": 0, \"hits\": 0}, " +
                "\"spec_decoding_stats\": {\"num_spec_tokens\": 3, \"num_drafts\": 2, \"num_draft_tokens\": 6, " +
                "\"num_accepted_tokens\": 3, \"num_accepted_tokens_per_pos\": [2, 1, 0]}}}",
            "",
            "{\"ts_ms\": 70.0, \"scheduler\": {\"num_running_reqs\": 1, \"prefix_cache_stats\": {\"requests\": 1, " +
                "\"queries\": 32}}}") + "\n", StandardCharsets.UTF_8);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final PerfettoExport.Result result = PerfettoExport.write(fixture("simple_trace.jsonl"),
            new PerfettoExport.Options(null, false, sidecar), out);
        assertEquals(3, result.steps());
        final JsonNode events = JSON.readTree(out.toByteArray()).get("traceEvents");
        assertEquals("scheduler steps", metadata(events, "process_name", 2, 0));
        final List<JsonNode> steps = slices(events, null, -1).stream()
            .filter(event -> 2 == event.get("pid").asInt()).toList();
        assertEquals(List.of("prefill+decode B2 (+1r 128t)", "decode B2", "prefill (+1r 32t)"),
            steps.stream().map(event -> event.get("name").asText()).toList());
        assertEquals(10_000, steps.get(0).get("ts").asLong());
        assertEquals(45_000, steps.get(0).get("dur").asLong());
        assertEquals(45.0, steps.get(0).get("args").get("step_ms").asDouble());
        assertEquals(1, steps.get(0).get("args").get("waiting").asInt());
        assertEquals(3, steps.get(1).get("args").get("accepted").asInt());
        assertEquals(6, steps.get(1).get("args").get("draft").asInt());
        assertFalse(steps.get(2).get("args").has("waiting"));
        assertEquals(List.of("10:1", "55:2", "70:1"), counter(events, "sched_running_reqs"));
        assertEquals(List.of("10:0", "55:1", "67:0"), counter(events, "sched_waiting_reqs"));
        assertEquals(List.of("10:0.01", "55:0.02"), counter(events, "sched_kv_cache_usage"));
        assertEquals(List.of("67:0.5"), counter(events, "sched_accept_rate"));

        Files.writeString(sidecar, "{\"ts_ms\": 1, \"scheduler\": {}}\n{\"ts_ms\": \"soon\", \"scheduler\": {}}\n");
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> PerfettoExport.write(
            fixture("simple_trace.jsonl"), new PerfettoExport.Options(null, false, sidecar),
            new ByteArrayOutputStream()));
        assertEquals(sidecar + ":2: ts_ms must be a number", error.getMessage());
    }

    @Test
    void shouldPackLanesGreedilyInArrivalOrder()
    {
        // a lane is free again at its request's end instant; the lowest free lane is taken
        assertArrayEquals(new int[] {0, 1, 1, 0, 2}, PerfettoExport.lanes(new double[] {0, 0, 5, 10, 11},
            new double[] {10, 5, 20, 30, 12}));
        assertArrayEquals(new int[0], PerfettoExport.lanes(new double[0], new double[0]));
    }

    @Test
    void shouldWriteOneEventPerLineWithMicrosecondsRoundedToTheNanosecond() throws IOException
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        PerfettoExport.write(fixture("gemma4_mm_trace.jsonl"), PerfettoExport.Options.defaults(), out);
        final String text = out.toString(StandardCharsets.UTF_8);
        final String[] lines = text.split("\n");
        assertEquals("{\"traceEvents\":[", lines[0]);
        assertEquals("],\"displayTimeUnit\":\"ms\"}", lines[lines.length - 1]);
        assertEquals(JSON.readTree(text).get("traceEvents").size(), lines.length - 2);
        assertTrue(text.contains("\"name\":\"req0 prefill\",\"cat\":\"prefill\",\"cname\":\"rail_animation\"," +
            "\"ts\":35449265.368,\"dur\":14564635.134"), "gemma's first request arrives at 35449.265368 ms");
    }

    private JsonNode export(final String fixture) throws IOException
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        PerfettoExport.write(fixture(fixture), PerfettoExport.Options.defaults(), out);
        return JSON.readTree(out.toByteArray()).get("traceEvents");
    }

    private static String metadata(final JsonNode events, final String name, final int pid, final int tid)
    {
        for (final JsonNode event : events)
        {
            if ("M".equals(event.get("ph").asText()) && name.equals(event.get("name").asText()) &&
                pid == event.get("pid").asInt() && tid == event.get("tid").asInt())
            {
                return event.get("args").get("name").asText();
            }
        }
        throw new AssertionError("no " + name + " for " + pid + "/" + tid);
    }

    private static List<Integer> prefillTids(final JsonNode events)
    {
        final List<Integer> tids = new ArrayList<>();
        for (final JsonNode event : events)
        {
            if ("prefill".equals(event.path("cat").asText()))
            {
                tids.add(event.get("tid").asInt());
            }
        }
        return tids;
    }

    private static JsonNode slice(final JsonNode events, final String name)
    {
        for (final JsonNode event : events)
        {
            if ("X".equals(event.get("ph").asText()) && name.equals(event.get("name").asText()))
            {
                return event;
            }
        }
        throw new AssertionError("no slice " + name);
    }

    /**
     * @return the slices of category {@code category} (any when null) of request {@code req} or of the step track.
     */
    private static List<JsonNode> slices(final JsonNode events, final String category, final int req)
    {
        final List<JsonNode> slices = new ArrayList<>();
        for (final JsonNode event : events)
        {
            if (!"X".equals(event.get("ph").asText()) || null != category && !category.equals(event.get("cat")
                .asText()))
            {
                continue;
            }
            final boolean step = 2 == event.get("pid").asInt();
            if (step || req == event.get("args").get("req").asInt())
            {
                slices.add(event);
            }
        }
        return slices;
    }

    /**
     * @return the counter's samples as {@code ms:value}.
     */
    private static List<String> counter(final JsonNode events, final String name)
    {
        final List<String> samples = new ArrayList<>();
        for (final JsonNode event : events)
        {
            if ("C".equals(event.get("ph").asText()) && name.equals(event.get("name").asText()))
            {
                final double ms = event.get("ts").asDouble() / 1000.0;
                samples.add((ms == Math.rint(ms) ? Long.toString((long)ms) : Double.toString(ms)) + ":" +
                    event.get("args").get(name).asText());
            }
        }
        return samples;
    }

    private static Path fixture(final String name)
    {
        return TraceTestData.path("vllm-vcr-fixtures/" + name);
    }
}
