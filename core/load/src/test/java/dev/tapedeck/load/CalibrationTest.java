package dev.tapedeck.load;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.load.Calibration.MetricResult;
import dev.tapedeck.load.Calibration.Result;
import dev.tapedeck.load.LatencySide.Metric;
import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceReader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Calibration}, {@link LatencySide} and {@link KnobFitCheck} on real files: gates, KS, APE pairing, traces
 * against reports, and malformed input.
 */
class CalibrationTest
{
    @TempDir
    Path dir;

    /**
     * A trace of {@code n} requests: request i has TTFT {@code ttftMs(i) * scale}, 4 gaps of {@code 10 + i % 5} ms,
     * arrival {@code 100 i} ms; written in reverse (finish) order.
     */
    private Path trace(final String name, final int n, final double ttftScale, final String extra) throws Exception
    {
        final StringBuilder out = new StringBuilder();
        for (int i = n - 1; i >= 0; i--)
        {
            final double gap = 10 + i % 5;
            out.append(String.format(Locale.ROOT, "{\"prompt_tokens\":%d,\"output_tokens\":5,\"ttft_ms\":%s," +
                "\"itl_ms\":[%s,%s,%s,%s],\"arrival_ms\":%d.0,\"concurrency\":2%s}%n", 100 + i,
                ttftMs(i) * ttftScale, gap, gap, gap, gap, 100 * i, extra.replace("#", Integer.toString(i))));
        }
        final Path path = dir.resolve(name);
        Files.writeString(path, out, StandardCharsets.UTF_8);
        return path;
    }

    private static double ttftMs(final int i)
    {
        return 40 + (i * 37) % 61;
    }

    private static Result compare(final Path pred, final Path real) throws Exception
    {
        return Calibration.compare("two-file", LatencySide.read(pred), LatencySide.read(real),
            Calibration.END_TO_END_TOLERANCE, Map.of());
    }

    private static MetricResult metric(final Result result, final Metric metric)
    {
        return result.metrics().stream().filter(m -> m.metric() == metric).findFirst().orElseThrow();
    }

    @Test
    void identicalTracesPassWithZeroError() throws Exception
    {
        final Path real = trace("real.jsonl", 50, 1, "");
        final Result result = compare(real, real);
        assertTrue(result.pass(), Calibration.table(result));
        assertEquals(List.of(Metric.TTFT, Metric.ITL, Metric.E2E, Metric.TPOT),
            result.metrics().stream().map(MetricResult::metric).toList());
        for (final MetricResult m : result.metrics())
        {
            assertEquals(0.0, m.maxError(), m.metric().key());
            assertEquals(0.0, m.ks(), m.metric().key());
            assertEquals(0.0, m.ape().median(), m.metric().key());
            assertEquals(50, m.ape().pairs(), m.metric().key());
        }
        assertEquals("arrival_order", result.pairing().by());
        assertTrue(result.skipped().isEmpty(), result.skipped().toString());
        assertTrue(Calibration.table(result).contains("result: PASS"), Calibration.table(result));
    }

    @Test
    void aShiftedTtftFailsItsGateAndNamesTheMetric() throws Exception
    {
        final Path real = trace("real.jsonl", 50, 1, "");
        final Path pred = trace("pred.jsonl", 50, 1.5, "");
        final Result result = compare(pred, real);
        assertFalse(result.pass());
        final MetricResult ttft = metric(result, Metric.TTFT);
        assertFalse(ttft.pass());
        assertEquals(1.0 / 3, ttft.maxError(), 1e-9, "(1.5 - 1) / 1.5 at every quantile");
        assertEquals(1.0 / 3, ttft.errors()[1], 1e-9, "signed: PRED is higher");
        assertTrue(metric(result, Metric.ITL).pass(), "the gaps did not move");
        assertEquals(0.5, ttft.ape().median(), 1e-9, "every request 50% slower");
        assertEquals(1, result.failures().size(), result.failures().toString());
        assertTrue(result.failures().get(0).startsWith("TTFT: largest p50/p90/p99 error 33.3% > tolerance 25.0%"),
            result.failures().get(0));
        assertTrue(Calibration.table(result).contains("result: FAIL: TTFT: "), Calibration.table(result));

        final Result looser = Calibration.compare("two-file", LatencySide.read(pred), LatencySide.read(real),
            Calibration.END_TO_END_TOLERANCE, Map.of(Metric.TTFT, 0.4, Metric.E2E, 0.4));
        assertTrue(looser.pass(), Calibration.table(looser));
    }

