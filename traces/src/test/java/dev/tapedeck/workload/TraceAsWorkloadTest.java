package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceValidator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Any trace is a workload: records with arrival, prompt and output lengths (and block hashes) replay without
 * {@code ttft_ms} or gaps, while the same file stays refused, and is reported, as a latency source.
 */
class TraceAsWorkloadTest
{
    private static final String GAPLESS = "{\"meta\":{\"source\":\"vllm-vcr\",\"block_size\":16}}\n" +
        "{\"arrival_ms\":5,\"prompt_tokens\":40,\"output_tokens\":7,\"block_hashes\":[11,12]}\n" +
        "{\"arrival_ms\":9,\"prompt_tokens\":20,\"output_tokens\":3,\"ttft_ms\":4.5,\"block_hashes\":[11]}\n" +
        "{\"arrival_ms\":12,\"prompt_tokens\":50}\n";

    @TempDir
    Path dir;

    @Test
    void shouldReplayATraceWithoutGapsAsAWorkload() throws IOException
    {
        final Path trace = dir.resolve("gapless.jsonl");
        Files.writeString(trace, GAPLESS);

        final Workload workload = Workloads.load(trace);

        assertEquals("trace", workload.source());
        assertEquals(16, workload.hashBlockSize());
        assertEquals(List.of(0.0, 4.0, 7.0), workload.requests().stream().map(WorkloadRequest::arrivalMs).toList());
        assertEquals(List.of(40, 20, 50), workload.requests().stream().map(WorkloadRequest::promptTokens).toList());
        assertEquals(List.of(7, 3, WorkloadRequest.UNKNOWN), workload.requests().stream()
            .map(WorkloadRequest::outputTokens).toList(), "no output_tokens: the server decides");
        assertArrayEquals(new long[] {11, 12}, workload.requests().get(0).hashIds());
        assertTrue(workload.notes().stream().anyMatch(note -> note.startsWith("3 records lack what a latency source " +
            "needs") && note.contains(trace + ":2")), workload.notes()::toString);
        assertTrue(workload.notes().stream().anyMatch(note -> note.startsWith("1 records have no output_tokens") &&
            note.contains(trace + ":4")), workload.notes()::toString);
    }

    @Test
    void shouldTellATraceWithoutMetaOrGapsFromAWorkloadFile() throws IOException
    {
        final Path bare = dir.resolve("bare.jsonl");
        Files.writeString(bare, "{\"arrival_ms\":0,\"prompt_tokens\":8,\"output_tokens\":2}\n");
        assertEquals(WorkloadFormat.TRACE, WorkloadFormat.detect(bare));
        assertEquals(1, Workloads.load(bare).requests().size());

        final Path lostMeta = dir.resolve("lost-meta.jsonl");
        Files.writeString(lostMeta, "{\"arrival_ms\":0,\"prompt_tokens\":8,\"output_tokens\":2,\"turn\":0}\n");
        assertEquals(WorkloadFormat.TAPEDECK, WorkloadFormat.detect(lostMeta), "tapedeck writes turn on every line");
    }

    @Test
    void shouldStillRefuseItAsALatencySource() throws IOException
    {
        final Path trace = dir.resolve("gapless.jsonl");
        Files.writeString(trace, GAPLESS);

        final TraceFormatException refused = assertThrows(TraceFormatException.class, () -> TraceReader.readAll(trace));
        assertTrue(refused.getMessage().startsWith(trace + ":2: ttft_ms is missing (a latency source needs it; as a " +
            "workload request the record is fine)"), refused.getMessage());

        final List<TraceValidator.Problem> problems = new ArrayList<>();
        final TraceValidator.Result result = TraceValidator.validate(trace, problems::add);
        assertFalse(result.valid());
        assertTrue(result.validAsWorkload(), problems.toString());
        assertEquals(5, result.problems(), problems.toString());
        assertEquals(3, result.linesWithProblems());
        assertTrue(problems.stream().allMatch(TraceValidator.Problem::latencySourceOnly), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> 2 == p.line() && p.message().startsWith("output_tokens is 7 but " +
            "neither itl_ms nor itl_summary is given")), problems.toString());
    }

    @Test
    void shouldRefuseWhatBreaksARequestEvenAsAWorkload() throws IOException
    {
        final Path trace = dir.resolve("broken.jsonl");
        Files.writeString(trace, "{\"arrival_ms\":0,\"prompt_tokens\":8,\"output_tokens\":2,\"ttft_ms\":1}\n" +
            "{\"arrival_ms\":1,\"output_tokens\":2,\"e2e_ms\":-3}\n");

        final TraceFormatException error = assertThrows(TraceFormatException.class,
            () -> Workloads.load(trace, WorkloadFormat.TRACE));
        assertTrue(error.getMessage().startsWith(trace + ":2: prompt_tokens is missing; e2e_ms is negative: -3.0"),
            error.getMessage());

        final List<TraceValidator.Problem> problems = new ArrayList<>();
        final TraceValidator.Result result = TraceValidator.validate(trace, problems::add);
        assertFalse(result.validAsWorkload(), problems.toString());
        assertEquals(2, result.workloadProblems(), problems.toString());
    }
}
