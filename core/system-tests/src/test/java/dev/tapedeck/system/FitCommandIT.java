package dev.tapedeck.system;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import dev.tapedeck.cli.Main;
import dev.tapedeck.kv.KvCapacity;
import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.RooflineCoefficients;
import dev.tapedeck.latency.RooflineStepModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.latency.StepProfileFile;
import dev.tapedeck.simulate.fit.BlisExperiment;
import dev.tapedeck.simulate.fit.StageReplay;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect fit} on inference-perf runs whose answer is known (written in the BLIS layout from a replay with
 * known coefficients and frontend delay), then {@code simulate --step-profile FILE} with what it wrote: the fitted
 * profile predicts the runs' means within a few percent, the overloaded run is left out of the fit, and the profile
 * file is what simulate loads. Likewise {@code inspect fit --trace} on the trace {@code simulate --trace-out} writes
 * of a run with known coefficients (its records carry {@code itl_ctx}), and {@code inspect fit --requests} on that
 * run's per-request timestamps and on the real RTX PRO 6000 run the default profile was fitted to.
 */
@Timeout(120)
class FitCommandIT
{
    @TempDir
    Path dir;

    private Path experiment(final String name, final double rate, final int failed) throws Exception
    {
        final StepCoefficients truth = new StepCoefficients("truth", 8000, 20, 60, 3, 0, "test");
        return experiment(name, "m", rate, failed, new StepLatencyModel(truth), 20_000);
    }

    private Path experiment(final String name, final String model, final double rate, final int failed,
        final LatencyModel truth, final int kvCacheBlocks) throws Exception
    {
        final BlisExperiment shape = new BlisExperiment(name, model, 1, 4096, 2048, 64, 4, 3, 100, 80,
            List.of(new BlisExperiment.Stage(rate, 20, 400, 0, 0, 1, 1, 1, 1)));
        final StageReplay.Predicted p = StageReplay.run(shape, truth, 5_000_000, 0, kvCacheBlocks, 20).get(0);
        final Path root = dir.resolve("runs").resolve(name);
        Files.createDirectories(root.resolve("results"));
        Files.writeString(root.resolve("exp-config.yaml"), "model: " + model + "\ntensor_parallelism: 1\n" +
            "max_model_len: 4096\nmax_num_batched_tokens: 2048\nmax_num_seqs: 64\napp: inference-perf\n");
        Files.writeString(root.resolve("profile.yaml"), "{\"data\":{\"shared_prefix\":{\"num_unique_system_prompts\"" +
            ":4,\"num_users_per_system_prompt\":3,\"system_prompt_len\":100,\"question_len\":300,\"output_len\":80}," +
            "\"type\":\"shared_prefix\"},\"load\":{\"stages\":[{\"duration\":20,\"rate\":" + rate + "}]," +
            "\"type\":\"constant\"}}");
        Files.writeString(root.resolve("results").resolve("stage_0_lifecycle_metrics.json"),
            "{\"successes\":{\"count\":" + p.requests() + ",\"prompt_len\":{\"mean\":400},\"latency\":{" +
            "\"time_to_first_token\":{\"mean\":" + p.ttftMeanMs() / 1e3 + ",\"p99\":" + p.ttftP99Ms() / 1e3 + "}," +
            "\"request_latency\":{\"mean\":" + p.e2eMeanMs() / 1e3 + ",\"p99\":" + p.e2eP99Ms() / 1e3 + "}}}," +
            "\"failures\":{\"count\":" + failed + "}}");
        return root;
    }

