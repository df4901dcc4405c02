package dev.tapedeck.cli.inspect;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.kv.KvCapacity;
import dev.tapedeck.latency.RooflineProfile;
import dev.tapedeck.load.LoadReport;
import dev.tapedeck.load.LoadReportSamples;
import dev.tapedeck.testing.CliRun;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck inspect calibrate} in-process: the table, JSON and HTML outputs, and the exit codes (0 every gate
 * passes, 1 a gate fails, 2 bad input with one line naming the file and line).
 */
class CalibrateCommandTest
{
    @TempDir
    Path dir;

    private static CliRun run(final String... args)
    {
        return CliRun.of(args);
    }

    private Path trace(final String name, final double ttftScale) throws Exception
    {
        final StringBuilder out = new StringBuilder("{\"meta\":{\"model\":\"m\",\"source\":\"test\"}}\n");
        for (int i = 0; i < 40; i++)
        {
            out.append(String.format(Locale.ROOT, "{\"prompt_tokens\":%d,\"output_tokens\":4,\"ttft_ms\":%s," +
                "\"itl_ms\":[12,%d,14],\"arrival_ms\":%d,\"concurrency\":3}%n", 50 + i, (30 + i % 9 * 5) * ttftScale,
                10 + i % 4, 50 * i));
        }
        final Path path = dir.resolve(name);
        Files.writeString(path, out, StandardCharsets.UTF_8);
        return path;
    }

    @Test
    void identicalTracesPassWithExitZeroAndWriteJsonAndHtml() throws Exception
    {
        final Path real = trace("real.jsonl", 1);
        final Path json = dir.resolve("out/cal.json");
        final Path html = dir.resolve("out/cal.html");
        final CliRun result = run("inspect", "calibrate", real.toString(), real.toString(), "--json", json.toString(),
            "--html", html.toString());
        assertEquals(0, result.exitCode(), result.out() + result.err());
        final String[] lines = result.out().split("\n");
        assertEquals("PRED: " + real + " (trace, 40 requests)", lines[0]);
        assertTrue(lines[2].startsWith("metric  stat") && lines[2].contains("rel err") && lines[2].contains("gate"),
            lines[2]);
        assertTrue(result.out().contains(
            "TTFT    p99                70.00        70.00     +0.0%   25.0%  pass\n"), result.out());
        assertTrue(result.out().contains("\nTTFT    KS D" + " ".repeat(38) +
            "0.000          (5% critical value 0.304)\n"), result.out());
        assertTrue(result.out().contains("\nTTFT    mean               48.75        48.75     +0.0%\n"), result.out());
        assertTrue(result.out().contains("pairing: by arrival_order, 40 pairs"), result.out());
        assertTrue(result.out().contains("result: PASS"), result.out());
        assertTrue(result.out().endsWith("json: " + json + "\nhtml: " + html + "\n"), result.out());

        final JsonNode node = new ObjectMapper().readTree(json.toFile());
        assertEquals("tapedeck-calibration/1", node.path("schema").asText());
        assertTrue(node.path("pass").asBoolean());
        assertEquals(4, node.path("metrics").size(), "ttft, itl, e2e, tpot");
        assertEquals(0.0, node.path("metrics").get(0).path("ape").path("median").asDouble(-1));
        final String page = Files.readString(html);
        assertEquals(6, page.split("<svg ", -1).length - 1);
        assertTrue(page.contains("<span class=\"pass\">PASS</span>"));
    }

    @Test
    void aShiftedDistributionFailsWithExitOneNamingTheMetric() throws Exception
    {
        final Path real = trace("real.jsonl", 1);
        final Path pred = trace("pred.jsonl", 1.2);
        final CliRun loose = run("inspect", "calibrate", pred.toString(), real.toString());
        assertEquals(0, loose.exitCode(), "20% slower TTFT is within the end-to-end default of 25%: " + loose.out());

        final CliRun strict = run("inspect", "calibrate", pred.toString(), real.toString(), "--tolerance", "0.1");
        assertEquals(1, strict.exitCode(), strict.out());
        assertTrue(strict.out().contains("result: FAIL: TTFT: largest p50/p90/p99 error 16.7% > tolerance 10.0%"),
            strict.out());
        assertTrue(strict.out().contains("TTFT    p50                54.00        45.00    +16.7%   10.0%  FAIL\n"),
            strict.out());

        final CliRun perMetric = run("inspect", "calibrate", pred.toString(), real.toString(), "--tolerance", "0.1",
            "--metric-tolerance", "ttft=0.2,e2e=0.2");
        assertEquals(0, perMetric.exitCode(), perMetric.out());
        final CliRun strictTtft = run("inspect", "calibrate", pred.toString(), real.toString(),
            "--metric-tolerance", "ttft=0.05");
        assertEquals(1, strictTtft.exitCode(), strictTtft.out());
    }

