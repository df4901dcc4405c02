package dev.tapedeck.trace.tools;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect summarize}: rows per exact concurrency with nearest-rank percentiles, checked against values
 * computed by hand on a small file and on every vllm-vcr fixture.
 */
class TraceSummaryTest
{
    @TempDir
    Path dir;

    @Test
    void shouldMatchHandComputedValuesOnASmallFile() throws IOException
    {
        final Path trace = write("small.jsonl",
            "{\"prompt_tokens\":10,\"output_tokens\":4,\"ttft_ms\":100,\"itl_ms\":[10,20,30],\"concurrency\":1," +
                "\"finish_reason\":\"stop\"}",
            "{\"prompt_tokens\":30,\"output_tokens\":7,\"ttft_ms\":300,\"itl_ms\":[40,9],\"itl_tokens\":[4,2]," +
                "\"concurrency\":2,\"finish_reason\":\"length\"}",
            "{\"prompt_tokens\":20,\"output_tokens\":3,\"ttft_ms\":200,\"itl_summary\":{\"mean_ms\":5,\"count\":2}," +
                "\"concurrency\":2}",
            "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":50,\"concurrency\":1,\"finish_reason\":\"stop\"}");
        final TraceSummary summary = TraceSummary.of(trace);
        assertEquals(2, summary.rows().size());
        // concurrency 1: TTFT {50, 100}: p50 = rank ceil(1.0) = 1st = 50, p90 = rank ceil(1.8) = 2nd = 100.
        // ITL {10, 20, 30}: p50 = rank 2 = 20, p90 = rank ceil(2.7) = 3 = 30.
        assertRow(summary.rows().get(0), 1L, 2, "5-10", "1-4", new double[] {50, 100, 100},
            new double[] {20, 30, 30}, 3, Map.of("stop", 2L));
        // concurrency 2: ITL per token: 40 ms over 4 tokens = 4 x 10, 9 ms over 2 = 2 x 4.5, summary 2 x 5 ->
        // {4.5, 4.5, 5, 5, 10, 10, 10, 10}: p50 = rank 4 = 5, p90 = rank ceil(7.2) = 8 = 10.
        assertRow(summary.rows().get(1), 2L, 2, "20-30", "3-7", new double[] {200, 300, 300},
            new double[] {5, 10, 10}, 8, Map.of("length", 1L, "none", 1L));
        // all: TTFT {50, 100, 200, 300}: p50 = rank 2 = 100, p90 = rank 4 = 300.
        // ITL {4.5, 4.5, 5, 5, 10 x 5, 20, 30}, N = 11: p50 = rank 6 = 10, p90 = rank 10 = 20, p99 = rank 11 = 30.
        assertRow(summary.all(), null, 4, "5-30", "1-7", new double[] {100, 300, 300}, new double[] {10, 20, 30},
            11, Map.of("length", 1L, "none", 1L, "stop", 2L));
    }

    @Test
    void shouldSummariseTheSimpleFixture() throws IOException
    {
        final TraceSummary summary = TraceSummary.of(fixture("simple_trace.jsonl"));
        assertEquals(1, summary.rows().size());
        // TTFT {15.5, 30, 50, 80}; ITL {10, 12, 11, 9, 8, 7.5} and 9 x 11.5 (itl_summary), N = 15:
        // sorted 7.5 8 9 10 11 11.5x9 12: p50 = rank 8 = 11.5, p90 = rank 14 = 11.5, p99 = rank 15 = 12.
        assertRow(summary.rows().get(0), 1L, 4, "10-200", "1-10", new double[] {30, 80, 80},
            new double[] {11.5, 11.5, 12}, 15, Map.of("length", 1L, "none", 1L, "stop", 2L));
        assertEquals(summary.rows().get(0).ttftMs(), summary.all().ttftMs());
        assertEquals("synthetic-model", summary.meta().model());
        assertEquals(
            "trace: " + fixture("simple_trace.jsonl") + " (4 records)\n" +
            "meta: model=synthetic-model gpu=- source=ci-validation vllm_version=- config_hash=-\n" +
            "\n" +
            "concurrency  count  prompt  output  ttft_p50  ttft_p90  ttft_p99  itl_p50  itl_p90  itl_p99  " +
            "finish_reasons\n" +
            "          1      4  10-200    1-10     30.00     80.00     80.00    11.50    11.50    12.00  " +
            "length=1 none=1 stop=2\n" +
            "        all      4  10-200    1-10     30.00     80.00     80.00    11.50    11.50    12.00  " +
            "length=1 none=1 stop=2\n" +
            "\n" +
            "times in ms; percentiles are nearest rank; ITL is per token, pooled over every token gap (15 samples " +
            "in all)\n",
            TraceSummaryFormat.text(summary));
    }

    @Test
    void shouldGroupByExactConcurrency() throws IOException
    {
        final TraceSummary batch = TraceSummary.of(fixture("batch_context_trace.jsonl"));
        assertEquals(List.of("1", "2", "4", "6", "8"), batch.rows().stream().map(TraceSummary.Row::label).toList());
        assertRow(batch.rows().get(4), 8L, 1, "200-200", "10-10", new double[] {90, 90, 90},
            new double[] {18, 19, 19}, 9, Map.of("stop", 1L));
        assertRow(batch.all(), null, 5, "32-200", "4-10", new double[] {55, 90, 90}, new double[] {13, 18, 19}, 28,
            Map.of("stop", 5L));

        final TraceSummary edges = TraceSummary.of(fixture("edge_cases_trace.jsonl"));
        assertEquals(List.of("1", "2", "4", "8", "16", "32"),
            edges.rows().stream().map(TraceSummary.Row::label).toList());
        // concurrency 16: 255 x 3.2 (itl_summary) and 15 gaps of 8.0 / 7.5: p99 = rank ceil(267.3) = 268 = 8.0
        assertRow(edges.rows().get(4), 16L, 2, "64-1000", "16-256", new double[] {55, 400, 400},
            new double[] {3.2, 3.2, 8.0}, 270, Map.of("length", 1L, "stop", 1L));
        assertRow(edges.all(), null, 8, "5-2000", "1-512", new double[] {55, 800, 800}, new double[] {2.1, 5.5, 11},
            895, Map.of("abort", 1L, "error", 1L, "length", 3L, "repetition", 1L, "stop", 2L));
    }

