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
        final BlisExperiment shape = new BlisExperiment(name, "m", 1, 4096, 2048, 64, 4, 3, 100, 80,
            List.of(new BlisExperiment.Stage(rate, 20, 400, 0, 0, 1, 1, 1, 1)));
        final StepCoefficients truth = new StepCoefficients("truth", 8000, 20, 60, 3, 0, "test");
        final StageReplay.Predicted p =
            StageReplay.run(shape, new StepLatencyModel(truth), 5_000_000, 0, 20_000, 20).get(0);
        final Path root = dir.resolve("runs").resolve(name);
        Files.createDirectories(root.resolve("results"));
        Files.writeString(root.resolve("exp-config.yaml"), "model: m\ntensor_parallelism: 1\nmax_model_len: 4096\n" +
            "max_num_batched_tokens: 2048\nmax_num_seqs: 64\napp: inference-perf\n");
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
}