    @Test
    void aTraceAgainstALoadReport() throws Exception
    {
        final Path report = dir.resolve("run.json");
        LoadReport.write(LoadReportSamples.sweep(), report);
        final Path real = trace("real.jsonl", 1);
        final CliRun result = run("inspect", "calibrate", report.toString(), real.toString());
        assertEquals(1, result.exitCode(), result.out() + result.err());
        assertTrue(result.out().startsWith("PRED: " + report + " (report)\n"), result.out());
        assertTrue(result.out().contains("pairing: none (per-request values are needed on both sides"),
            result.out());
        assertFalse(result.out().contains("KS D"), "a report has no samples: " + result.out());
        assertTrue(result.out().contains("note: " + report + ": the report has 3 points; the first " +
            "('concurrency=1') is used"), result.out());
    }

    @Test
    void oneTraceIsReplayedThroughTheEngine() throws Exception
    {
        final Path demo = dir.resolve("demo.jsonl");
        assertEquals(0, run("inspect", "gen-demo", "-o", demo.toString(), "--records", "150", "--fast", "--seed", "5")
            .exitCode());
        final Path json = dir.resolve("replay.json");
        final CliRun same = run("inspect", "calibrate", demo.toString(), "--json", json.toString());
        assertEquals(0, same.exitCode(), "gen-demo's own engine settings and step model: " + same.out() + same.err());
        assertTrue(same.out().startsWith("PRED: replay of " + demo + " through step model dense-8b-rtxpro6000: "),
            same.out());
        assertFalse(same.out().contains("-0.0%"), same.out());
        assertTrue(same.out().contains("pairing: by request_id, 150 pairs"), same.out());
        assertTrue(same.out().contains("  10.0%  pass"), "model-level default tolerance: " + same.out());
        final JsonNode node = new ObjectMapper().readTree(json.toFile());
        assertEquals("replay", node.path("mode").asText());
        assertTrue(node.path("metrics").get(0).path("ape").path("median").asDouble() < 0.01, node.toString());

        final CliRun bigger = run("inspect", "calibrate", demo.toString(), "--step-profile",
            "dense-32b-tp2-rtxpro6000");
        assertEquals(1, bigger.exitCode(), bigger.out() + bigger.err());
        assertTrue(bigger.out().contains("result: FAIL: TTFT: largest p50/p90/p99 error "), bigger.out());
        assertTrue(bigger.out().contains("ITL: largest p50/p90/p99 error "), bigger.out());

        final Path noArrivals = dir.resolve("no-arrivals.jsonl");
        Files.writeString(noArrivals, "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":3}\n");
        final CliRun none = run("inspect", "calibrate", noArrivals.toString());
        assertEquals(2, none.exitCode());
        assertEquals("tapedeck calibrate: error: " + noArrivals + ": no record has arrival_ms: a replay needs " +
            "arrival times", none.err().strip());
    }

    @Test
    void oneTraceIsReplayedOnTheDeploymentSimulateWouldChooseWithItsKvCacheAndFrontend() throws Exception
    {
        final Path demo = dir.resolve("demo.jsonl");
        assertEquals(0, run("inspect", "gen-demo", "-o", demo.toString(), "--records", "60", "--fast", "--seed", "5")
            .exitCode());
        final Path ttftJson = dir.resolve("physics.json");
        final CliRun physics = run("inspect", "calibrate", demo.toString(), "--gpu", "H100", "--model",
            "meta-llama/Llama-2-7b-hf", "--json", ttftJson.toString());
        assertEquals(1, physics.exitCode(), "an RTX PRO 6000 8B trace is no H100 Llama-2-7B: " + physics.out() +
            physics.err());
        final RooflineProfile profile = RooflineProfile.named("llama-2-7b-tp1-h100");
        final String line = physics.out().lines().findFirst().orElseThrow();
        assertTrue(line.startsWith("PRED: replay of " + demo + " through roofline step model: " +
            "meta-llama/Llama-2-7b-hf on 1x H100, llama-2-7b-tp1-h100: "), line);
        assertTrue(line.contains(String.format(Locale.ROOT, "KV cache %d blocks, frontend delay %.1f ms, " +
            "spread %.2f, seed 0)", KvCapacity.blocks(profile.model(), profile.gpu(), 1, 0.9, 16),
            profile.frontendDelayNs() / 1e6, profile.frontendDelayJitter())), "the profile's KV cache (7,461 " +
            "blocks, not the default 33,600) and frontend: " + line);

        final CliRun named = run("inspect", "calibrate", demo.toString(), "--step-profile", "llama-2-7b-tp1-h100");
        assertEquals(line, named.out().lines().findFirst().orElseThrow(), "naming the profile is the same");
        final Path llama = dir.resolve("llama.jsonl");
        Files.writeString(llama, Files.readString(demo).replace("synthetic/dense-8b", "meta-llama/Llama-2-7b-hf"));
        assertEquals(line.replace(demo.toString(), llama.toString()), run("inspect", "calibrate", llama.toString())
            .out().lines().findFirst().orElseThrow(), "the trace's model is the default --model: its measured profile");
        assertTrue(run("inspect", "calibrate", demo.toString(), "--max-num-seqs", "64").out()
            .contains("(max-num-seqs 64, "), "a flag wins over the trace's max_num_seqs");

        // a constant delay moves every request by the same time: the replay's TTFT is the profile's delay longer
        final Path constant = dir.resolve("constant.json");
        final Path none = dir.resolve("none.json");
        run("inspect", "calibrate", demo.toString(), "--step-profile", "llama-2-7b-tp1-h100",
            "--frontend-delay-jitter", "0", "--json", constant.toString());
        run("inspect", "calibrate", demo.toString(), "--step-profile", "llama-2-7b-tp1-h100",
            "--frontend-delay", "0", "--json", none.toString());
        assertEquals(profile.frontendDelayNs() / 1e6, predMeanTtftMs(constant) - predMeanTtftMs(none), 0.01);
    }

