package dev.tapedeck.system;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import dev.tapedeck.cli.Main;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real {@code tapedeck simulate} command (picocli, in-process): a workload file gives a report in {@code load}'s
 * schema, an HTML page and per-request predictions; {@code --sweep} gives one point per engine setting with the
 * Pareto frontier; bad settings exit 2 with one line.
 */
@Timeout(60)
class SimulateCommandIT
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private record Cli(int exitCode, String err)
    {
    }

    private static Cli simulate(final String... args)
    {
        final String[] all = new String[args.length + 2];
        all[0] = "simulate";
        all[1] = "--quiet";
        System.arraycopy(args, 0, all, 2, args.length);
        final CommandLine cli = Main.commandLine();
        final StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        return new Cli(cli.execute(all), err.toString());
    }

    private Path workload() throws Exception
    {
        final List<String> lines = new ArrayList<>();
        for (int i = 0; i < 60; i++)
        {
            lines.add("{\"timestamp\":" + i * 50 + ",\"input_length\":" + (200 + 37 * (i % 9)) +
                ",\"output_length\":" + (20 + i % 7) + ",\"hash_ids\":[" + (i % 3) + "]}");
        }
        final Path file = dir.resolve("w.jsonl");
        Files.write(file, lines);
        return file;
    }

    @Test
    void aWorkloadGivesAReportAPageAndPredictions() throws Exception
    {
        final Path report = dir.resolve("sim.json");
        final Path html = dir.resolve("sim.html");
        final Path trace = dir.resolve("pred.jsonl");
        final Cli cli = simulate("--workload", workload().toString(), "--max-num-seqs", "16", "--report",
            report.toString(), "--html", html.toString(), "--trace-out", trace.toString(), "--slo", "ttft_ms=500");
        assertEquals(0, cli.exitCode(), cli.err());
        final JsonNode root = JSON.readTree(report.toFile());
        assertEquals("tapedeck-load-report/1", root.path("schema").asText());
        assertTrue(root.at("/target/simulated").asBoolean());
        assertEquals(16, root.at("/target/engine/max_num_seqs").asInt());
        final JsonNode point = root.path("points").path(0);
        assertEquals(60, point.at("/requests/completed").asInt());
        assertTrue(point.at("/latency_ms/ttft/p50").asDouble() > 0);
        assertTrue(point.at("/latency_ms/itl/count").asLong() > 0);
        assertTrue(Files.readString(html).contains("<svg"), "the charts");
        assertEquals(61, Files.readAllLines(trace).size(), "a meta line and one record per request");
    }

    @Test
    void speculativeDecodingGivesBurstsInThePredictionsAndShorterRequests() throws Exception
    {
        final Path plain = dir.resolve("plain.json");
        final Path spec = dir.resolve("spec.json");
        final Path trace = dir.resolve("spec.jsonl");
        assertEquals(0, simulate("--workload", workload().toString(), "--max-num-seqs", "16", "--report",
            plain.toString()).exitCode());
        final Cli cli = simulate("--workload", workload().toString(), "--max-num-seqs", "16", "--report",
            spec.toString(), "--trace-out", trace.toString(), "--speculative-config",
            "{\"method\":\"ngram\",\"num_speculative_tokens\":3}", "--spec-acceptance-rate", "1");
        assertEquals(0, cli.exitCode(), cli.err());
        int records = 0;
        for (final String line : Files.readAllLines(trace))
        {
            final JsonNode record = JSON.readTree(line);
            if (record.has("meta"))
            {
                continue;
            }
            records++;
            final int output = record.path("output_tokens").asInt();
            final JsonNode bursts = record.path("itl_tokens");
            assertTrue(bursts.isArray(), "itl_tokens recorded: " + line);
            int sum = 0;
            for (int i = 0; i < bursts.size(); i++)
            {
                final int tokens = bursts.get(i).asInt();
                assertTrue(4 == tokens || i == bursts.size() - 1, "K + 1 = 4 tokens per step, the last cut: " +
                    line);
                sum += tokens;
            }
            assertEquals(output - 1, sum, "the first token, then the bursts: " + line);
        }
        assertEquals(60, records);
        final double plainE2e = JSON.readTree(plain.toFile()).at("/points/0/latency_ms/e2e/p50").asDouble();
        final double specE2e = JSON.readTree(spec.toFile()).at("/points/0/latency_ms/e2e/p50").asDouble();
        assertTrue(specE2e < plainE2e * 0.5, "4 tokens a step: e2e p50 " + specE2e + " vs " + plainE2e);
    }

    @Test
    void aSweepGivesAPointPerSettingAndTheParetoFrontier() throws Exception
    {
        final Path report = dir.resolve("sweep.json");
        final Cli cli = simulate("--workload", workload().toString(), "--sweep", "max-num-seqs=1,4,32", "--report",
            report.toString());
        assertEquals(0, cli.exitCode(), cli.err());
        final JsonNode root = JSON.readTree(report.toFile());
        assertEquals("max-num-seqs", root.path("sweep").asText());
        assertEquals(3, root.path("points").size());
        assertEquals("max-num-seqs=1", root.at("/points/0/label").asText());
        assertTrue(root.at("/points/0/latency_ms/ttft/p50").asDouble() >
            root.at("/points/2/latency_ms/ttft/p50").asDouble(), "one sequence at a time queues");
        assertTrue(root.path("pareto").size() >= 1);
    }

    @Test
    void aPredictionAndAnotherRunAreComparedSideBySide() throws Exception
    {
        final Path one = dir.resolve("one.json");
        final Path many = dir.resolve("many.json");
        assertEquals(0, simulate("--workload", workload().toString(), "--max-num-seqs", "1", "--report",
            one.toString()).exitCode());
        assertEquals(0, simulate("--workload", workload().toString(), "--max-num-seqs", "32", "--report",
            many.toString()).exitCode());
        final CommandLine cli = Main.commandLine();
        final StringWriter out = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        assertEquals(0, cli.execute("inspect", "report", one.toString(), "--compare", many.toString()));
        final String text = out.toString();
        assertTrue(text.contains("first points") && text.contains("TTFT p99 ms"), text);
        final String ttftLine = text.lines().filter(l -> l.startsWith("TTFT p50 ms")).findFirst().orElseThrow();
        assertTrue(ttftLine.contains("-"), "32 sequences wait less than one at a time: " + ttftLine);
    }

    @Test
    void badSettingsExitTwoWithOneLine() throws Exception
    {
        final Cli sweepAndTrace = simulate("--workload", workload().toString(), "--sweep", "max-num-seqs=1,2",
            "--trace-out", dir.resolve("x.jsonl").toString());
        assertEquals(2, sweepAndTrace.exitCode());
        assertTrue(sweepAndTrace.err().contains("--trace-out"), sweepAndTrace.err());
        final Cli unknown = simulate("--workload", workload().toString(), "--sweep", "max-model-len=1,2");
        assertEquals(2, unknown.exitCode());
        assertTrue(unknown.err().contains("--sweep varies one of"), unknown.err());
        final Cli missing = simulate("--workload", dir.resolve("nope.jsonl").toString());
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().contains("nope.jsonl"), missing.err());
    }
}
