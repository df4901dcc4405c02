package dev.tapedeck.system;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.http.TestServer;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real {@code tapedeck load} command (picocli, in-process) against an in-process {@code serve}: every mode ends
 * where its limits say, SLOs decide goodput, warm-up requests are sent but not measured, a sweep gives one labelled
 * point per level, and the JSON report has every documented field with its type (docs/load-report-schema.md).
 */
@Timeout(60)
class LoadCommandIT
{
    private static final String[] STATS = {"count", "mean", "min", "p50", "p90", "p95", "p99", "p999", "max"};
    private static TestServer server;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception
    {
        server = LoadHarness.longContextServer();
    }

    @AfterAll
    static void stop()
    {
        server.close();
    }

    private JsonNode load(final String... extra) throws Exception
    {
        final Path report = dir.resolve("report-" + System.nanoTime() + ".json");
        final List<String> args = new ArrayList<>(List.of("--url", "http://127.0.0.1:" + server.ports.get(0),
            "--prompt-tokens", "20..60", "--output-tokens", "4", "--ignore-eos", "--report", report.toString(),
            "--quiet"));
        args.addAll(List.of(extra));
        final LoadHarness.Cli cli = LoadHarness.load(args.toArray(String[]::new));
        assertEquals(0, cli.exitCode(), cli.err());
        return LoadHarness.readReport(report);
    }

    private static void assertNoFailures(final JsonNode point)
    {
        assertEquals(0, point.path("requests").path("failed").asLong(), point.path("errors").toString());
        assertTrue(point.path("errors").isEmpty(), point.path("errors").toString());
    }

    @Test
    void shouldWriteEveryDocumentedFieldOfASweepReport() throws Exception
    {
        final JsonNode report = load("--sweep", "concurrency=1,4", "--max-requests", "12", "--slo",
            "ttft_ms=60000,e2e_ms=60000");
        assertEquals("tapedeck-load-report/1", report.path("schema").textValue());
        assertTrue(report.path("tapedeck_version").isTextual());
        Instant.parse(report.path("created").textValue());
        final JsonNode target = report.path("target");
        assertEquals("http://127.0.0.1:" + server.ports.get(0), target.path("url").textValue());
        assertEquals(TestServer.MODEL, target.path("model").textValue(), "the first of /v1/models");
        assertEquals("/v1/completions", target.path("endpoint").textValue());
        assertTrue(target.path("stream").isBoolean());
        assertTrue(report.path("options").isObject());
        assertEquals("concurrency=1,4", report.path("options").path("sweep").textValue());
        assertEquals(60000.0, report.path("slo").path("ttft_ms").doubleValue());
        assertEquals(60000.0, report.path("slo").path("e2e_ms").doubleValue());
        assertEquals("concurrency", report.path("sweep").textValue());
        assertTrue(report.path("pareto").isArray() && report.path("pareto").size() >= 1);
        final JsonNode points = report.path("points");
        assertEquals(2, points.size());
        assertEquals("concurrency=1", points.path(0).path("label").textValue());
        assertEquals("concurrency=4", points.path(1).path("label").textValue());
        assertEquals(1.0, points.path(0).path("level").doubleValue());
        assertEquals(4.0, points.path(1).path("level").doubleValue());
        for (final JsonNode point : points)
        {
            assertPoint(point, 12);
        }
    }