    @Test
    void fitWritesAProfileThatPredictsTheRunsAndThatSimulateLoads() throws Exception
    {
        experiment("x-m-general", 3, 0);
        experiment("x-m-codegen", 8, 0);
        experiment("x-m-reasoning", 2, 400);
        final Path profile = dir.resolve("m.json");
        final CommandLine cli = Main.commandLine();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        assertEquals(0, cli.execute("inspect", "fit", "--blis", dir.resolve("runs").toString(), "--model", "x-m",
            "--out", profile.toString(), "--seconds-per-stage", "20", "--evaluations", "150"), err.toString());
        final String printed = out.toString();
        assertTrue(printed.contains("median APE e2e_mean") && printed.contains("profile: "), printed);
        final StepProfileFile.Loaded loaded = StepProfileFile.read(profile);
        assertEquals(List.of("x-m-codegen", "x-m-general"), List.of(loaded.provenance().path("experiments").get(0)
            .asText(), loaded.provenance().path("experiments").get(1).asText()));
        assertEquals("x-m-reasoning", loaded.provenance().path("excluded_overloaded").get(0).asText());
        assertTrue(loaded.provenance().at("/in_sample_median_ape_pct/e2e_mean").asDouble() < 5, printed);
        assertTrue(loaded.provenance().at("/in_sample_median_ape_pct/itl_mean").asDouble() < 5, printed);

        final Path workload = dir.resolve("w.jsonl");
        Files.writeString(workload, "{\"arrival_ms\":0,\"prompt_tokens\":300,\"output_tokens\":20}\n");
        final CommandLine simulate = Main.commandLine();
        final StringWriter simulateErr = new StringWriter();
        simulate.setErr(new PrintWriter(simulateErr, true));
        assertEquals(0, simulate.execute("simulate", "--quiet", "--workload", workload.toString(), "--step-profile",
            profile.toString(), "--report", dir.resolve("r.json").toString()), simulateErr.toString());
        final String latencyModel = Files.readString(dir.resolve("r.json"));
        assertTrue(latencyModel.contains("x-m-fitted"), "the report names the profile it ran with");
    }

    @Test
    void fitRooflineWritesAPhysicsProfileThatSimulateRunsWithItsDeployment() throws Exception
    {
        final ModelArchitecture llama = ModelArchitecture.lookup("meta-llama/Llama-2-7b-hf");
        final GpuSpec h100 = GpuSpec.lookup("H100");
        final RooflineStepModel truth = new RooflineStepModel(llama, h100, 1,
            new RooflineCoefficients("truth", 300, 12, 4, 1.2, 1.3, 1.2, 1.4, 3, 1.3, 0));
        final int blocks = KvCapacity.blocks(llama, h100, 1, 0.9, 16);
        experiment("l7-general", "meta-llama/Llama-2-7b-hf", 4, 0, truth, blocks);
        experiment("l7-codegen", "meta-llama/Llama-2-7b-hf", 12, 0, truth, blocks);
        final Path profile = dir.resolve("l7.json");
        final CommandLine cli = Main.commandLine();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        assertEquals(0, cli.execute("inspect", "fit", "--roofline", "--blis", dir.resolve("runs").toString(),
            "--model", "l7", "--name", "l7-h100", "--out", profile.toString(), "--seconds-per-stage", "20"),
            err.toString());
        final String printed = out.toString();
        assertTrue(printed.contains("profile: ") && printed.contains("on 1x H100"), printed);
        final StepProfileFile.Loaded loaded = StepProfileFile.read(profile);
        assertEquals(llama, loaded.roofline().model());
        assertTrue(loaded.provenance().at("/in_sample_median_ape_pct/itl_mean").asDouble() < 5, printed);
        assertTrue(loaded.provenance().at("/in_sample_median_ape_pct/ttft_mean").asDouble() < 5, printed);

        final Path workload = dir.resolve("w.jsonl");
        Files.writeString(workload, "{\"arrival_ms\":0,\"prompt_tokens\":300,\"output_tokens\":20}\n");
        final CommandLine simulate = Main.commandLine();
        final StringWriter simulateOut = new StringWriter();
        simulate.setOut(new PrintWriter(simulateOut, true));
        final StringWriter simulateErr = new StringWriter();
        simulate.setErr(new PrintWriter(simulateErr, true));
        assertEquals(0, simulate.execute("simulate", "--quiet", "--workload", workload.toString(), "--step-profile",
            profile.toString(), "--report", dir.resolve("r.json").toString()), simulateErr.toString());
        final String report = Files.readString(dir.resolve("r.json"));
        assertTrue(report.contains("l7-h100") && report.contains("on 1x H100"), "the report names the deployment");
        assertEquals(blocks, new com.fasterxml.jackson.databind.ObjectMapper().readTree(report)
            .at("/target/engine/kv_cache_blocks").asInt(), "the profile's KV geometry");
    }

    private static final StepCoefficients KNOWN = new StepCoefficients("known", 8000, 20, 60, 40, 0, "test");

    private static String run(final String... args)
    {
        final CommandLine cli = Main.commandLine();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        assertEquals(0, cli.execute(args), String.join(" ", args) + ": " + err);
        return out.toString();
    }