    @Test
    void ksDistanceOfHandComputedSamples()
    {
        // F_a - F_b after 1: 1/4 - 0; after 2: 2/4 - 0; after 3: 3/4 - 1/4; after 4: 1 - 2/4; then 0.
        assertEquals(0.5, Calibration.ksDistance(new double[] {1, 2, 3, 4}, new double[] {3, 4, 5, 6}), 1e-12);
        // ties across samples: after 1: 2/3 - 1/3; after 2: 1 - 1.
        assertEquals(1.0 / 3, Calibration.ksDistance(new double[] {1, 1, 2}, new double[] {1, 2, 2}), 1e-12);
        assertEquals(1.0, Calibration.ksDistance(new double[] {1, 2}, new double[] {3}), 1e-12);
        assertEquals(0.0, Calibration.ksDistance(new double[] {5, 7}, new double[] {5, 5, 7, 7}), 1e-12);
        assertTrue(Double.isNaN(Calibration.ksDistance(new double[0], new double[] {1})));
    }

    @Test
    void percentilesAreNearestRankAsVllmVcr()
    {
        final double[] values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertEquals(5, LatencySide.nearestRank(values, 50));
        assertEquals(9, LatencySide.nearestRank(values, 90));
        assertEquals(10, LatencySide.nearestRank(values, 99));
        assertEquals(1, LatencySide.nearestRank(values, 0));
        assertEquals(-0.25, Calibration.signedError(75, 100), 1e-12);
        assertEquals(0.25, Calibration.signedError(100, 75), 1e-12);
        assertEquals(0.0, Calibration.signedError(0, 0));
    }

    @Test
    void pairsByRequestIdWhenEveryRecordHasOne() throws Exception
    {
        final Path real = trace("real.jsonl", 20, 1, ",\"request_id\":\"r#\"");
        final StringBuilder shuffled = new StringBuilder();
        for (int i = 0; i < 20; i++)
        {
            // no arrival times, a different order, 10% slower TTFT, and one extra request REAL does not have
            shuffled.append(String.format(Locale.ROOT, "{\"prompt_tokens\":10,\"output_tokens\":1,\"ttft_ms\":%s," +
                "\"request_id\":\"r%d\"}%n", ttftMs((i * 7) % 20) * 1.1, (i * 7) % 20));
        }
        shuffled.append("{\"prompt_tokens\":10,\"output_tokens\":1,\"ttft_ms\":1.0,\"request_id\":\"x\"}\n");
        final Path pred = dir.resolve("pred.jsonl");
        Files.writeString(pred, shuffled);
        final Result result = compare(pred, real);
        assertEquals("request_id", result.pairing().by());
        assertEquals(20, result.pairing().pred().size());
        final Calibration.Ape ape = metric(result, Metric.TTFT).ape();
        assertEquals(20, ape.pairs());
        assertEquals(0.1, ape.median(), 1e-9);
        assertEquals(0.1, ape.mean(), 1e-9);
        assertEquals(20, metric(result, Metric.E2E).ape().pairs());
        assertEquals(List.of("itl: only in REAL", "tpot: only in REAL"), result.skipped(),
            "PRED's requests have one token each");
    }

    @Test
    void pairsByArrivalOrderOnlyWhenTheCountsMatch() throws Exception
    {
        final Path real = trace("real.jsonl", 20, 1, "");
        final Path fewer = trace("fewer.jsonl", 19, 1, "");
        final Result result = compare(fewer, real);
        assertEquals("none", result.pairing().by());
        assertTrue(result.pairing().note().contains("different numbers of records (19 and 20)"),
            result.pairing().note());
        assertNull(metric(result, Metric.TTFT).ape());
        assertFalse(Double.isNaN(metric(result, Metric.TTFT).ks()), "KS needs no pairing");
    }

    @Test
    void aTraceAgainstALoadReport() throws Exception
    {
        final Path real = trace("real.jsonl", 100, 1, "");
        final LatencySide trace = LatencySide.read(real);
        final Path report = dir.resolve("pred.json");
        Files.writeString(report, reportOf(trace));
        final LatencySide side = LatencySide.read(report);
        assertEquals("report", side.kind());
        assertTrue(side.requests().isEmpty());
        final Result result = Calibration.compare("two-file", side, trace, 0.1, Map.of());
        assertTrue(result.pass(), Calibration.table(result));
        final MetricResult ttft = metric(result, Metric.TTFT);
        assertEquals(0.0, ttft.maxError());
        assertTrue(Double.isNaN(ttft.ks()), "a report has no samples");
        assertNull(ttft.ape());
        assertEquals("none", result.pairing().by());
        assertEquals(trace.metrics().get(Metric.TTFT).quantileMs(0.9),
            side.metrics().get(Metric.TTFT).quantileMs(0.9), 1e-9, "the report's CDF read back");

        final JsonNode json = Calibration.toJson(result);
        assertEquals(Calibration.SCHEMA, json.path("schema").asText());
        assertTrue(json.path("metrics").get(0).path("ks").isNull());
        assertEquals("report", json.path("pred").path("kind").asText());

        final String page = CalibrationHtml.render(result);
        assertEquals(6, page.split("<svg ", -1).length - 1, "survival and Q-Q of TTFT, ITL and E2E");
        assertTrue(page.contains("TTFT survival") && page.contains("E2E Q-Q"));
        assertTrue(page.strip().endsWith("</html>"));
    }

