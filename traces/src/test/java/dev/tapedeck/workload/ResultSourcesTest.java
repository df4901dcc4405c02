package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sources with measured results (guidellm report, vllm bench detailed result) as workloads and as vllm-vcr traces,
 * the vcr traces through the {@code trace} loader, and guidellm's replay JSONL in seconds.
 */
class ResultSourcesTest
{
    @TempDir
    Path dir;

    @Test
    void shouldConvertTheGuidellmSampleAsVcrDoesPlusArrivals() throws IOException
    {
        final Path report = TraceTestData.path("vllm-vcr-fixtures/guidellm_sample.json");
        assertEquals(WorkloadFormat.GUIDELLM, WorkloadFormat.detect(report));
        final Path out = dir.resolve("guidellm.trace.jsonl");

        final TraceConversion.Result result = TraceConversion.toTrace(report, WorkloadFormat.GUIDELLM, null, out);

        assertEquals(4, result.records());
        assertEquals(60_000.0, result.spanMs(), 1e-6);
        final TraceReader.Trace trace = TraceReader.readAll(out);
        assertEquals("guidellm", trace.meta().source());
        assertEquals("meta-llama/Llama-3.1-8B-Instruct", trace.meta().model());
        final List<TraceRecord> records = trace.records();
        assertEquals(List.of(128L, 256L, 128L, 64L), records.stream().map(TraceRecord::promptTokens).toList());
        assertEquals(List.of(100L, 50L, 30L, 10L), records.stream().map(TraceRecord::outputTokens).toList());
        assertEquals(List.of(45.2, 80.0, 30.0, 25.0), records.stream().map(TraceRecord::ttftMs).toList());
        assertEquals(new TraceRecord.ItlSummary(14.7, 99), records.get(0).itlSummary());
        assertEquals(new TraceRecord.ItlSummary(219.4, 9), records.get(3).itlSummary());
        assertEquals(List.of(4L, 4L, 4L, 1L), records.stream().map(TraceRecord::concurrency).toList(),
            "concurrent streams=4, then synchronous");
        assertEquals(0L, records.get(0).cachedTokens());
        assertEquals(List.of(0.0, 1000.0, 2000.0, 60_000.0), records.stream().map(TraceRecord::arrivalMs).toList());
        assertNull(records.get(0).itlMs());

        final TraceConversion.Result renamed = TraceConversion.toTrace(report, WorkloadFormat.GUIDELLM, "other",
            dir.resolve("other.jsonl.gz"));
        assertEquals(4, renamed.records());
        assertEquals("other", TraceReader.readAll(dir.resolve("other.jsonl.gz")).meta().model());

        final Workload fromTrace = Workloads.load(out);
        assertEquals("trace", fromTrace.source());
        assertEquals(4, fromTrace.requests().size());
        assertEquals(60_000.0, fromTrace.spanMs(), 1e-6);
    }