    /** 400 requests at 8/s, half with short prompts and half with long ones (so context and batch size part). */
    private Path workload() throws Exception
    {
        final Random random = new Random(5);
        final StringBuilder lines = new StringBuilder();
        double at = 0;
        for (int i = 0; i < 400; i++)
        {
            at += -Math.log(1 - random.nextDouble()) * 1000 / 8;
            final int prompt = random.nextBoolean() ? 50 + random.nextInt(200) : 1000 + random.nextInt(1000);
            lines.append(String.format(Locale.ROOT, "{\"arrival_ms\":%.3f,\"prompt_tokens\":%d,\"output_tokens\":%d}%n",
                at, prompt, 20 + random.nextInt(300)));
        }
        final Path workload = dir.resolve("w.jsonl");
        Files.writeString(workload, lines);
        return workload;
    }

    /** simulate the workload with {@code profile}'s options; returns the report's latency_ms. */
    private JsonNode simulate(final Path workload, final String report, final String... profile) throws Exception
    {
        final List<String> args = new ArrayList<>(List.of("simulate", "--quiet", "--workload", workload.toString(),
            "--report", dir.resolve(report).toString()));
        args.addAll(List.of(profile));
        run(args.toArray(String[]::new));
        return new ObjectMapper().readTree(dir.resolve(report).toFile()).at("/points/0/latency_ms");
    }

