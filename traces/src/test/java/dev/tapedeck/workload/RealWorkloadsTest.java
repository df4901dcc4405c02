package dev.tapedeck.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped real workloads (traces/data/workloads) through their loaders, each checked against an independent
 * parse of the raw file: Mooncake (12,031 requests, ms, ceil rule), Azure (8,819 rows, wall clock to relative ms),
 * kv-cache-tester (sessions, turns, seconds to ms, floor rule), one file and a directory.
 */
class RealWorkloadsTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void shouldLoadTheMooncakeConversationTraceExactly() throws IOException
    {
        final Path file = TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl");
        final Workload workload = Workloads.load(file, WorkloadFormat.MOONCAKE);

        assertEquals("mooncake", workload.source());
        assertEquals(512, workload.hashBlockSize());
        assertEquals(12_031, workload.requests().size());
        assertEquals(0.0, workload.requests().get(0).arrivalMs());
        assertEquals(3_536_999.0, workload.requests().get(12_030).arrivalMs());
        assertEquals(3_536_999.0, workload.spanMs());
        assertEquals(2_027, workload.sessionCount(), "sessions inferred from the chained hash ids on load");
        assertTrue(workload.notes().stream().anyMatch(note -> note.startsWith("sessions inferred from block ids: " +
            "2027 multi-turn sessions")), workload.notes()::toString);
        assertTrue(workload.notes().stream().noneMatch(note -> note.contains("block rule")),
            "the ceil rule holds on every row: " + workload.notes());
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("milliseconds")),
            workload.notes()::toString);

        final List<JsonNode> raw = new ArrayList<>();
        for (final String line : Files.readAllLines(file))
        {
            raw.add(JSON.readTree(line));
        }
        assertEquals(raw.size(), workload.requests().size());
        for (int i = 0; i < raw.size(); i++)
        {
            final JsonNode row = raw.get(i);
            final WorkloadRequest request = workload.requests().get(i);
            assertEquals(row.get("timestamp").asDouble(), request.arrivalMs(), "row " + i);
            assertEquals(row.get("input_length").asInt(), request.promptTokens(), "row " + i);
            assertEquals(row.get("output_length").asInt(), request.outputTokens(), "row " + i);
            final long[] ids = new long[row.get("hash_ids").size()];
            for (int k = 0; k < ids.length; k++)
            {
                ids[k] = row.get("hash_ids").get(k).asLong();
            }
            assertArrayEquals(ids, request.hashIds(), "row " + i);
            assertEquals((request.promptTokens() + 511) / 512, request.hashIds().length, "ceil rule, row " + i);
        }
    }

    @Test
    void shouldLoadTheAzureCodeTraceAsMillisecondsAfterTheFirstRow() throws IOException
    {
        final Path file = TraceTestData.path("workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv");
        final Workload workload = Workloads.load(file, WorkloadFormat.AZURE);

        final List<String> lines = Files.readAllLines(file);
        assertEquals("TIMESTAMP,ContextTokens,GeneratedTokens", lines.get(0));
        assertEquals(8_819, lines.size() - 1);
        assertEquals(8_819, workload.requests().size());
        assertEquals(0, workload.hashBlockSize());
        final DateTimeFormatter format = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSSS");
        final LocalDateTime first = LocalDateTime.parse(lines.get(1).split(",")[0], format);
        for (int i = 1; i < lines.size(); i++)
        {
            final String[] row = lines.get(i).split(",");
            final WorkloadRequest request = workload.requests().get(i - 1);
            final double expectedMs = Duration.between(first, LocalDateTime.parse(row[0], format)).toNanos() / 1e6;
            assertEquals(expectedMs, request.arrivalMs(), 1e-6, "row " + i);
            assertEquals(Integer.parseInt(row[1]), request.promptTokens(), "row " + i);
            assertEquals(Integer.parseInt(row[2]), request.outputTokens(), "row " + i);
            assertNull(request.hashIds());
        }
        assertEquals(0.0, workload.requests().get(0).arrivalMs());
        assertEquals(52.0, workload.requests().get(1).arrivalMs(), 1e-9, "18:17:04.03196 - 18:17:03.97996");
        assertTrue(workload.spanMs() > 3_435_000 && workload.spanMs() < 3_437_000, "about 57 minutes: " +
            workload.spanMs());
        assertTrue(workload.notes().stream().noneMatch(note -> note.contains("not in arrival order")),
            "the file is sorted");
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("2023-11-16T18:17:03.97996")),
            workload.notes()::toString);
    }

    @Test
    void shouldLoadAKvCacheTesterConversationAsOneSessionInSeconds() throws IOException
    {
        final Path file = TraceTestData.path("workloads/kv_cache_tester/trace_0012.json");
        final Workload workload = Workloads.load(file, WorkloadFormat.KVCACHE_TESTER);
        final JsonNode raw = JSON.readTree(file.toFile());
        final JsonNode requests = raw.get("requests");

        assertEquals(64, workload.hashBlockSize());
        assertEquals(14, requests.size());
        assertEquals(14, workload.requests().size());
        assertEquals(1, workload.sessionCount());
        assertEquals(199_000.0, workload.spanMs());
        for (int i = 0; i < requests.size(); i++)
        {
            final JsonNode row = requests.get(i);
            final WorkloadRequest request = workload.requests().get(i);
            assertEquals("trace_0012", request.session());
            assertEquals(i, request.turn());
            assertEquals(row.get("t").asDouble() * 1000, request.arrivalMs());
            assertEquals(row.get("think_time").asDouble() * 1000, request.thinkMs());
            assertEquals(row.get("in").asInt(), request.promptTokens());
            assertEquals(row.get("out").asInt(), request.outputTokens());
            assertEquals(row.get("hash_ids").size(), request.hashIds().length);
            assertEquals(request.promptTokens() / 64, request.hashIds().length, "floor rule, request " + i);
            assertEquals(row.get("hash_ids").get(0).asLong(), request.hashIds()[0], "one file keeps its ids");
        }
        assertTrue(workload.notes().stream().noneMatch(note -> note.contains("block rule")),
            workload.notes()::toString);
    }

    @Test
    void shouldMergeADirectoryOfConversationsWithoutSharingTheirLocalHashIds() throws IOException
    {
        final Path directory = TraceTestData.path("workloads/kv_cache_tester");
        assertEquals(WorkloadFormat.KVCACHE_TESTER, WorkloadFormat.detect(directory));
        final Workload workload = Workloads.load(directory);

        assertEquals(14 + 7, workload.requests().size());
        assertEquals(2, workload.sessionCount());
        assertEquals(400_000.0, workload.spanMs(), "trace_0022 lasts 400 s, both start at 0");
        final List<WorkloadRequest> first = workload.requests().stream()
            .filter(request -> "trace_0012".equals(request.session())).toList();
        final List<WorkloadRequest> second = workload.requests().stream()
            .filter(request -> "trace_0022".equals(request.session())).toList();
        assertEquals(14, first.size());
        assertEquals(7, second.size());
        for (int i = 0; i < second.size(); i++)
        {
            assertEquals(i, second.get(i).turn(), "turns stay in order after merging");
        }
        assertEquals((1L << 32) + 1, first.get(0).hashIds()[0], "file 1's id 1");
        assertEquals((2L << 32) + 1, second.get(0).hashIds()[0], "file 2's id 1");
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("2 conversations")),
            workload.notes()::toString);
    }

    @Test
    void shouldOffsetSubAgentRequestsByTheSubAgentsStartAndGiveThemTheirOwnSession() throws IOException
    {
        final Path file = dir.resolve("conv.json");
        Files.writeString(file, "{\"id\":\"conv\",\"block_size\":64,\"hash_id_scope\":\"local\",\"requests\":[\n" +
            "{\"t\":0.0,\"type\":\"s\",\"in\":130,\"out\":10,\"hash_ids\":[1,2],\"think_time\":0.0},\n" +
            "{\"t\":10.0,\"type\":\"subagent\",\"agent_id\":\"a1\",\"requests\":[\n" +
            "  {\"t\":0.0,\"type\":\"n\",\"in\":64,\"out\":5,\"hash_ids\":[9]},\n" +
            "  {\"t\":5.5,\"type\":\"n\",\"in\":128,\"out\":6,\"hash_ids\":[9,10],\"think_time\":1.5}]},\n" +
            "{\"t\":20.0,\"type\":\"s\",\"in\":200,\"out\":7,\"hash_ids\":[1,2,3],\"think_time\":2.0}]}\n");

        final Workload workload = Workloads.load(file);

        assertEquals(List.of(0.0, 10_000.0, 15_500.0, 20_000.0),
            workload.requests().stream().map(WorkloadRequest::arrivalMs).toList());
        assertEquals(List.of("conv", "conv/a1", "conv/a1", "conv"),
            workload.requests().stream().map(WorkloadRequest::session).toList());
        assertEquals(List.of(0, 0, 1, 1), workload.requests().stream().map(WorkloadRequest::turn).toList());
        assertEquals(1500.0, workload.requests().get(2).thinkMs());
        assertTrue(Double.isNaN(workload.requests().get(1).thinkMs()), "no think_time: unknown");
        assertEquals(2, workload.sessionCount());
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("1 sub-agent, each its own session")),
            workload.notes()::toString);
        assertTrue(workload.notes().stream().noneMatch(note -> note.contains("block rule")),
            workload.notes()::toString);
    }

    @Test
    void shouldNoteKvCacheTesterRequestsThatBreakTheFloorRuleWithFileAndLine() throws IOException
    {
        final Path file = dir.resolve("bad_blocks.json");
        Files.writeString(file, "{\"id\":\"x\",\"block_size\":64,\"requests\":[\n" +
            "{\"t\":0,\"in\":130,\"out\":1,\"hash_ids\":[1,2]},\n" +
            "{\"t\":1,\"in\":130,\"out\":1,\"hash_ids\":[1,2,3]}\n]}\n");

        final Workload workload = Workloads.load(file, WorkloadFormat.KVCACHE_TESTER);

        final String note = workload.notes().stream().filter(n -> n.contains("block rule")).findFirst().orElseThrow();
        assertTrue(note.startsWith("1 requests"), note);
        assertTrue(note.contains(file + ":3: requests[1]: 3 ids for 130 tokens, expected 2"), note);
        assertEquals(3, workload.requests().get(1).hashIds().length, "3 ids still fit ceil(130/64)");
    }

    @Test
    void shouldReadTheMooncakeFileTwiceToTheSameRequests() throws IOException
    {
        final Path file = TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl");
        final Workload first = Workloads.load(file, WorkloadFormat.MOONCAKE);
        final Workload second = Workloads.load(file, WorkloadFormat.MOONCAKE);
        assertEquals(12_031, second.requests().size());
        for (int i = 0; i < first.requests().size(); i++)
        {
            final WorkloadRequest a = first.requests().get(i);
            final WorkloadRequest b = second.requests().get(i);
            assertEquals(a.arrivalMs(), b.arrivalMs());
            assertEquals(a.promptTokens(), b.promptTokens());
            assertEquals(a.outputTokens(), b.outputTokens());
            assertTrue(java.util.Arrays.equals(a.hashIds(), b.hashIds()), "line " + (i + 1));
        }
    }

    @Test
    void shouldNotTakeAnAzureRowOutOfOrderSilently() throws IOException
    {
        final Path file = dir.resolve("azure.csv");
        Files.writeString(file, "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
            "2024-05-12 00:00:01.5+00:00,100,10\n" +
            "2024-05-12 00:00:00+00:00,200,20\n" +
            "2024-05-12 02:00:02.25+02:00,300,30\n");

        final Workload workload = Workloads.load(file);

        assertEquals(List.of(0.0, 1500.0, 2250.0), workload.requests().stream().map(WorkloadRequest::arrivalMs)
            .toList(), "zones applied, sorted");
        assertEquals(List.of(200, 100, 300), workload.requests().stream().map(WorkloadRequest::promptTokens)
            .toList());
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("not in arrival order")),
            workload.notes()::toString);
        assertFalse(workload.notes().stream().anyMatch(note -> note.contains("no time zone")));
    }

    @Test
    void shouldReadAGzippedWorkloadSource() throws IOException
    {
        final Path plain = TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl");
        final Path gzipped = dir.resolve("conversation_trace.jsonl.gz");
        try (BufferedReader reader = Files.newBufferedReader(plain);
            java.io.Writer writer = new java.io.OutputStreamWriter(new java.util.zip.GZIPOutputStream(
                Files.newOutputStream(gzipped)), java.nio.charset.StandardCharsets.UTF_8))
        {
            reader.transferTo(writer);
        }
        assertEquals(WorkloadFormat.MOONCAKE, WorkloadFormat.detect(gzipped));
        final Workload workload = Workloads.load(gzipped);
        assertEquals(12_031, workload.requests().size());
        assertEquals(3_536_999.0, workload.spanMs());
    }
}
