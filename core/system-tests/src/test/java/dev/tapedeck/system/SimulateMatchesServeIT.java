package dev.tapedeck.system;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.capture.CaptureSettings;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.simulate.Simulate;
import dev.tapedeck.simulate.SimulateContext;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code simulate} runs the steps {@code serve} runs: one workload, replayed by {@code load} against a real server
 * (its self-capture records every request) and run by {@code simulate} in virtual time (its {@code --trace-out}),
 * gives per request the same prompt, output and cached tokens, the same number of token gaps, and the same TTFT and
 * gaps up to the real-time driver's lateness. The requests come one at a time (each alone in the engine, so a real
 * client's send jitter cannot change a step's batch) and share prefix blocks, so the prefix cache is compared too.
 * And {@code simulate} is deterministic: the same settings give the same report and trace bytes.
 */
@Timeout(120)
class SimulateMatchesServeIT
{
    /**
     * What a real server adds before its engine sees a request (HTTP parsing, the prompt's ids, the event loop: a few
     * ms, 30 while the JIT warms up); a step of the test model is 1 ms, its prefill 0.2 ms a token, so a prompt's
     * prefill (about 220 ms) or a prefix hit (about 200 ms less) is far outside it.
     */
    private static final double FRONTEND_MS = 100;
    /** The token gaps are the model's step durations on both sides: equal up to float rounding of the clocks. */
    private static final double GAP_MS = 0.01;

    @TempDir
    Path dir;

    private Path workload() throws Exception
    {
        // mooncake lines: 512-token hash ids, so the even requests share their first 1,024 tokens with request 0; each
        // request is done (a 220 ms prefill at most, then 6 to 13 steps of 1 ms) before the next arrives
        final List<String> lines = new ArrayList<>();
        for (int i = 0; i < 8; i++)
        {
            final String hashIds = 0 == i ? "[0,1]" : i % 2 == 0 ? "[0,1,1" + i + "]" : "[9" + i + "]";
            lines.add("{\"timestamp\":" + i * 400 + ",\"input_length\":" + (1100 + 10 * i) + ",\"output_length\":" +
                (6 + i) + ",\"hash_ids\":" + hashIds + "}");
        }
        final Path file = dir.resolve("workload.jsonl");
        Files.write(file, lines);
        return file;
    }

    private static EngineConfig engine()
    {
        return new EngineConfig().maxModelLen(4096).latencyModel(new StepLatencyModel(
            new StepCoefficients("test-prefill-heavy", 1000, 200, 5, 0, 0, "tests")));
    }

    private static List<TraceRecord> byArrival(final Path trace) throws Exception
    {
        final List<TraceRecord> records = new ArrayList<>(TraceReader.readAll(trace).records());
        records.sort(Comparator.comparingDouble(TraceRecord::arrivalMs));
        return records;
    }

    @Test
    void simulateGivesServesStepsForTheSameWorkload() throws Exception
    {
        final Path workload = workload();
        final Path served = dir.resolve("served.jsonl");
        try (TestServer server = new TestServer(TestServer.context().engine(engine())
            .capture(new CaptureSettings(served, false, 16))))
        {
            final LoadHarness.Cli cli = LoadHarness.load("--url", "http://127.0.0.1:" + server.ports.get(0),
                "--workload", workload.toString(), "--prompt-format", "tokens", "--ignore-eos", "--quiet");
            assertEquals(0, cli.exitCode(), cli.err());
        }
        final Path simulated = dir.resolve("simulated.jsonl");
        Simulate.run(new SimulateContext().workload(workload).ignoreEos(true).engine(engine())
            .tokenizer(TestServer.tokenizer()).traceOut(simulated));

        final List<TraceRecord> real = byArrival(served);
        final List<TraceRecord> predicted = byArrival(simulated);
        assertEquals(8, real.size());
        assertEquals(8, predicted.size());
        long cached = 0;
        for (int i = 0; i < 8; i++)
        {
            final TraceRecord r = real.get(i);
            final TraceRecord p = predicted.get(i);
            final String which = "request " + i;
            assertEquals(r.promptTokens(), p.promptTokens(), which);
            assertEquals(r.outputTokens(), p.outputTokens(), which);
            assertEquals(r.cachedTokens(), p.cachedTokens(), which + ": the same prefix-cache hits");
            cached += p.cachedTokens();
            assertEquals(r.itlMs().length, p.itlMs().length, which);
            assertTrue(r.ttftMs() >= p.ttftMs() - GAP_MS && r.ttftMs() - p.ttftMs() < FRONTEND_MS,
                which + " TTFT: served " + r.ttftMs() + " ms, simulated " + p.ttftMs() + " ms");
            for (int g = 0; g < p.itlMs().length; g++)
            {
                assertEquals(r.itlMs()[g], p.itlMs()[g], GAP_MS, which + " gap " + g);
            }
        }
        assertTrue(cached >= 3 * 1024, "the shared prefixes hit in both: " + cached);
    }

    @Test
    void theSameSettingsGiveTheSameBytes() throws Exception
    {
        final Path workload = workload();
        final byte[][] reports = new byte[2][];
        final byte[][] traces = new byte[2][];
        for (int run = 0; run < 2; run++)
        {
            final Path report = dir.resolve("report-" + run + ".json");
            final Path trace = dir.resolve("trace-" + run + ".jsonl");
            final JsonNode result = Simulate.run(new SimulateContext().workload(workload).engine(engine())
                .tokenizer(TestServer.tokenizer()).seed(7).report(report).traceOut(trace));
            assertEquals(8, result.at("/points/0/requests/completed").asInt());
            reports[run] = Files.readAllBytes(report);
            traces[run] = Files.readAllBytes(trace);
        }
        assertArrayEquals(reports[0], reports[1], "the report");
        assertArrayEquals(traces[0], traces[1], "the predictions");
    }
}