    /** A minimal load report with the trace's TTFT, ITL and E2E summaries and CDFs at the report's fractions. */
    private static String reportOf(final LatencySide trace)
    {
        final StringBuilder latency = new StringBuilder();
        final StringBuilder cdf = new StringBuilder();
        for (final Metric metric : new Metric[] {Metric.TTFT, Metric.ITL, Metric.E2E})
        {
            final LatencySide.Distribution d = trace.metrics().get(metric);
            latency.append(latency.isEmpty() ? "" : ",").append(String.format(Locale.ROOT, "\"%s\":{\"count\":%d," +
                "\"mean\":%s,\"p50\":%s,\"p90\":%s,\"p99\":%s}", metric.key(), d.count(), d.meanMs(), d.p50Ms(),
                d.p90Ms(), d.p99Ms()));
            final List<String> pairs = new ArrayList<>();
            for (int p = 0; p <= 100; p++)
            {
                pairs.add(String.format(Locale.ROOT, "[%s,%s]", d.quantileMs(p / 100.0), p / 100.0));
            }
            cdf.append(cdf.isEmpty() ? "" : ",").append('"').append(metric.key()).append("\":[")
                .append(String.join(",", pairs)).append(']');
        }
        return "{\n  \"schema\": \"" + LoadReport.SCHEMA + "\",\n  \"points\": [{\"label\":\"run\",\"latency_ms\":{" +
            latency + ",\"tpot\":{\"count\":0}},\"cdf_ms\":{" + cdf + "}}]\n}\n";
    }

    @Test
    void gzipTracesAndReportsAreReadByContent() throws Exception
    {
        final Path real = trace("real.jsonl", 30, 1, "");
        final Path gz = dir.resolve("real.jsonl.gz");
        try (GZIPOutputStream out = new GZIPOutputStream(Files.newOutputStream(gz)))
        {
            out.write(Files.readAllBytes(real));
        }
        final Result traces = compare(gz, real);
        assertTrue(traces.pass(), Calibration.table(traces));
        assertEquals(0.0, metric(traces, Metric.TTFT).ks());

        final Path report = dir.resolve("pred.json.gz");
        try (GZIPOutputStream out = new GZIPOutputStream(Files.newOutputStream(report)))
        {
            out.write(reportOf(LatencySide.read(real)).getBytes(StandardCharsets.UTF_8));
        }
        assertEquals("report", LatencySide.read(report).kind());
    }

    @Test
    void malformedInputNamesTheFileAndLine() throws Exception
    {
        final Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"prompt_tokens\":1,\"output_tokens\":1,\"ttft_ms\":5}\n\n" +
            "{\"prompt_tokens\": oops}\n");
        final TraceFormatException ex = assertThrows(TraceFormatException.class, () -> LatencySide.read(bad));
        assertTrue(ex.getMessage().startsWith(bad + ":3: not valid JSON"), ex.getMessage());

        final Path rule = dir.resolve("rule.jsonl");
        Files.writeString(rule, "{\"prompt_tokens\":1,\"output_tokens\":3,\"ttft_ms\":5}\n");
        final TraceFormatException gaps = assertThrows(TraceFormatException.class, () -> LatencySide.read(rule));
        assertTrue(gaps.getMessage().startsWith(rule + ":1: "), gaps.getMessage());

        final Path report = dir.resolve("broken.json");
        Files.writeString(report, "{\n  \"schema\": \"tapedeck-load-report/1\",\n  oops\n}\n");
        final IllegalArgumentException json = assertThrows(IllegalArgumentException.class,
            () -> LatencySide.read(report));
        assertTrue(json.getMessage().startsWith(report + ":3: not valid JSON"), json.getMessage());

