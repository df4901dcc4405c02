package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepProfileFile;
import dev.tapedeck.latency.fit.MeasuredRequest;
import dev.tapedeck.latency.fit.StepModelFit;
import dev.tapedeck.latency.fit.TraceGapFit;
import dev.tapedeck.testing.CliRun;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect fit}'s sources in-process: exactly one of --blis, --requests, --trace; --requests and --trace write
 * what their fits give, with provenance; bad input exits 2 naming the file.
 */
class FitCommandTest
{
    @TempDir
    Path dir;

    private Path requestsFile() throws IOException
    {
        final Random random = new Random(11);
        final StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 60; i++)
        {
            final int input = 100 + random.nextInt(1900);
            final int output = 25 + random.nextInt(200);
            final double queued = i * 0.4 + random.nextDouble() * 0.2;
            final double scheduled = queued + random.nextDouble() * 0.05;
            final double first = scheduled + 0.015 + input * 3e-5;
            final double last = first + (output - 1) * (0.012 + random.nextDouble() * 0.004);
            lines.append(String.format(Locale.ROOT, "{\"input_toks\":%d,\"output_toks\":%d,\"queued_ts\":%.6f," +
                "\"scheduled_ts\":%.6f,\"first_token_ts\":%.6f,\"last_token_ts\":%.6f}%n", input, output, queued,
                scheduled, first, last));
        }
        final Path file = dir.resolve("run-a").resolve("requests.jsonl");
        Files.createDirectories(file.getParent());
        Files.writeString(file, lines);
        return file;
    }

    @Test
    void shouldNeedExactlyOneSource() throws IOException
    {
        final String out = dir.resolve("p.json").toString();
        final CliRun none = CliRun.of("inspect", "fit", "--out", out);
        assertEquals(2, none.exitCode());
        assertTrue(none.err().contains("--blis") && none.err().contains("--requests") &&
            none.err().contains("--trace"), none.err());
        final CliRun two = CliRun.of("inspect", "fit", "--requests", requestsFile().toString(), "--trace",
            fixture("batch_context_trace.jsonl"), "--out", out);
        assertEquals(2, two.exitCode());
        assertTrue(two.err().contains("mutually exclusive"), two.err());
        final CliRun noModel = CliRun.of("inspect", "fit", "--blis", dir.toString(), "--out", out);
        assertEquals(2, noModel.exitCode());
        assertTrue(noModel.err().contains("--blis needs --model"), noModel.err());
        final CliRun strayModel = CliRun.of("inspect", "fit", "--requests", requestsFile().toString(), "--model", "x",
            "--out", out);
        assertEquals(2, strayModel.exitCode());
        assertTrue(strayModel.err().contains("--model and --roofline go with --blis only"), strayModel.err());
        assertTrue(Files.notExists(Path.of(out)));
    }

    @Test
    void shouldWriteWhatStepModelFitGivesForRequests() throws IOException
    {
        final Path requests = requestsFile();
        final Path profile = dir.resolve("p.json");
        final CliRun run = CliRun.of("inspect", "fit", "--requests", requests.toString(), "--out", profile.toString());
        assertEquals(0, run.exitCode(), run.err());
        final StepModelFit.Result expected = StepModelFit.fit(MeasuredRequest.readLlmServingSim(requests),
            "run-a-fitted", "x");
        final StepProfileFile.Loaded loaded = StepProfileFile.read(profile);
        final StepCoefficients c = loaded.coefficients();
        assertEquals("run-a-fitted", c.name());
        assertEquals(expected.coefficients().baseUs(), c.baseUs(), 1e-9);
        assertEquals(expected.coefficients().decodeRequestUs(), c.decodeRequestUs(), 1e-9);
        assertEquals(expected.coefficients().contextKiloTokenUs(), c.contextKiloTokenUs(), 1e-9);
        assertEquals(60, loaded.provenance().path("requests").asInt());
        assertEquals(expected.requestsUsed(), loaded.provenance().path("requests_used").asInt());
        assertEquals(requests.toAbsolutePath().toString(), loaded.provenance().path("data").asText());
        assertEquals(Math.round(expected.meanAbsolutePercentageError() * 10_000) / 100.0,
            loaded.provenance().path("in_sample_mape_pct").asDouble(), 1e-9);
        assertTrue(run.out().contains("MAPE of the decode windows") && run.out().contains("profile: "), run.out());

        final CliRun noContext = CliRun.of("inspect", "fit", "--requests", requests.toString(), "--no-context-term",
            "--name", "nc", "--out", profile.toString());
        assertEquals(0, noContext.exitCode(), noContext.err());
        assertEquals(0.0, StepProfileFile.read(profile).coefficients().contextKiloTokenUs());
        assertEquals("nc", StepProfileFile.read(profile).coefficients().name());
    }

    @Test
    void shouldReportABadRequestsLineWithFileAndLine() throws IOException
    {
        final Path requests = dir.resolve("requests.jsonl");
        Files.writeString(requests, Files.readString(requestsFile()) + "{\"input_toks\":3}\n");
        final CliRun run = CliRun.of("inspect", "fit", "--requests", requests.toString(), "--out",
            dir.resolve("p.json").toString());
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains(requests + ":61: missing or non-numeric field 'output_toks'"), run.err());
    }

    @Test
    void shouldFitTheGapsOfATraceWithItlContext() throws IOException
    {
        final Path trace = Path.of(fixture("batch_context_trace.jsonl"));
        final Path profile = dir.resolve("p.json");
        final CliRun run = CliRun.of("inspect", "fit", "--trace", trace.toString(), "--no-context-term", "--out",
            profile.toString());
        assertEquals(0, run.exitCode(), run.err());
        final TraceGapFit.Result expected = TraceGapFit.fit(List.of(TraceReader.readAll(trace).records()), "x", "y",
            false);
        final StepProfileFile.Loaded loaded = StepProfileFile.read(profile);
        assertEquals("batch_context_trace-fitted", loaded.coefficients().name());
        assertEquals(expected.coefficients().baseUs(), loaded.coefficients().baseUs(), 1e-9);
        assertEquals(expected.coefficients().prefillTokenUs(), loaded.coefficients().prefillTokenUs(), 1e-9);
        assertEquals(5, loaded.provenance().path("records_used").asInt());
        assertEquals(28, loaded.provenance().path("gaps_used").asInt());
        assertTrue(run.out().contains("gaps: 28 one-token gaps fitted, 0 multi-token gaps left out"), run.out());
    }

    @Test
    void shouldRefuseTracesWithoutItlContextNamingThem()
    {
        final String simple = fixture("simple_trace.jsonl");
        final CliRun run = CliRun.of("inspect", "fit", "--trace", simple + "," + simple, "--out",
            dir.resolve("p.json").toString());
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains(simple + "," + simple + ": no record has itl_ctx"), run.err());
    }

    @Test
    void shouldReportABadTraceLineWithFileAndLine() throws IOException
    {
        final Path trace = dir.resolve("t.jsonl");
        Files.writeString(trace, "{\"prompt_tokens\":3,\"output_tokens\":1,\"ttft_ms\":1}\n{\"prompt_tokens\":\n");
        final CliRun run = CliRun.of("inspect", "fit", "--trace", trace.toString(), "--out",
            dir.resolve("p.json").toString());
        assertEquals(2, run.exitCode());
        assertTrue(run.err().contains(trace + ":2: "), run.err());
    }

    private static String fixture(final String name)
    {
        return TraceTestData.path("vllm-vcr-fixtures/" + name).toString();
    }
}