    /**
     * Every field of a point, with its type, for a run that completed {@code completed} requests without errors.
     */
    private static void assertPoint(final JsonNode point, final int completed)
    {
        assertTrue(point.path("plan").isTextual());
        assertTrue(point.path("measured_seconds").isNumber() && point.path("measured_seconds").doubleValue() > 0);
        final JsonNode requests = point.path("requests");
        for (final String key : new String[] {"sent", "measured", "completed", "failed"})
        {
            assertTrue(requests.path(key).isIntegralNumber(), key);
        }
        assertEquals(completed, requests.path("sent").asLong());
        assertEquals(completed, requests.path("measured").asLong());
        assertEquals(completed, requests.path("completed").asLong());
        assertNoFailures(point);
        assertTrue(point.path("errors").isObject());
        for (final String key : new String[] {"requests_per_s", "output_tokens_per_s", "prompt_tokens_per_s",
            "total_tokens_per_s"})
        {
            assertTrue(point.path("throughput").path(key).isNumber(), key);
            assertTrue(point.path("throughput").path(key).doubleValue() > 0, key);
        }
        assertTrue(point.path("goodput").path("requests_per_s").isNumber());
        assertEquals(1.0, point.path("goodput").path("fraction").doubleValue(), "everybody meets 60 s");
        final JsonNode tokens = point.path("tokens");
        assertTrue(tokens.path("prompt_total").isIntegralNumber());
        assertEquals(completed * 4L, tokens.path("output_total").longValue());
        assertTrue(tokens.path("prompt_mean").isNumber() && tokens.path("output_mean").isNumber());
        assertEquals(4.0, tokens.path("output_mean").doubleValue());
        final JsonNode latency = point.path("latency_ms");
        for (final String metric : new String[] {"ttft", "itl", "itl_request_mean", "tpot", "e2e",
            "dispatch_lateness"})
        {
            for (final String stat : STATS)
            {
                assertTrue(latency.path(metric).path(stat).isNumber(), metric + "." + stat + " in " + latency);
            }
            final JsonNode d = latency.path(metric);
            assertTrue(d.path("min").doubleValue() <= d.path("p50").doubleValue() &&
                d.path("p50").doubleValue() <= d.path("p99").doubleValue() &&
                d.path("p99").doubleValue() <= d.path("max").doubleValue(), metric + " is ordered: " + d);
        }
        assertEquals(completed, latency.path("ttft").path("count").longValue());
        final long gaps = latency.path("itl").path("count").longValue();
        assertTrue(gaps > 0 && gaps <= completed * 3L, "one gap per token after each first chunk: " + gaps);
        for (final String metric : new String[] {"ttft", "itl", "e2e"})
        {
            final JsonNode cdf = point.path("cdf_ms").path(metric);
            assertEquals(104, cdf.size(), metric);
            double previous = -1;
            for (final JsonNode pair : cdf)
            {
                assertEquals(2, pair.size());
                assertTrue(pair.path(0).isNumber() && pair.path(1).isNumber());
                assertTrue(pair.path(1).doubleValue() > previous, "fractions increase");
                previous = pair.path(1).doubleValue();
            }
            assertEquals(1.0, previous);
        }
        final JsonNode timeline = point.path("timeline");
        assertTrue(timeline.isArray() && timeline.size() >= 1);
        long started = 0;
        long done = 0;
        for (int t = 0; t < timeline.size(); t++)
        {
            final JsonNode row = timeline.path(t);
            assertEquals(t, row.path("t").intValue());
            for (final String key : new String[] {"started", "completed", "output_tokens", "errors", "in_flight"})
            {
                assertTrue(row.path(key).isIntegralNumber(), key);
            }
            started += row.path("started").longValue();
            done += row.path("completed").longValue();
        }
        assertEquals(completed, started);
        assertEquals(completed, done);
        assertTrue(point.path("notes").isArray());
    }

    @Test
    void shouldWriteARunReportWithoutSweepFields() throws Exception
    {
        final JsonNode report = load("--concurrency", "3", "--max-requests", "9");
        assertFalse(report.has("sweep"));
        assertFalse(report.has("pareto"));
        assertTrue(report.path("slo").isObject() && report.path("slo").isEmpty());
        final JsonNode point = report.path("points").path(0);
        assertEquals("run", point.path("label").textValue());
        assertFalse(point.has("level"));
        assertPoint(point, 9);
    }

    @Test
    void shouldSweepRates() throws Exception
    {
        final JsonNode report = load("--sweep", "rate=20,40", "--arrivals", "constant", "--duration", "0.5s");
        assertEquals("rate", report.path("sweep").textValue());
        assertEquals("rate=20", report.path("points").path(0).path("label").textValue());
        for (int i = 0; i < 2; i++)
        {
            final JsonNode point = report.path("points").path(i);
            assertNoFailures(point);
            assertEquals(10 * (i + 1), point.path("requests").path("completed").asLong(), "every planned arrival " +
                "of the level is sent, even when dispatched late: " + point.path("latency_ms"));
        }
    }