    private static String[] known(final String... more)
    {
        final List<String> args = new ArrayList<>(List.of("--step-base", KNOWN.baseUs() + "us",
            "--step-prefill-per-token", KNOWN.prefillTokenUs() + "us", "--step-decode-per-request",
            KNOWN.decodeRequestUs() + "us", "--step-context-per-1k-tokens", KNOWN.contextKiloTokenUs() + "us"));
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    private static void assertMeansClose(final JsonNode truth, final JsonNode predicted, final double ttftPct,
        final double itlPct)
    {
        assertEquals(truth.at("/ttft/mean").asDouble(), predicted.at("/ttft/mean").asDouble(),
            truth.at("/ttft/mean").asDouble() * ttftPct / 100, "TTFT mean");
        assertEquals(truth.at("/itl/mean").asDouble(), predicted.at("/itl/mean").asDouble(),
            truth.at("/itl/mean").asDouble() * itlPct / 100, "ITL mean");
        assertEquals(truth.at("/e2e/mean").asDouble(), predicted.at("/e2e/mean").asDouble(),
            truth.at("/e2e/mean").asDouble() * itlPct / 100, "E2E mean");
    }

    @Test
    void fitTraceRecoversTheCoefficientsOfTheRunThatWroteTheTrace() throws Exception
    {
        final Path workload = workload();
        final Path trace = dir.resolve("t.jsonl");
        final JsonNode truth = simulate(workload, "truth.json", known("--trace-out", trace.toString()));
        final List<TraceRecord> records = TraceReader.readAll(trace).records();
        assertTrue(records.stream().allMatch(r -> null != r.itlContext()), "simulate --trace-out writes itl_ctx");

        final Path profile = dir.resolve("t.json");
        final String printed = run("inspect", "fit", "--trace", trace.toString(), "--out", profile.toString());
        assertTrue(printed.contains("400 with itl_ctx used"), printed);
        final StepProfileFile.Loaded loaded = StepProfileFile.read(profile);
        final StepCoefficients fitted = loaded.coefficients();
        assertEquals(KNOWN.baseUs(), fitted.baseUs(), KNOWN.baseUs() * 0.02, fitted.toString());
        assertEquals(KNOWN.prefillTokenUs(), fitted.prefillTokenUs(), KNOWN.prefillTokenUs() * 0.02, fitted.toString());
        assertEquals(KNOWN.decodeRequestUs(), fitted.decodeRequestUs(), KNOWN.decodeRequestUs() * 0.03,
            fitted.toString());
        assertEquals(KNOWN.contextKiloTokenUs(), fitted.contextKiloTokenUs(), KNOWN.contextKiloTokenUs() * 0.03,
            fitted.toString());
        assertEquals(records.stream().mapToLong(r -> r.itlMs().length).sum(),
            loaded.provenance().path("gaps_used").asLong());
        assertTrue(loaded.provenance().path("in_sample_mape_pct").asDouble() < 1, printed);

        final JsonNode predicted = simulate(workload, "fitted.json", "--step-profile", profile.toString());
        assertMeansClose(truth, predicted, 3, 1);
        assertTrue(Files.readString(dir.resolve("fitted.json")).contains("t-fitted"), "the report names the profile");
    }

    @Test
    void fitRequestsOnTheRunsTimestampsPredictsTheRun() throws Exception
    {
        final Path workload = workload();
        final Path trace = dir.resolve("t.jsonl");
        final JsonNode truth = simulate(workload, "truth.json", known("--trace-out", trace.toString()));
        final StringBuilder lines = new StringBuilder();
        for (final TraceRecord r : TraceReader.readAll(trace).records())
        {
            final double queued = r.arrivalMs() / 1000;
            final double first = queued + r.ttftMs() / 1000;
            final double last = first + java.util.Arrays.stream(r.itlMs()).sum() / 1000;
            lines.append(String.format(Locale.ROOT, "{\"input_toks\":%d,\"output_toks\":%d,\"queued_ts\":%.6f," +
                "\"scheduled_ts\":%.6f,\"first_token_ts\":%.6f,\"last_token_ts\":%.6f}%n", r.promptTokens(),
                r.outputTokens(), queued, queued, first, last));
        }
        final Path requests = dir.resolve("run").resolve("requests.jsonl");
        Files.createDirectories(requests.getParent());
        Files.writeString(requests, lines);

        final Path profile = dir.resolve("r.json");
        final String printed = run("inspect", "fit", "--requests", requests.toString(), "--out", profile.toString());
        final StepProfileFile.Loaded loaded = StepProfileFile.read(profile);
        assertEquals("run-fitted", loaded.coefficients().name());
        assertEquals(KNOWN.baseUs(), loaded.coefficients().baseUs(), KNOWN.baseUs() * 0.03, printed);
        assertEquals(400, loaded.provenance().path("requests").asInt());
        assertTrue(loaded.provenance().path("in_sample_mape_pct").asDouble() < 1, printed);
        final JsonNode predicted = simulate(workload, "fitted.json", "--step-profile", profile.toString());
        assertMeansClose(truth, predicted, 8, 1);
    }

    @Test
    void fitRequestsReproducesTheShippedProfileFromTheRealRun() throws Exception
    {
        final Path real = realRun("RTXPRO6000_Llama-3.1-8B");
        Assumptions.assumeTrue(null != real, () ->
        {
            final String reason = "skipped: neither traces/data/fidelity/llmservingsim nor " +
                "../shared/data/fidelity/llmservingsim-bench has RTXPRO6000_Llama-3.1-8B/requests.jsonl";
            System.out.println(reason);
            return reason;
        });
        final Path profile = dir.resolve("l8.json");
        final String printed = run("inspect", "fit", "--requests", real.toString(), "--out", profile.toString());
        final StepCoefficients fitted = StepProfileFile.read(profile).coefficients();
        final StepCoefficients shipped = StepCoefficients.DENSE_8B_RTXPRO6000;
        assertEquals(shipped.baseUs(), fitted.baseUs(), shipped.baseUs() * 0.01, printed);
        assertEquals(shipped.prefillTokenUs(), fitted.prefillTokenUs(), shipped.prefillTokenUs() * 0.01, printed);
        assertEquals(shipped.decodeRequestUs(), fitted.decodeRequestUs(), shipped.decodeRequestUs() * 0.01, printed);
        assertEquals(shipped.contextKiloTokenUs(), fitted.contextKiloTokenUs(), shipped.contextKiloTokenUs() * 0.01,
            printed);
        assertTrue(printed.contains("300 read, 300 with 21+ output tokens used"), printed);
    }

    /** The run's requests.jsonl in the repository's copy or the shared data, from any working directory. */
    private static Path realRun(final String run)
    {
        for (Path up = Path.of("").toAbsolutePath(); null != up; up = up.getParent())
        {
            for (final Path candidate : List.of(up.resolve("traces/data/fidelity/llmservingsim"),
                up.resolve("../shared/data/fidelity/llmservingsim-bench")))
            {
                final Path file = candidate.resolve(run).resolve("requests.jsonl");
                if (Files.isRegularFile(file))
                {
                    return file.normalize();
                }
            }
        }
        return null;
    }
}
