package dev.tapedeck.workload;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tapedeck workload file: every field round trips (plain and gzip, gzip told by its magic bytes), unknown fields
 * are tolerated, and every broken rule is reported with file and line.
 */
class WorkloadFileTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"mooncake.workload.jsonl", "mooncake.workload.jsonl.gz"})
    void shouldRoundTripTheMooncakeWorkload(final String name) throws IOException
    {
        final Workload original = Workloads.load(
            TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl"), WorkloadFormat.MOONCAKE);
        final Path file = dir.resolve(name);
        WorkloadWriter.write(file, original);

        assertEquals(WorkloadFormat.TAPEDECK, WorkloadFormat.detect(file));
        final Workload copy = Workloads.load(file);
        assertSameWorkload(original, copy);
        if (name.endsWith(".gz"))
        {
            final Path renamed = dir.resolve("no-suffix.jsonl");
            Files.move(file, renamed);
            assertSameWorkload(original, WorkloadReader.readAll(renamed));
        }
    }

    @Test
    void shouldRoundTripEveryFieldIncludingUnknownOutputsSessionsAndHugeIds() throws IOException
    {
        final Workload original = new Workload("test", 16, List.of(
            new WorkloadRequest(0, 40, WorkloadRequest.UNKNOWN, new long[] {0, -1L, Long.MAX_VALUE}, "s1", 0,
                Double.NaN),
            new WorkloadRequest(0.25, 7, 0, null, null, 0, 12.5),
            new WorkloadRequest(1e6 + 0.125, 17, 3, new long[] {5}, "s1", 1, 250)), List.of("a note", "another"));
        final Path file = dir.resolve("all.jsonl");
        WorkloadWriter.write(file, original);

        final String text = Files.readString(file);
        assertTrue(text.startsWith("{\"meta\":{\"kind\":\"workload\",\"version\":1,\"source\":\"test\"," +
            "\"block_size\":16,\"notes\":[\"a note\",\"another\"]}}\n"), text);
        assertTrue(text.contains("\"hash_ids\":[0,18446744073709551615,9223372036854775807]"), text);
        assertTrue(text.contains("{\"arrival_ms\":0,\"prompt_tokens\":40,\"hash_ids\""), "no output_tokens: " + text);
        assertSameWorkload(original, WorkloadReader.readAll(file));
    }

    @Test
    void shouldTolerateUnknownFieldsAndBlankLines() throws IOException
    {
        final Path file = write("future.jsonl",
            "{\"meta\":{\"kind\":\"workload\",\"version\":1,\"block_size\":0,\"generator\":{\"x\":1}}}",
            "",
            "{\"arrival_ms\":5,\"prompt_tokens\":3,\"priority\":2,\"messages\":[{\"role\":\"user\"}]}");
        final Workload workload = WorkloadReader.readAll(file);
        assertEquals(1, workload.requests().size());
        assertEquals(WorkloadRequest.UNKNOWN, workload.requests().get(0).outputTokens());
        assertEquals(0, workload.requests().get(0).turn());
        assertNull(workload.requests().get(0).session());
        assertEquals("tapedeck", workload.source(), "no source in the meta line");
    }

    @Test
    void shouldReportEveryBrokenRuleWithFileAndLine() throws IOException
    {
        final String meta = "{\"meta\":{\"kind\":\"workload\",\"block_size\":4}}";
        expectError(write("no-meta.jsonl", "{\"arrival_ms\":0,\"prompt_tokens\":3}"), ":1: not a tapedeck workload");
        expectError(write("trace.jsonl", "{\"meta\":{\"source\":\"tap\"}}"), "use --format trace");
        expectError(write("v2.jsonl", "{\"meta\":{\"kind\":\"workload\",\"version\":2}}"), ":1: workload format " +
            "version 2");
        expectError(write("order.jsonl", meta, "{\"arrival_ms\":5,\"prompt_tokens\":3}",
            "{\"arrival_ms\":4,\"prompt_tokens\":3}"), ":3: arrival_ms 4 is before the previous request's 5");
        expectError(write("arrival.jsonl", meta, "{\"prompt_tokens\":3}"), ":2: arrival_ms is missing");
        expectError(write("negative.jsonl", meta, "{\"arrival_ms\":-1,\"prompt_tokens\":3}"),
            ":2: arrival_ms must not be negative");
        expectError(write("prompt.jsonl", meta, "{\"arrival_ms\":0,\"prompt_tokens\":0}"),
            ":2: prompt_tokens must be at least 1");
        expectError(write("float.jsonl", meta, "{\"arrival_ms\":0,\"prompt_tokens\":2.5}"),
            ":2: prompt_tokens must be a non-negative integer, got 2.5");
        expectError(write("ids.jsonl", meta, "", "{\"arrival_ms\":0,\"prompt_tokens\":5,\"hash_ids\":[1,2,3]}"),
            ":3: 3 hash_ids for 5 prompt tokens, more than its 2 blocks of 4");
        expectError(write("nobs.jsonl", "{\"meta\":{\"kind\":\"workload\"}}",
            "{\"arrival_ms\":0,\"prompt_tokens\":5,\"hash_ids\":[1]}"), ":2: hash_ids need the meta line's block_size");
        expectError(write("json.jsonl", meta, "{\"arrival_ms\":0,\"prompt_tokens\":5", "{}"), ":3: not valid JSON");
        expectError(write("session.jsonl", meta, "{\"arrival_ms\":0,\"prompt_tokens\":5,\"session\":7}"),
            ":2: session must be a string");
        expectError(write("meta2.jsonl", meta, meta), ":2: a second meta line");
    }

    @Test
    void shouldRefuseToWriteWhatItWouldNotRead() throws IOException
    {
        try (WorkloadWriter writer = WorkloadWriter.open(dir.resolve("w.jsonl"), "x", 0, null))
        {
            writer.write(WorkloadRequest.of(10, 5, 1));
            assertThrows(IllegalArgumentException.class, () -> writer.write(WorkloadRequest.of(9, 5, 1)));
            assertThrows(IllegalArgumentException.class, () -> writer.write(
                new WorkloadRequest(11, 5, 1, new long[] {1}, null, 0, Double.NaN)), "ids without a block size");
            assertEquals(1, writer.requests());
        }
    }

    @Test
    void shouldStreamFromAnInputStream() throws IOException
    {
        final byte[] content = ("{\"meta\":{\"kind\":\"workload\",\"source\":\"s\",\"block_size\":2}}\n" +
            "{\"arrival_ms\":1.5,\"prompt_tokens\":3,\"output_tokens\":4,\"hash_ids\":[7,8],\"session\":\"a\"," +
            "\"turn\":2,\"think_ms\":100}\n").getBytes(StandardCharsets.UTF_8);
        try (InputStream in = new java.io.ByteArrayInputStream(content);
            WorkloadReader reader = WorkloadReader.open("memory", in))
        {
            assertEquals("s", reader.source());
            assertEquals(2, reader.hashBlockSize());
            final WorkloadRequest request = reader.next();
            assertEquals(1.5, request.arrivalMs());
            assertEquals(4, request.outputTokens());
            assertArrayEquals(new long[] {7, 8}, request.hashIds());
            assertEquals("a", request.session());
            assertEquals(2, request.turn());
            assertEquals(100.0, request.thinkMs());
            assertNull(reader.next());
        }
    }

    private Path write(final String name, final String... lines) throws IOException
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, String.join("\n", lines) + "\n");
        return file;
    }

    private static void expectError(final Path file, final String expected)
    {
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> WorkloadReader.readAll(file),
            file.toString());
        assertTrue(error.getMessage().startsWith(file.toString()), error.getMessage());
        assertTrue(error.getMessage().contains(expected), error.getMessage());
    }

    static void assertSameWorkload(final Workload expected, final Workload actual)
    {
        assertEquals(expected.source(), actual.source());
        assertEquals(expected.hashBlockSize(), actual.hashBlockSize());
        assertEquals(expected.notes(), actual.notes());
        assertEquals(expected.requests().size(), actual.requests().size());
        for (int i = 0; i < expected.requests().size(); i++)
        {
            final WorkloadRequest a = expected.requests().get(i);
            final WorkloadRequest b = actual.requests().get(i);
            assertEquals(a.arrivalMs(), b.arrivalMs(), "request " + i);
            assertEquals(a.promptTokens(), b.promptTokens(), "request " + i);
            assertEquals(a.outputTokens(), b.outputTokens(), "request " + i);
            assertArrayEquals(a.hashIds(), b.hashIds(), "request " + i);
            assertEquals(a.session(), b.session(), "request " + i);
            assertEquals(a.turn(), b.turn(), "request " + i);
            assertEquals(a.thinkMs(), b.thinkMs(), "request " + i);
        }
    }
}