    @Test
    void shouldGiveGoodputZeroWhenNobodyMeetsTheSlo() throws Exception
    {
        final JsonNode point = load("--concurrency", "2", "--max-requests", "6", "--slo", "ttft_ms=0.001")
            .path("points").path(0);
        assertNoFailures(point);
        assertEquals(6, point.path("requests").path("completed").asLong());
        assertEquals(0.0, point.path("goodput").path("fraction").doubleValue());
        assertEquals(0.0, point.path("goodput").path("requests_per_s").doubleValue());
    }

    @Test
    void shouldGiveGoodputOneWhenEverybodyMeetsTheSlo() throws Exception
    {
        final JsonNode point = load("--concurrency", "2", "--max-requests", "6", "--slo",
            "ttft_ms=60000,itl_ms=60000,tpot_ms=60000,e2e_ms=60000").path("points").path(0);
        assertEquals(1.0, point.path("goodput").path("fraction").doubleValue());
        assertEquals(point.path("throughput").path("requests_per_s").doubleValue(),
            point.path("goodput").path("requests_per_s").doubleValue());
    }

    @Test
    void shouldSendButNotMeasureTheWarmup() throws Exception
    {
        // constant 40/s for 1 s: 40 requests at 0, 25, ..., 975 ms; the 20 before 500 ms are warm-up
        final JsonNode point = load("--rate", "40", "--arrivals", "constant", "--duration", "1s", "--warmup",
            "500ms").path("points").path(0);
        assertNoFailures(point);
        assertEquals(40, point.path("requests").path("sent").asLong());
        assertEquals(20, point.path("requests").path("measured").asLong());
        assertEquals(20, point.path("requests").path("completed").asLong());
        assertEquals(20, point.path("latency_ms").path("ttft").path("count").asLong());
        long started = 0;
        for (final JsonNode row : point.path("timeline"))
        {
            started += row.path("started").asLong();
        }
        assertEquals(40, started, "the timeline shows warm-up traffic too");
        assertTrue(point.path("measured_seconds").doubleValue() < 1.5, point.toString());
    }

    @Test
    void shouldStopAtMaxRequests() throws Exception
    {
        final JsonNode open = load("--rate", "200", "--duration", "10s", "--max-requests", "10").path("points")
            .path(0);
        assertEquals(10, open.path("requests").path("sent").asLong());
        assertEquals(10, open.path("requests").path("completed").asLong());
        final JsonNode closed = load("--concurrency", "4", "--max-requests", "7").path("points").path(0);
        assertEquals(7, closed.path("requests").path("sent").asLong());
        assertEquals(7, closed.path("requests").path("completed").asLong());
        final Path workload = TraceTestData.path("workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv");
        final JsonNode replay = load("--workload", workload.toString(), "--time-scale", "0.001", "--max-requests",
            "15").path("points").path(0);
        assertNoFailures(replay);
        assertEquals(15, replay.path("requests").path("sent").asLong());
        assertEquals(15, replay.path("requests").path("completed").asLong());
    }

    @Test
    void shouldStopAtMaxSeconds() throws Exception
    {
        final long startNs = System.nanoTime();
        final JsonNode closed = load("--concurrency", "2", "--max-seconds", "0.5").path("points").path(0);
        assertNoFailures(closed);
        assertTrue(closed.path("requests").path("completed").asLong() > 2, closed.toString());
        assertTrue(closed.path("measured_seconds").doubleValue() < 2, closed.toString());
        final JsonNode open = load("--rate", "10", "--arrivals", "constant", "--duration", "60s", "--max-seconds",
            "0.5").path("points").path(0);
        final long sent = open.path("requests").path("sent").asLong();
        assertTrue(5 == sent || 6 == sent, "arrivals at 0..500 ms of a 60 s plan: " + sent);
        final Path workload = TraceTestData.path("workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv");
        final JsonNode replay = load("--workload", workload.toString(), "--max-seconds", "0.5").path("points")
            .path(0);
        assertTrue(replay.path("requests").path("sent").asLong() >= 1);
        assertTrue(System.nanoTime() - startNs < 20_000_000_000L, "a 57-minute trace stopped after 0.5 s");
    }
}
