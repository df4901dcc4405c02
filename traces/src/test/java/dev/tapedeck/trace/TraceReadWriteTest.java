package dev.tapedeck.trace;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NumericNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reading and writing traces: every vllm-vcr fixture round trips to the same JSON (unknown fields included), gzip
 * works both ways, files cut short are read up to their last whole record, and malformed lines are reported with
 * file and line.
 */
class TraceReadWriteTest
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Numbers compare by value: 12 and 12.0 are the same gap. */
    private static final Comparator<JsonNode> BY_VALUE = (a, b) ->
    {
        if (a instanceof NumericNode && b instanceof NumericNode)
        {
            return Double.compare(a.doubleValue(), b.doubleValue());
        }
        return a.equals(b) ? 0 : 1;
    };

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"simple_trace.jsonl", "edge_cases_trace.jsonl", "batch_context_trace.jsonl",
        "gemma4_mm_trace.jsonl", "spec_decode_trace.jsonl", "speculative_trace.jsonl"})
    void shouldRoundTripEveryVcrFixtureToTheSameJson(final String fixture) throws IOException
    {
        final Path source = TraceTestData.path("vllm-vcr-fixtures/" + fixture);
        final TraceReader.Trace trace = TraceReader.readAll(source);
        assertTrue(trace.warnings().isEmpty(), trace.warnings().toString());
        for (final String suffix : new String[] {".jsonl", ".jsonl.gz"})
        {
            final Path copy = dir.resolve("copy-" + fixture + suffix);
            try (TraceWriter writer = TraceWriter.open(copy, trace.meta()))
            {
                for (final TraceRecord record : trace.records())
                {
                    writer.write(record);
                }
            }
            final List<JsonNode> expected = jsonLines(Files.readAllLines(source));
            final List<JsonNode> actual = jsonLines(readText(copy));
            assertEquals(expected.size(), actual.size(), fixture);
            for (int i = 0; i < expected.size(); i++)
            {
                assertTrue(expected.get(i).equals(BY_VALUE, actual.get(i)),
                    fixture + " line " + (i + 1) + ":\n" + expected.get(i) + "\n" + actual.get(i));
            }
        }
    }

    @Test
    void shouldReadEveryFieldOfTheSchema() throws IOException
    {
        final TraceReader.Trace trace = TraceReader.readAll(fixture("batch_context_trace.jsonl"));
        final TraceRecord first = trace.records().get(0);
        assertEquals(64, first.promptTokens());
        assertEquals(5, first.outputTokens());
        assertEquals(45.0, first.ttftMs());
        assertArrayEquals(new double[] {10, 12, 11, 9}, first.itlMs());
        assertArrayEquals(new int[] {1, 1, 1, 1}, first.itlContext().numRunning());
        assertArrayEquals(new int[] {0, 0, 0, 0}, first.itlContext().prefillTokens());
        assertEquals(0.0, first.arrivalMs());
        assertEquals(1, first.concurrency());
        assertArrayEquals(new int[] {100, 101, 102, 103, 104}, first.outputTokenIds());
        assertEquals("stop", first.finishReason());
        final TraceRecord speculative = TraceReader.readAll(fixture("spec_decode_trace.jsonl"))
            .records().get(0);
        assertArrayEquals(new int[] {3, 5, 2, 2, 4, 5, 4, 3, 5, 1, 5, 3}, speculative.itlTokens());
        final TraceReader.Trace gemma = TraceReader.readAll(fixture("gemma4_mm_trace.jsonl"));
        assertEquals("H200", gemma.meta().gpu());
        assertEquals(16L, gemma.meta().blockSize());
        assertEquals("tap", gemma.meta().source());
    }

    @Test
    void shouldKeepUnknownFieldsAndUnsignedHashes() throws IOException
    {
        final Path file = write("in.jsonl",
            "{\"meta\":{\"model\":\"m\",\"capture_host\":\"gpu-7\",\"block_size\":16}}\n" +
            "{\"prompt_tokens\":32,\"output_tokens\":1,\"ttft_ms\":3.5,\"block_hashes\":[18446744073709551615,1]," +
            "\"mm_hashes\":[\"abc\"],\"session\":{\"id\":\"s1\",\"turn\":2}}\n");
        final TraceReader.Trace trace = TraceReader.readAll(file);
        assertEquals("gpu-7", trace.meta().extra().get("capture_host").asText());
        final TraceRecord record = trace.records().get(0);
        assertArrayEquals(new long[] {-1L, 1L}, record.blockHashes());
        assertEquals("s1", record.extra().get("session").get("id").asText());
        final Path copy = dir.resolve("out.jsonl");
        try (TraceWriter writer = TraceWriter.open(copy, trace.meta()))
        {
            writer.write(record);
        }
        final String text = Files.readString(copy);
        assertTrue(text.contains("\"block_hashes\":[18446744073709551615,1]"), text);
        assertTrue(text.contains("\"session\":{\"id\":\"s1\",\"turn\":2}"), text);
        assertTrue(text.contains("\"capture_host\":\"gpu-7\""), text);
        assertFalse(text.startsWith(" ") || text.contains("\n "), "no separators between lines: " + text);
    }

    @Test
    void shouldComputeTheTraceBlockFingerprintsOfVcr()
    {
        final int[] tokens = new int[32];
        for (int i = 0; i < tokens.length; i++)
        {
            tokens[i] = i;
        }
        assertArrayEquals(new long[] {0x5af86de09db7f3ccL, 0xee920b7a69736295L}, PromptBlockHashes.of(tokens, 32, 16));
        assertArrayEquals(new long[] {0x5af86de09db7f3ccL}, PromptBlockHashes.of(tokens, 31, 16), "partial tail");
        assertNull(PromptBlockHashes.of(tokens, 15, 16));
        assertNull(PromptBlockHashes.of(tokens, 32, 0));
    }

    @Test
    void shouldReadALiveGzipCaptureUpToItsLastFlushedRecord() throws IOException
    {
        final Path file = dir.resolve("live.jsonl.gz");
        final TraceWriter writer = TraceWriter.open(file, new TraceMeta().source("test"));
        for (int i = 0; i < 3; i++)
        {
            writer.write(record(i));
        }
        // not closed: no gzip trailer yet, as while a capture runs
        final TraceReader.Trace live = TraceReader.readAll(file);
        assertEquals(3, live.records().size());
        assertEquals(1, live.warnings().size(), live.warnings().toString());
        assertTrue(live.warnings().get(0).contains("without its trailer"), live.warnings().get(0));
        writer.write(record(3));
        writer.close();
        final TraceReader.Trace closed = TraceReader.readAll(file);
        assertEquals(4, closed.records().size());
        assertTrue(closed.warnings().isEmpty());
    }

    @Test
    void shouldReadATruncatedGzipUpToTheLastWholeRecord() throws IOException
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TraceWriter writer = TraceWriter.open(bytes, null))
        {
            for (int i = 0; i < 50; i++)
            {
                writer.write(record(i), false);
            }
        }
        final byte[] whole = bytes.toByteArray();
        final ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(gz))
        {
            out.write(whole);
        }
        final byte[] compressed = gz.toByteArray();
        final Path cut = dir.resolve("cut.jsonl.gz");
        Files.write(cut, java.util.Arrays.copyOf(compressed, compressed.length * 2 / 3));
        final TraceReader.Trace trace = TraceReader.readAll(cut);
        assertTrue(trace.records().size() > 0 && trace.records().size() < 50, "read " + trace.records().size());
        for (int i = 0; i < trace.records().size(); i++)
        {
            assertEquals(100 + i, trace.records().get(i).promptTokens(), "records intact and in order");
        }
        assertFalse(trace.warnings().isEmpty());
    }

    @Test
    void shouldStopBeforeAPlainLastLineThatIsCutShort() throws IOException
    {
        final Path file = write("cut.jsonl", "{\"prompt_tokens\":1,\"output_tokens\":1,\"ttft_ms\":2}\n" +
            "{\"prompt_tokens\":2,\"output_tok");
        final TraceReader.Trace trace = TraceReader.readAll(file);
        assertEquals(1, trace.records().size());
        assertTrue(trace.warnings().get(0).contains("cut.jsonl:2"), trace.warnings().toString());
    }

    @Test
    void shouldNameFileAndLineForMalformedRecords() throws IOException
    {
        assertError("{\"prompt_tokens\":1,\"output_tokens\":1,\"ttft_ms\":2}\n\n{\"prompt_tokens\":-3}\n",
            ":3: prompt_tokens must be a non-negative integer, got -3");
        assertError("{\"prompt_tokens\":1,\"output_tokens\":1,\"ttft_ms\":2}\n{not json}\n", ":2: not valid JSON");
        assertError("{\"prompt_tokens\":5,\"output_tokens\":3,\"ttft_ms\":2}\n",
            ":1: output_tokens is 3 but neither itl_ms nor itl_summary is given");
        assertError("{\"prompt_tokens\":5,\"output_tokens\":3,\"ttft_ms\":2,\"itl_ms\":[1,1],\"itl_tokens\":[1]}\n",
            "itl_tokens must have itl_ms's length 2, has 1");
        assertError("{\"prompt_tokens\":5,\"output_tokens\":3,\"ttft_ms\":2,\"itl_ms\":[1,1],\"itl_tokens\":[1,2]}\n",
            "itl_tokens sums to 3");
        assertError("{\"prompt_tokens\":5,\"output_tokens\":3,\"ttft_ms\":2,\"itl_ms\":[1,1],\"itl_tokens\":[0,1]}\n",
            "itl_tokens[0] is 0");
        assertError("{\"prompt_tokens\":5,\"output_tokens\":2,\"ttft_ms\":2,\"itl_ms\":[1]," +
            "\"itl_ctx\":{\"num_running\":[1,2],\"prefill_tokens\":[0]}}\n",
            "itl_ctx arrays must have itl_ms's length 1");
        assertError("{\"prompt_tokens\":5,\"output_tokens\":2,\"ttft_ms\":2,\"itl_ms\":[1]," +
            "\"output_token_ids\":[7]}\n", "output_token_ids has 1 ids but output_tokens is 2");
        assertError("{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":2,\"finish_reason\":\"eos\"}\n",
            "finish_reason 'eos' is not one of");
        assertError("{\"output_tokens\":1,\"ttft_ms\":2}\n", "prompt_tokens is missing");
        assertError("{\"meta\":{\"tp\":\"one\"}}\n", ":1: tp must be a non-negative integer, got a string");
        assertError("{\"prompt_tokens\":1,\"output_tokens\":1,\"ttft_ms\":2} 7\n",
            "unexpected content after the record");
    }

    @Test
    void shouldReadRecordsWhenTheFileHasNoMetaLine() throws IOException
    {
        final Path file = write("bare.jsonl", "\n\n{\"prompt_tokens\":1,\"output_tokens\":1,\"ttft_ms\":2}\r\n" +
            "{\"prompt_tokens\":2,\"output_tokens\":1,\"ttft_ms\":2}");
        final TraceReader.Trace trace = TraceReader.readAll(file);
        assertTrue(trace.meta().isEmpty());
        assertEquals(2, trace.records().size());
        assertTrue(trace.warnings().isEmpty(), "a parsable last line without a newline is a whole record");
    }

    private void assertError(final String content, final String expected) throws IOException
    {
        final Path file = write("bad.jsonl", content);
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> TraceReader.readAll(file));
        assertTrue(error.getMessage().startsWith(file.toString() + ":"), error.getMessage());
        assertTrue(error.getMessage().contains(expected), error.getMessage());
    }

    private static Path fixture(final String name)
    {
        return TraceTestData.path("vllm-vcr-fixtures/" + name);
    }

    private static TraceRecord record(final int i)
    {
        return new TraceRecord().promptTokens(100 + i).outputTokens(3).ttftMs(12.5).itlMs(new double[] {4.25, 4.5})
            .arrivalMs(i * 10.0).concurrency(1L).finishReason("length");
    }

    private Path write(final String name, final String content) throws IOException
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }

    private static List<String> readText(final Path file) throws IOException
    {
        try (java.io.InputStream in = TraceFiles.openInput(file))
        {
            return List.of(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n"));
        }
    }

    private static List<JsonNode> jsonLines(final List<String> lines) throws IOException
    {
        final List<JsonNode> nodes = new ArrayList<>();
        for (final String line : lines)
        {
            if (!line.isBlank())
            {
                nodes.add(JSON.readTree(line));
            }
        }
        return nodes;
    }
}