        final Path other = dir.resolve("other.json");
        Files.writeString(other, "{\n  \"schema\": \"guidellm/1\"\n}\n");
        final IllegalArgumentException schema = assertThrows(IllegalArgumentException.class,
            () -> LatencySide.read(other));
        assertTrue(schema.getMessage().startsWith(other + ": neither a trace nor"), schema.getMessage());

        final Path empty = dir.resolve("empty.jsonl");
        Files.writeString(empty, "{\"meta\":{\"model\":\"m\"}}\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LatencySide.read(empty)).getMessage()
            .endsWith(": the trace has no records"));
    }

    @Test
    void specDecodeGapsCountOncePerToken() throws Exception
    {
        final Path spec = dir.resolve("spec.jsonl");
        Files.writeString(spec, "{\"prompt_tokens\":8,\"output_tokens\":6,\"ttft_ms\":20,\"itl_ms\":[30,10]," +
            "\"itl_tokens\":[3,2],\"e2e_ms\":65,\"queue_ms\":4}\n");
        final LatencySide side = LatencySide.read(spec);
        assertEquals(5, side.metrics().get(Metric.ITL).count(), "3 + 2 tokens after the first chunk");
        assertEquals(10.0, side.metrics().get(Metric.ITL).p99Ms());
        assertEquals(65.0, side.metrics().get(Metric.E2E).p50Ms(), "e2e_ms wins over TTFT + gaps (60)");
        assertEquals(9.0, side.metrics().get(Metric.TPOT).p50Ms(), "(65 - 20) / 5");
        assertEquals(4.0, side.metrics().get(Metric.QUEUE).p50Ms());
        assertTrue(side.notes().isEmpty(), side.notes().toString());

        final Path summary = dir.resolve("summary.jsonl");
        Files.writeString(summary, "{\"prompt_tokens\":8,\"output_tokens\":4,\"ttft_ms\":20," +
            "\"itl_summary\":{\"mean_ms\":12.5,\"count\":3}}\n");
        final LatencySide means = LatencySide.read(summary);
        assertEquals(3, means.metrics().get(Metric.ITL).count());
        assertEquals(57.5, means.metrics().get(Metric.E2E).p50Ms(), "20 + 3 x 12.5");
        assertTrue(means.notes().get(1).contains("1 of 1 records have only itl_summary"), means.notes().toString());
    }

    @Test
    void knobFitPassesANarrowTraceAndFailsAHeavyTail() throws Exception
    {
        final StringBuilder narrow = new StringBuilder();
        final StringBuilder heavy = new StringBuilder();
        for (int i = 0; i < 200; i++)
        {
            narrow.append(String.format(Locale.ROOT, "{\"prompt_tokens\":64,\"output_tokens\":3,\"ttft_ms\":%s," +
                "\"itl_ms\":[10,10]}%n", 50 + i % 3));
            heavy.append(String.format(Locale.ROOT, "{\"prompt_tokens\":64,\"output_tokens\":3,\"ttft_ms\":%s," +
                "\"itl_ms\":[10,10]}%n", 0 == i % 20 ? 500 : 50));
        }
        final Path narrowPath = dir.resolve("narrow.jsonl");
        final Path heavyPath = dir.resolve("heavy.jsonl");
        Files.writeString(narrowPath, narrow);
        Files.writeString(heavyPath, heavy);
        final Result ok = knobFit(narrowPath);
        assertEquals("knob-fit", ok.pred().kind());
        assertTrue(ok.pass(), Calibration.table(ok));
        final Result tail = knobFit(heavyPath);
        assertFalse(tail.pass(), Calibration.table(tail));
        assertFalse(metric(tail, Metric.TTFT).pass(), "the knob model cannot reach a 10x tail");
        assertTrue(metric(tail, Metric.ITL).pass());
        assertTrue(tail.pred().notes().get(0).startsWith("TTFT standard deviation"), tail.pred().notes().toString());
        assertEquals(Calibration.table(tail), Calibration.table(knobFit(heavyPath)), "same seed, same draws");
    }

    private static Result knobFit(final Path path) throws Exception
    {
        return KnobFitCheck.check(LatencySide.read(path), TraceReader.readAll(path).records(),
            KnobFitCheck.DEFAULT_REPEAT, 7, Calibration.MODEL_LEVEL_TOLERANCE, Map.of());
    }

    @Test
    void toleranceMustBeAFraction()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> Calibration.tolerances(Map.of("ttfb", 0.1)));
        assertTrue(ex.getMessage().contains("unknown metric 'ttfb'"), ex.getMessage());
        assertNotNull(Calibration.tolerances(Map.of("TTFT", 0.1)).get(Metric.TTFT));
    }
}