    private static double predMeanTtftMs(final Path json) throws Exception
    {
        for (final JsonNode metric : new ObjectMapper().readTree(json.toFile()).path("metrics"))
        {
            if ("ttft".equalsIgnoreCase(metric.path("metric").asText()))
            {
                return metric.path("pred").path("mean").asDouble();
            }
        }
        throw new AssertionError("no TTFT in " + json);
    }

    @Test
    void oneTraceRunsTheKnobFitCheck() throws Exception
    {
        final CliRun result = run("inspect", "calibrate", TraceTestData.path(
            "vllm-vcr-fixtures/batch_context_trace.jsonl").toString(), "--against", "knob-fit", "--seed", "3");
        assertTrue(result.exitCode() <= 1, result.err());
        assertTrue(result.out().startsWith("PRED: knob fit of "), result.out());
        assertTrue(result.out().contains("10 draws per record, seed 3) (knob-fit)"), result.out());
        assertTrue(result.out().contains("  10.0%  "), "model-level default tolerance: " + result.out());
        assertTrue(result.out().contains("pairing: none (the knob fit draws every request independently"),
            result.out());

        final Path report = dir.resolve("run.json");
        LoadReport.write(LoadReportSamples.sweep(), report);
        final CliRun notATrace = run("inspect", "calibrate", report.toString());
        assertEquals(2, notATrace.exitCode());
        assertTrue(notATrace.err().startsWith("tapedeck calibrate: error: " + report + ": one file must be a trace"),
            notATrace.err());
    }

    @Test
    void badInputExitsTwoWithOneLineNamingFileAndLine() throws Exception
    {
        final Path real = trace("real.jsonl", 1);
        final Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"prompt_tokens\":1,\"output_tokens\":1,\"ttft_ms\":5}\n" +
            "{\"prompt_tokens\":2,\"output_tokens\":1,\"ttft_ms\":-5}\n");
        final CliRun result = run("inspect", "calibrate", bad.toString(), real.toString());
        assertEquals(2, result.exitCode(), result.out());
        assertTrue(result.err().startsWith("tapedeck calibrate: error: " + bad + ":2: "), result.err());
        assertEquals(1, result.err().strip().split("\n").length, result.err());
        assertEquals("", result.out());

        final Path missing = dir.resolve("missing.jsonl");
        final CliRun none = run("inspect", "calibrate", real.toString(), missing.toString());
        assertEquals(2, none.exitCode());
        assertEquals("tapedeck calibrate: error: " + missing + ": no such file", none.err().strip());

        final CliRun tolerance = run("inspect", "calibrate", real.toString(), real.toString(), "--tolerance", "10");
        assertEquals(2, tolerance.exitCode());
        assertTrue(tolerance.err().contains("tolerance must be in (0, 1]"), tolerance.err());

        final CliRun metric = run("inspect", "calibrate", real.toString(), real.toString(), "--metric-tolerance",
            "ttfb=0.1");
        assertEquals(2, metric.exitCode());
        assertTrue(metric.err().contains("unknown metric 'ttfb'"), metric.err());

        final CliRun three = run("inspect", "calibrate", real.toString(), real.toString(), real.toString());
        assertEquals(2, three.exitCode(), "picocli rejects a third file");
    }

    @Test
    void isListedUnderInspectWithHelp()
    {
        final CliRun help = run("inspect", "calibrate", "--help");
        assertEquals(0, help.exitCode());
        assertTrue(help.out().startsWith("Usage: tapedeck inspect calibrate"), help.out());
        assertTrue(help.out().contains("--metric-tolerance"));
        assertTrue(run("inspect", "--help").out().contains("calibrate"));
    }
}
