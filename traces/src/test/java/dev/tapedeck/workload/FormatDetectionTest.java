package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Formats are told from content, the shipped files and vcr fixtures each as what they are; content that fits no
 * format, or two with different units, is refused with the list of formats. Malformed sources name file and line.
 */
class FormatDetectionTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @CsvSource({
        "workloads/mooncake_fast25/conversation_trace.jsonl, mooncake",
        "workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv, azure",
        "workloads/kv_cache_tester/trace_0012.json, kvcache-tester",
        "workloads/kv_cache_tester/trace_0022.json, kvcache-tester",
        "vllm-vcr-fixtures/guidellm_sample.json, guidellm",
        "vllm-vcr-fixtures/simple_trace.jsonl, trace",
        "vllm-vcr-fixtures/gemma4_mm_trace.jsonl, trace",
        "vllm-vcr-fixtures/batch_context_trace.jsonl, trace"})
    void shouldTellEveryShippedFile(final String file, final String format) throws IOException
    {
        assertEquals(WorkloadFormat.of(format), WorkloadFormat.detect(TraceTestData.path(file)));
    }

    @Test
    void shouldTellATraceWithoutAMetaLine() throws IOException
    {
        final Path file = write("bare.jsonl", "{\"prompt_tokens\":3,\"output_tokens\":1,\"ttft_ms\":2.0}\n");
        assertEquals(WorkloadFormat.TRACE, WorkloadFormat.detect(file));
    }

    @Test
    void shouldRefuseWhatFitsNoFormatAndListTheFormats() throws IOException
    {
        for (final Path file : new Path[] {
            write("other.jsonl", "{\"prompt\":\"hello\",\"output_tokens\":3}\n"),
            write("other.csv", "a,b,c\n1,2,3\n"),
            write("broken.json", "{\"benchmarks\": [\n"),
            write("empty.jsonl", "\n\n")})
        {
            final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> WorkloadFormat.detect(file), file.toString());
            assertTrue(error.getMessage().contains(file.toString()), error.getMessage());
            if (!file.toString().endsWith("empty.jsonl"))
            {
                assertTrue(error.getMessage().contains("tapedeck, trace, mooncake, azure, kvcache-tester, guidellm, " +
                    "guidellm-replay, vllm-bench"), error.getMessage());
            }
        }
        final IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
            () -> WorkloadFormat.of("sharegpt"));
        assertTrue(unknown.getMessage().contains("vllm-bench"), unknown.getMessage());
        assertEquals(WorkloadFormat.KVCACHE_TESTER, WorkloadFormat.of("KVCACHE-TESTER"));
    }

    @Test
    void shouldNameFileAndLineOfMalformedSources() throws IOException
    {
        expect(WorkloadFormat.MOONCAKE, write("m.jsonl", "{\"timestamp\":0,\"input_length\":5,\"output_length\":1}\n" +
            "{\"timestamp\":1,\"output_length\":1}\n"), ":2: input_length is missing");
        expect(WorkloadFormat.MOONCAKE, write("m2.jsonl", "{\"timestamp\":0,\"input_length\":5}\n" +
            "{\"timestamp\":\"x\",\"input_length\":5}\n"), ":2: timestamp must be a finite number, got \"x\"");
        expect(WorkloadFormat.MOONCAKE, write("m3.jsonl", "{\"timestamp\":0,\"input_length\":0}\n"),
            ":1: the prompt must have 1 to");
        expect(WorkloadFormat.MOONCAKE, write("m4.jsonl", "{\"timestamp\":0,\"input_length\":5}\n\n{\"timestamp\"\n"),
            ":3: not valid JSON");
        expect(WorkloadFormat.AZURE, write("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
            "2023-11-16 18:15:46.6805900,374,44\n2023-11-16 25:15:46.6805900,374,44\n"), ":3: TIMESTAMP");
        expect(WorkloadFormat.AZURE, write("a2.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
            "2023-11-16 18:15:46.6805900,374,-4\n"), ":2: GeneratedTokens must be a non-negative integer, got '-4'");
        expect(WorkloadFormat.AZURE, write("a3.csv", "time,tokens\n"), ":1: expected the header");
        expect(WorkloadFormat.KVCACHE_TESTER, write("k.json", "{\"id\":\"k\",\"block_size\":64,\"requests\":[\n" +
            "{\"t\":0,\"in\":64,\"out\":1},\n{\"t\":1,\"out\":1}]}"), ":3: requests[1]: in is missing");
        expect(WorkloadFormat.KVCACHE_TESTER, write("k2.json", "{\"id\":\"k\",\"requests\":[{\"t\":0,\"type\":" +
            "\"subagent\",\"requests\":[{\"t\":-1,\"in\":1,\"out\":1}]}]}"),
            ":1: requests[0].requests[0]: t must not be negative");
        expect(WorkloadFormat.GUIDELLM_REPLAY, write("g.jsonl", "{\"timestamp\":1.0,\"input_length\":5}\n"),
            ":1: output_length is missing");
        expect(WorkloadFormat.GUIDELLM, write("r.json", "{\"benchmarks\":[{\"config\":{\"strategy\":{\"type_\":" +
            "\"synchronous\"}},\n\"requests\":{\"successful\":[\n{\"prompt_tokens\":null,\"output_tokens\":3}]}}]}"),
            ":3: benchmarks[0].requests.successful[0]: prompt_tokens is missing");
        expect(WorkloadFormat.GUIDELLM, write("r2.json", "{\"benchmarks\":[]}"), "benchmarks is missing or empty");
    }

    private static void expect(final WorkloadFormat format, final Path file, final String expected)
    {
        final TraceFormatException error = assertThrows(TraceFormatException.class,
            () -> Workloads.load(file, format), file.toString());
        assertTrue(error.getMessage().startsWith(file.toString()), error.getMessage());
        assertTrue(error.getMessage().contains(expected), error.getMessage());
    }

    private Path write(final String name, final String content) throws IOException
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, content);
        return file;
    }
}