    @Test
    void shouldLoadTheGuidellmSampleAsAWorkloadOfItsStartTimes() throws IOException
    {
        final Workload workload = Workloads.load(TraceTestData.path("vllm-vcr-fixtures/guidellm_sample.json"));
        assertEquals("guidellm", workload.source());
        assertEquals(List.of(0.0, 1000.0, 2000.0, 60_000.0),
            workload.requests().stream().map(WorkloadRequest::arrivalMs).toList());
        assertEquals(List.of(100, 50, 30, 10), workload.requests().stream().map(WorkloadRequest::outputTokens)
            .toList());
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("2 benchmarks")),
            workload.notes()::toString);
    }

    @Test
    void shouldReadAnOldGuidellmLayoutAndNoteAnUnknownStrategy() throws IOException
    {
        final Path report = dir.resolve("old-guidellm.json");
        Files.writeString(report, "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":\"constant\"," +
            "\"rate\":2}},\n\"requests\":{\"successful\":[\n" +
            "{\"prompt\":\"long text\",\"prompt_tokens\":10,\"output_tokens\":5,\"start_time\":100.0," +
            "\"first_token_time\":100.25,\"last_token_time\":101.25},\n" +
            "{\"prompt_tokens\":12,\"output_tokens\":1,\"start_time\":100.5,\"first_token_time\":100.625}],\n" +
            "\"errored\":[{\"prompt_tokens\":1}],\"incomplete\":[]}}]}\n");
        final Path out = dir.resolve("old.trace.jsonl");

        final TraceConversion.Result result = TraceConversion.toTrace(report, WorkloadFormat.GUIDELLM, null, out);

        final List<TraceRecord> records = TraceReader.readAll(out).records();
        assertEquals(250.0, records.get(0).ttftMs(), 1e-9);
        assertEquals(new TraceRecord.ItlSummary(250.0, 4), records.get(0).itlSummary(), "1 s over 4 gaps");
        assertEquals(125.0, records.get(1).ttftMs(), 1e-9);
        assertNull(records.get(1).itlSummary(), "one token, no gaps");
        assertEquals(List.of(0.0, 500.0), records.stream().map(TraceRecord::arrivalMs).toList());
        assertEquals(1L, records.get(0).concurrency());
        assertTrue(result.notes().stream().anyMatch(note -> note.contains(report + ":1: benchmarks[0]: concurrency " +
            "unknown for strategy 'constant'")), result.notes()::toString);
        assertTrue(result.notes().stream().anyMatch(note -> note.contains("0 incomplete and 1 errored")),
            result.notes()::toString);
        assertTrue(result.notes().stream().anyMatch(note -> note.contains("names no model")),
            result.notes()::toString);
    }

    @Test
    void shouldLoadTheVcrTracesInArrivalOrder() throws IOException
    {
        final Workload simple = Workloads.load(TraceTestData.path("vllm-vcr-fixtures/simple_trace.jsonl"));
        assertEquals(List.of(0.0, 100.0, 200.0, 300.0), simple.requests().stream().map(WorkloadRequest::arrivalMs)
            .toList());
        assertEquals(0, simple.hashBlockSize());

        final Path gemma = TraceTestData.path("vllm-vcr-fixtures/gemma4_mm_trace.jsonl");
        final Workload workload = Workloads.load(gemma, WorkloadFormat.TRACE);
        final List<TraceRecord> records = TraceReader.readAll(gemma).records();
        assertEquals(16, workload.hashBlockSize());
        assertEquals(4, workload.requests().size());
        assertEquals(0.0, workload.requests().get(0).arrivalMs());
        assertEquals(records.get(3).arrivalMs() - records.get(0).arrivalMs(), workload.spanMs(), 1e-6);
        assertArrayEquals(records.get(0).blockHashes(), workload.requests().get(0).hashIds());
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("shifted by -35449.265368 ms")),
            workload.notes()::toString);

        final TraceFormatException none = assertThrows(TraceFormatException.class,
            () -> Workloads.load(TraceTestData.path("vllm-vcr-fixtures/spec_decode_trace.jsonl")));
        assertTrue(none.getMessage().contains("none of its 8 records has arrival_ms"), none.getMessage());
    }

    @Test
    void shouldSortATraceStablyAndSkipRecordsWithoutArrivals() throws IOException
    {
        final Path trace = dir.resolve("finish-order.jsonl");
        Files.writeString(trace, "{\"meta\":{\"source\":\"tap\",\"block_size\":16}}\n" +
            "{\"prompt_tokens\":20,\"output_tokens\":1,\"ttft_ms\":1,\"arrival_ms\":30,\"block_hashes\":[5]}\n" +
            "{\"prompt_tokens\":21,\"output_tokens\":1,\"ttft_ms\":1}\n" +
            "{\"prompt_tokens\":22,\"output_tokens\":1,\"ttft_ms\":1,\"arrival_ms\":10}\n" +
            "{\"prompt_tokens\":23,\"output_tokens\":1,\"ttft_ms\":1,\"arrival_ms\":30}\n");

        final Workload workload = Workloads.load(trace);

        assertEquals(List.of(22, 20, 23), workload.requests().stream().map(WorkloadRequest::promptTokens).toList());
        assertEquals(List.of(0.0, 20.0, 20.0), workload.requests().stream().map(WorkloadRequest::arrivalMs).toList());
        assertArrayEquals(new long[] {5}, workload.requests().get(1).hashIds());
        assertTrue(workload.notes().stream().anyMatch(note -> note.startsWith("1 records have no arrival_ms") &&
            note.contains(trace + ":3")), workload.notes()::toString);
    }

    @Test
    void shouldConvertADetailedVllmBenchResult() throws IOException
    {
        final Path result = dir.resolve("vllm-bench.json");
        Files.writeString(result, "{\"date\":\"20260101-000000\",\"backend\":\"vllm\",\"model_id\":\"Qwen/Qwen3-8B\"," +
            "\"num_prompts\":4,\"completed\":3,\"failed\":1,\n" +
            "\"input_lens\":[100,200,300,400],\n" +
            "\"output_lens\":[3,0,2,1],\n" +
            "\"start_times\":[1000.5,1000.0,1000.5625,1001.0],\n" +
            "\"ttfts\":[0.05,0.0,0.1,0.02],\n" +
            "\"itls\":[[0.01,0.012],[],[0.03],[]],\n" +
            "\"generated_texts\":[\"a b c\",\"\",\"d e\",\"f\"],\n" +
            "\"errors\":[\"\",\"Bad Request\",\"\",\"\"]}\n");
        assertEquals(WorkloadFormat.VLLM_BENCH, WorkloadFormat.detect(result));

        final Workload workload = Workloads.load(result);
        assertEquals(List.of(0.0, 62.5, 500.0), workload.requests().stream().map(WorkloadRequest::arrivalMs)
            .toList(), "failed request skipped, arrivals from the earliest successful start");
        assertEquals(List.of(100, 300, 400), workload.requests().stream().map(WorkloadRequest::promptTokens)
            .toList());
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("1 failed requests")),
            workload.notes()::toString);

        final Path out = dir.resolve("bench.trace.jsonl");
        final TraceConversion.Result converted = TraceConversion.toTrace(result, WorkloadFormat.VLLM_BENCH, null,
            out);
        assertEquals(3, converted.records());
        final TraceReader.Trace trace = TraceReader.readAll(out);
        assertEquals("vllm-bench", trace.meta().source());
        assertEquals("Qwen/Qwen3-8B", trace.meta().model());
        final TraceRecord first = trace.records().get(0);
        assertEquals(50.0, first.ttftMs(), 1e-9);
        assertArrayEquals(new double[] {10.0, 12.0}, first.itlMs(), 1e-9);
        assertEquals(0.0, first.arrivalMs());
        assertEquals(List.of(1L, 2L, 1L), trace.records().stream().map(TraceRecord::concurrency).toList(),
            "request 0 (1000.5 to 1000.572 s) is in flight when request 2 starts at 1000.5625; request 3 is alone");
    }

    @Test
    void shouldNoteAVllmBenchResultWithoutStartTimesAndRefuseOneWithoutDetails() throws IOException
    {
        final Path old = dir.resolve("old.json");
        Files.writeString(old, "{\"backend\":\"vllm\",\"input_lens\":[10,20],\"output_lens\":[2,2]," +
            "\"ttfts\":[0.1,0.2],\"itls\":[[0.01],[0.02]],\"errors\":[\"\",\"\"]}");
        final Workload workload = Workloads.load(old);
        assertEquals(List.of(0.0, 0.0), workload.requests().stream().map(WorkloadRequest::arrivalMs).toList());
        assertTrue(workload.notes().get(0).contains("start_times is absent"), workload.notes()::toString);

        final Path summary = dir.resolve("summary.json");
        Files.writeString(summary, "{\"backend\":\"vllm\",\"num_prompts\":2,\"completed\":2,\"duration\":1.0}");
        assertEquals(WorkloadFormat.VLLM_BENCH, WorkloadFormat.detect(summary));
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> Workloads.load(summary));
        assertTrue(error.getMessage().contains("--save-detailed"), error.getMessage());

        final Path mismatched = dir.resolve("mismatched.json");
        Files.writeString(mismatched, "{\"input_lens\":[10,20],\n\"output_lens\":[2]}");
        final TraceFormatException lengths = assertThrows(TraceFormatException.class,
            () -> Workloads.load(mismatched));
        assertTrue(lengths.getMessage().startsWith(mismatched + ":2: output_lens: has 1 entries, input_lens has 2"),
            lengths.getMessage());
    }

    @Test
    void shouldReadGuidellmReplaySecondsFromAnyOrigin() throws IOException
    {
        final Path file = dir.resolve("replay.jsonl");
        Files.writeString(file, "{\"timestamp\": 1234500.5, \"input_length\": 512, \"output_length\": 64}\n" +
            "{\"timestamp\": 1234500.0, \"input_length\": 256, \"output_length\": 128}\n" +
            "{\"timestamp\": 1234501.75, \"input_length\": 100, \"output_length\": 1, \"extra\": true}\n");

        final Workload workload = Workloads.load(file, WorkloadFormat.GUIDELLM_REPLAY);

        assertEquals(List.of(0.0, 500.0, 1750.0), workload.requests().stream().map(WorkloadRequest::arrivalMs)
            .toList());
        assertEquals(List.of(256, 512, 100), workload.requests().stream().map(WorkloadRequest::promptTokens)
            .toList());
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("seconds")), workload.notes()::toString);
        assertTrue(workload.notes().stream().anyMatch(note -> note.contains("not in arrival order")),
            workload.notes()::toString);

        final IllegalArgumentException ambiguous = assertThrows(IllegalArgumentException.class,
            () -> WorkloadFormat.detect(file));
        assertTrue(ambiguous.getMessage().contains("--format mooncake") &&
            ambiguous.getMessage().contains("--format guidellm-replay"), ambiguous.getMessage());
    }

    @Test
    void shouldLeaveNoPartialTraceWhenTheSourceIsMalformedHalfway() throws IOException
    {
        final Path report = dir.resolve("half.json");
        Files.writeString(report, "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":\"synchronous\"}}," +
            "\"requests\":{\"successful\":[\n{\"prompt_tokens\":1,\"output_tokens\":1,\"time_to_first_token_ms\":2}," +
            "\n{\"prompt_tokens\":1,\"output_tokens\":1}]}}]}");
        final Path out = dir.resolve("half.trace.jsonl");
        final TraceFormatException error = assertThrows(TraceFormatException.class,
            () -> TraceConversion.toTrace(report, WorkloadFormat.GUIDELLM, "m", out));
        assertTrue(error.getMessage().startsWith(report + ":3: benchmarks[0].requests.successful[1]: " +
            "time_to_first_token_ms is missing"), error.getMessage());
        try (java.util.stream.Stream<Path> files = Files.list(dir))
        {
            assertEquals(List.of(report), files.toList(), "no trace, no temporary file");
        }
    }

    @Test
    void shouldRefuseATraceFromSourcesWithoutResults()
    {
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
            () -> TraceConversion.toTrace(TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl"),
                WorkloadFormat.MOONCAKE, null, dir.resolve("x.jsonl")));
        assertTrue(error.getMessage().contains("only guidellm and vllm-bench"), error.getMessage());
    }
}