    @Test
    void shouldDivideMultiTokenGapsIntoPerTokenItl() throws IOException
    {
        final TraceSummary speculative = TraceSummary.of(fixture("speculative_trace.jsonl"));
        // 97 tokens after the first chunks; e.g. 20 ms closing 3 tokens is 3 samples of 6.667 ms
        assertRow(speculative.all(), null, 4, "64-256", "15-50", new double[] {60, 120, 120},
            new double[] {17.0 / 3, 7.6, 11}, 97, Map.of("length", 1L, "stop", 3L));

        final TraceSummary spec = TraceSummary.of(fixture("spec_decode_trace.jsonl"));
        assertRow(spec.all(), null, 8, "32-32", "36-47", new double[] {19.589, 22.932, 22.932},
            new double[] {2.543, 11.815 / 3, 10.043}, 339, Map.of("length", 8L));

        final TraceSummary gemma = TraceSummary.of(fixture("gemma4_mm_trace.jsonl"));
        assertRow(gemma.all(), null, 4, "271-277", "32-128", new double[] {50.183502999999995, 14564.635134,
            14564.635134}, new double[] {20.991319, 21.160754, 23.109791}, 300, Map.of("length", 3L, "stop", 1L));
        assertEquals("H200", gemma.meta().gpu());
    }

    @Test
    void shouldWriteJsonWithNullPercentilesWhereThereAreNoSamples() throws IOException
    {
        final Path trace = write("one.jsonl", "{\"meta\":{\"model\":\"m\",\"config_hash\":\"" + "a".repeat(64) + "\"}}",
            "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":12.5,\"concurrency\":3}");
        final StringWriter out = new StringWriter();
        TraceSummaryFormat.writeJson(TraceSummary.of(trace), out);
        final JsonNode json = new ObjectMapper().readTree(out.toString());
        assertEquals("m", json.get("meta").get("model").asText());
        assertEquals("a".repeat(64), json.get("meta").get("config_hash").asText());
        assertTrue(json.get("meta").get("gpu").isNull());
        assertEquals(1, json.get("records").asInt());
        final JsonNode row = json.get("rows").get(0);
        assertEquals(3, row.get("concurrency").asInt());
        assertEquals(5, row.get("prompt_tokens").get("min").asInt());
        assertEquals(12.5, row.get("ttft_ms").get("p99").asDouble());
        assertTrue(row.get("itl_ms").get("p50").isNull());
        assertEquals(0, row.get("itl_ms").get("samples").asInt());
        assertEquals(1, row.get("finish_reasons").get("none").asInt());
        assertEquals("all", json.get("all").get("concurrency").asText());
        assertEquals(0, json.get("warnings").size());
        assertTrue(TraceSummaryFormat.text(TraceSummary.of(trace)).contains("12.50     12.50     12.50        -"));
    }

    @Test
    void shouldReportReaderWarningsAndRejectBadRecordsWithFileAndLine() throws IOException
    {
        final Path cut = dir.resolve("cut.jsonl");
        Files.writeString(cut, "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1}\n{\"prompt_tok",
            StandardCharsets.UTF_8);
        final TraceSummary summary = TraceSummary.of(cut);
        assertEquals(1, summary.all().count());
        assertEquals(1, summary.warnings().size());
        assertTrue(TraceSummaryFormat.text(summary).contains("warning: " + cut + ":2: the last line is cut short"));

        final Path bad = write("bad.jsonl", "{\"prompt_tokens\":5,\"output_tokens\":3,\"ttft_ms\":1}");
        final TraceFormatException error = assertThrows(TraceFormatException.class, () -> TraceSummary.of(bad));
        assertTrue(error.getMessage().startsWith(bad + ":1: output_tokens is 3 but neither"), error.getMessage());
    }

    private static void assertRow(final TraceSummary.Row row, final Long concurrency, final long count,
        final String prompt, final String output, final double[] ttftMs, final double[] itlMs, final long itlSamples,
        final Map<String, Long> finishReasons)
    {
        if (null == concurrency)
        {
            assertNull(row.concurrency());
        }
        else
        {
            assertEquals(concurrency, row.concurrency());
        }
        assertEquals(count, row.count(), "count");
        assertEquals(prompt, row.promptTokensMin() + "-" + row.promptTokensMax(), "prompt tokens");
        assertEquals(output, row.outputTokensMin() + "-" + row.outputTokensMax(), "output tokens");
        assertEquals(new TraceSummary.Quantiles(ttftMs[0], ttftMs[1], ttftMs[2]), row.ttftMs(), "TTFT");
        assertEquals(new TraceSummary.Quantiles(itlMs[0], itlMs[1], itlMs[2]), row.itlMs(), "ITL");
        assertEquals(itlSamples, row.itlSamples(), "ITL samples");
        assertEquals(finishReasons, row.finishReasons(), "finish reasons");
    }

    private static Path fixture(final String name)
    {
        return TraceTestData.path("vllm-vcr-fixtures/" + name);
    }

    private Path write(final String name, final String... lines) throws IOException
    {
        final Path path = dir.resolve(name);
        Files.writeString(path, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        return path;
    }
}
