package dev.tapedeck.system;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect fit} on inference-perf runs whose answer is known (written in the BLIS layout from a replay with
 * known coefficients and frontend delay), then {@code simulate --step-profile FILE} with what it wrote: the fitted
 * profile predicts the runs' means within a few percent, the overloaded run is left out of the fit, and the profile
 * file is what simulate loads.
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
}
