package dev.tapedeck.trace;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect validate}: every line is checked and every problem reported with its line; what the reader tolerates
 * is a warning.
 */
class TraceValidatorTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"simple_trace.jsonl", "edge_cases_trace.jsonl", "batch_context_trace.jsonl",
        "gemma4_mm_trace.jsonl", "spec_decode_trace.jsonl", "speculative_trace.jsonl"})
    void shouldFindEveryVcrFixtureValid(final String fixture) throws IOException
    {
        final List<TraceValidator.Problem> problems = new ArrayList<>();
        final TraceValidator.Result result =
            TraceValidator.validate(TraceTestData.path("vllm-vcr-fixtures/" + fixture), problems::add);
        assertEquals(List.of(), problems);
        assertTrue(result.valid());
        assertTrue(result.hasMeta());
        assertEquals(TraceReader.readAll(TraceTestData.path("vllm-vcr-fixtures/" + fixture)).records().size(),
            result.records());
        assertEquals(List.of(), result.warnings());
    }

    @Test
    void shouldReportEveryProblemOnEveryLine() throws IOException
    {
        final Path trace = dir.resolve("bad.jsonl");
        Files.writeString(trace, String.join("\n",
            "{\"meta\":{\"model\":\"m\",\"config_hash\":\"ABC\"}}",
            "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1.5}",
            "{\"prompt_tokens\":5,\"output_tokens\":\"three\",\"ttft_ms\":1}",
            "",
            "{\"prompt_tokens\":5,\"output_tokens\":4,\"ttft_ms\":-2,\"itl_ms\":[1,2],\"itl_tokens\":[1,0]," +
                "\"finish_reason\":\"done\"}",
            "{\"prompt_tokens\":5,",
            "[1,2]",
            "{\"meta\":{\"model\":\"again\"}}",
            "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1} 7",
            "{\"output_tokens\":2,\"ttft_ms\":1,\"itl_ms\":[1],\"itl_ctx\":{\"num_running\":[1,2]," +
                "\"prefill_tokens\":[0]},\"output_token_ids\":[1]}") + "\n", StandardCharsets.UTF_8);
        final List<String> problems = new ArrayList<>();
        final TraceValidator.Result result =
            TraceValidator.validate(trace, problem -> problems.add(problem.line() + ": " + problem.message()));
        assertEquals(List.of(
            "1: meta.config_hash must be 64 lowercase hex characters, got 'ABC'",
            "3: output_tokens must be a non-negative integer, got a string",
            "5: ttft_ms is negative: -2.0",
            "5: itl_tokens[1] is 0: every chunk after a gap carries at least one token",
            "5: finish_reason 'done' is not one of stop, length, abort, error, repetition",
            "6: not valid JSON: Unexpected end-of-input within/between Object entries",
            "7: record must be an object, got an array",
            "8: a meta line is only allowed as the first line",
            "9: unexpected content after the record",
            "10: prompt_tokens is missing",
            "10: itl_ctx arrays must have itl_ms's length 1 (num_running 2, prefill_tokens 1)",
            "10: output_token_ids has 1 ids but output_tokens is 2"), problems);
        assertFalse(result.valid());
        assertEquals(12, result.problems());
        assertEquals(8, result.linesWithProblems());
        assertEquals(7, result.records(), "every record line is counted, valid or not; line 8 is a meta line");
        assertTrue(result.hasMeta());
    }

    @Test
    void shouldWarnAboutACutLastLineAndAMissingGzipTrailer() throws IOException
    {
        final Path trace = dir.resolve("live.jsonl.gz");
        final byte[] content = ("{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1}\n" +
            "{\"prompt_tokens\":6,\"output").getBytes(StandardCharsets.UTF_8);
        try (OutputStream out = Files.newOutputStream(trace))
        {
            final GZIPOutputStream gzip = new GZIPOutputStream(out, true);
            gzip.write(content);
            gzip.flush();
        }
        final List<TraceValidator.Problem> problems = new ArrayList<>();
        final TraceValidator.Result result = TraceValidator.validate(trace, problems::add);
        assertEquals(List.of(), problems);
        assertTrue(result.valid());
        assertEquals(1, result.records());
        assertFalse(result.hasMeta());
        assertEquals(1, result.warnings().size(), result.warnings().toString());
        assertTrue(result.warnings().get(0).startsWith(trace + ":2: the last line is cut short"),
            result.warnings().toString());
    }

    @Test
    void shouldReportCorruptGzipAndStop() throws IOException
    {
        final Path trace = dir.resolve("corrupt.jsonl.gz");
        final byte[] bytes = {0x1f, (byte)0x8b, 8, 0, 0, 0, 0, 0, 0, 0, (byte)0xff, (byte)0xff, (byte)0xff, 0x12};
        Files.write(trace, bytes);
        final List<TraceValidator.Problem> problems = new ArrayList<>();
        final TraceValidator.Result result = TraceValidator.validate(trace, problems::add);
        assertFalse(result.valid());
        assertEquals(1, problems.size());
        assertEquals(1, problems.get(0).line());
        assertTrue(problems.get(0).message().startsWith("corrupt gzip data"), problems.get(0).message());
    }

    @Test
    void shouldReportAGarbageTailAsAProblemNotAsACutLine() throws IOException
    {
        final Path trace = dir.resolve("nul.jsonl");
        Files.write(trace, ("{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1}\n\u0000\u0000garbage")
            .getBytes(StandardCharsets.UTF_8));
        final List<TraceValidator.Problem> problems = new ArrayList<>();
        final TraceValidator.Result result = TraceValidator.validate(trace, problems::add);
        assertFalse(result.valid());
        assertEquals(2, problems.get(0).line(), problems.toString());
        assertEquals(List.of(), result.warnings(), "not a record still being written");
        final TraceFormatException read = org.junit.jupiter.api.Assertions.assertThrows(TraceFormatException.class,
            () -> TraceReader.readAll(trace));
        assertTrue(read.getMessage().startsWith(trace + ":2: "), read.getMessage());
    }

    @Test
    void shouldRefuseALineLongerThanTheLimitWithoutHoldingTheFile() throws IOException
    {
        final Path trace = dir.resolve("bomb.jsonl.gz");
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(trace)))
        {
            final byte[] zeros = new byte[1 << 20];
            for (int i = 0; i <= LineSource.MAX_LINE_CHARS >> 20; i++)
            {
                out.write(zeros);
            }
        }
        final List<TraceValidator.Problem> problems = new ArrayList<>();
        assertFalse(TraceValidator.validate(trace, problems::add).valid());
        assertEquals(1, problems.size());
        assertTrue(problems.get(0).message().startsWith("line 1 is longer than 16 Mi characters"),
            problems.get(0).message());
        final TraceFormatException read = org.junit.jupiter.api.Assertions.assertThrows(TraceFormatException.class,
            () -> TraceReader.readAll(trace));
        assertTrue(read.getMessage().startsWith(trace + ": line 1 is longer"), read.getMessage());
    }
}
