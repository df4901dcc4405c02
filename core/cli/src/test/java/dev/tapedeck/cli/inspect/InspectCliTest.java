package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


import dev.tapedeck.trace.TraceTestData;
import dev.tapedeck.testing.CliRun;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck inspect ...} in-process: output and exit codes of every subcommand (0 done, 1 check failed, 2 bad
 * input).
 */
class InspectCliTest
{
    private static final String VECTOR_CONFIG = "block_size=16;enable_prefix_caching=true;enforce_eager=true;" +
        "gpu_memory_utilization=0.9;max_model_len=16384;max_num_seqs=256;model=Qwen/Qwen3-8B;speculative=none;" +
        "tensor_parallel=1";
    private static final String VECTOR_HASH = "008ec925f30d74759b6c62bd5e78b16efb7b450c687554c053726dad9740a9dd";

    @TempDir
    Path dir;

    private static CliRun run(final String... args)
    {
        return CliRun.of(args);
    }

    @Test
    void shouldPrintHelpForEveryInspectSubcommand()
    {
        for (final String command : new String[] {"summarize", "perfetto", "validate", "fingerprint", "gen-demo"})
        {
            final CliRun help = run("inspect", command, "--help");
            assertEquals(0, help.exitCode(), command);
            assertTrue(help.out().startsWith("Usage: tapedeck inspect " + command), help.out());
        }
        final CliRun inspect = run("inspect");
        assertEquals(0, inspect.exitCode());
        assertTrue(inspect.out().contains("gen-demo"), inspect.out());
    }

    @Test
    void shouldSummariseAsATableOrJson() throws IOException
    {
        final String fixture = fixture("batch_context_trace.jsonl");
        final CliRun table = run("inspect", "summarize", fixture);
        assertEquals(0, table.exitCode(), table.err());
        assertTrue(table.out().contains("meta: model=synthetic-model gpu=- source=ci-validation-batch"),
            table.out());
        assertTrue(table.out().contains(
            "          8      1  200-200   10-10     90.00     90.00     90.00    18.00    19.00    19.00  stop=1\n"),
            table.out());
        assertTrue(table.out().contains(
            "        all      5   32-200    4-10     55.00     90.00     90.00    13.00    18.00    19.00  stop=5\n"),
            table.out());

        final CliRun json = run("inspect", "summarize", "--json", fixture);
        assertEquals(0, json.exitCode(), json.err());
        final JsonNode summary = new ObjectMapper().readTree(json.out());
        assertEquals(5, summary.get("rows").size());
        assertEquals(13.0, summary.get("all").get("itl_ms").get("p50").asDouble());

        final CliRun missing = run("inspect", "summarize", dir.resolve("nope.jsonl").toString());
        assertEquals(2, missing.exitCode());
        assertEquals("tapedeck summarize: error: " + dir.resolve("nope.jsonl") + ": no such file\n", missing.err());
    }

    @Test
    void shouldExitOneAndListEveryProblemWhenATraceIsInvalid() throws IOException
    {
        final CliRun valid = run("inspect", "validate", fixture("edge_cases_trace.jsonl"));
        assertEquals(0, valid.exitCode(), valid.out());
        assertEquals(fixture("edge_cases_trace.jsonl") + ": valid, 8 records and a meta line\n", valid.out());

        final Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1}\n" +
            "{\"prompt_tokens\":5,\"output_tokens\":2,\"ttft_ms\":-1}\n" +
            "not json\n", StandardCharsets.UTF_8);
        final CliRun invalid = run("inspect", "validate", bad.toString());
        assertEquals(1, invalid.exitCode());
        assertEquals(bad + ":2: ttft_ms is negative: -1.0\n" +
            bad + ":2: output_tokens is 2 but neither itl_ms nor itl_summary is given (a latency source needs it; " +
            "as a workload request the record is fine)\n" +
            bad + ":3: not valid JSON: Unrecognized token 'not': was expecting (JSON String, Number, Array, Object " +
            "or token 'null', 'true' or 'false')\n" +
            bad + ": 3 problems on 2 lines (3 records); valid neither as a workload nor as a latency source\n",
            invalid.out());
        assertEquals(1, run("inspect", "validate", bad.toString(), "--as", "workload").exitCode());
    }

    @Test
    void shouldTellATraceValidAsAWorkloadButNotAsALatencySource() throws IOException
    {
        final Path gapless = dir.resolve("gapless.jsonl");
        Files.writeString(gapless, "{\"arrival_ms\":0,\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1}\n" +
            "{\"arrival_ms\":3,\"prompt_tokens\":5,\"output_tokens\":4,\"ttft_ms\":2}\n", StandardCharsets.UTF_8);

        final CliRun asLatencySource = run("inspect", "validate", gapless.toString());
        final CliRun asWorkload = run("inspect", "validate", gapless.toString(), "--as", "workload");

        assertEquals(1, asLatencySource.exitCode(), asLatencySource.out());
        assertEquals(0, asWorkload.exitCode(), asWorkload.out());
        final String expected = gapless + ":2: output_tokens is 4 but neither itl_ms nor itl_summary is given (a " +
            "latency source needs it; as a workload request the record is fine)\n" +
            gapless + ": 1 problem on 1 line (2 records); valid as a workload (load, simulate), not as a latency " +
            "source\n";
        assertEquals(expected, asLatencySource.out());
        assertEquals(expected, asWorkload.out());
        assertEquals(2, run("inspect", "validate", gapless.toString(), "--as", "fit").exitCode());
    }

    @Test
    void shouldPrintTheConfigHashOfTheManifestVector()
    {
        final CliRun given = run("inspect", "fingerprint", "--gpu", "H200", "--vllm-version", "v0.27.1",
            "--engine-config", VECTOR_CONFIG);
        assertEquals(0, given.exitCode(), given.err());
        assertEquals(VECTOR_HASH + "\n", given.out());
        assertEquals("", given.err());

        final CliRun built = run("inspect", "fingerprint", "--gpu", "H200", "--vllm-version", "v0.27.1", "--show",
            "--set", "model=Qwen/Qwen3-8B", "--set", "tensor_parallel=1", "--set", "gpu_memory_utilization=0.90",
            "--set", "max_model_len=16384", "--set", "max_num_seqs=256", "--set", "enable_prefix_caching=true",
            "--set", "enforce_eager=true", "--set", "speculative=none", "--set", "block_size=16");
        assertEquals(0, built.exitCode(), built.err());
        assertEquals("config-fingerprint-v3\ngpu=H200\nvllm_tag=v0.27.1\nengine_config=" + VECTOR_CONFIG + "\n" +
            VECTOR_HASH + "\n", built.out());

        final CliRun unsorted = run("inspect", "fingerprint", "--vllm-version", "v1", "--engine-config", "b=1;a=2");
        assertEquals(0, unsorted.exitCode());
        assertTrue(unsorted.err().contains("not sorted by key"), unsorted.err());

        final CliRun both = run("inspect", "fingerprint", "--vllm-version", "v1", "--engine-config", "a=1",
            "--set", "a=1");
        assertEquals(2, both.exitCode());
        assertEquals("tapedeck fingerprint: error: give either --engine-config or --set, not both\n", both.err());
        assertEquals(2, run("inspect", "fingerprint", "--vllm-version", "v1", "--set", "novalue").exitCode());
    }

    @Test
    void shouldNotCallACutOrMissingFileClean() throws IOException
    {
        final Path cut = dir.resolve("cut.jsonl");
        Files.writeString(cut, "{\"prompt_tokens\":5,\"output_tokens\":1,\"ttft_ms\":1}\n{\"prompt_tokens\":6,");
        final CliRun run = run("inspect", "validate", cut.toString());
        assertEquals(1, run.exitCode(), run.out());
        assertTrue(run.out().contains(cut + ": not a clean file (1 warning above); 1 record read before it"),
            run.out());
        final CliRun directory = run("inspect", "validate", dir.toString());
        assertEquals(2, directory.exitCode());
        assertTrue(directory.err().startsWith("tapedeck validate: error: " + dir + ": "), directory.err());
    }

    @Test
    void shouldGenerateAReproducibleValidDemoTrace() throws IOException
    {
        final Path first = dir.resolve("demo1.jsonl");
        final Path second = dir.resolve("demo2.jsonl");
        final CliRun generated = run("inspect", "gen-demo", "-o", first.toString(), "--records", "50", "--seed", "3");
        assertEquals(0, generated.exitCode(), generated.err());
        assertTrue(generated.out().startsWith("wrote " + first + ": 50 records over "), generated.out());
        assertEquals(0, run("inspect", "gen-demo", "-o", second.toString(), "--records", "50", "--seed", "3")
            .exitCode());
        assertArrayEquals(Files.readAllBytes(first), Files.readAllBytes(second));
        assertEquals(0, run("inspect", "validate", first.toString()).exitCode());
        assertEquals(0, run("inspect", "gen-demo", "-o", dir.resolve("fast.jsonl").toString(), "--fast").exitCode());
        final CliRun none = run("inspect", "gen-demo", "-o", second.toString(), "--records", "0");
        assertEquals(2, none.exitCode());
        assertEquals("tapedeck gen-demo: error: --records must be at least 1, got 0\n", none.err());
    }

    @Test
    void shouldExportPerfettoJsonToAFile() throws IOException
    {
        final Path out = dir.resolve("trace.json");
        final CliRun exported = run("inspect", "perfetto", fixture("batch_context_trace.jsonl"), "-o", out.toString(),
            "--name", "demo");
        assertEquals(0, exported.exitCode(), exported.err());
        assertEquals("wrote " + out + ": 5 requests on 3 lanes (peak concurrency 3), 75 events\n", exported.out());
        final JsonNode document = new ObjectMapper().readTree(out.toFile());
        assertEquals(75, document.get("traceEvents").size());
        assertEquals("demo", document.get("traceEvents").get(0).get("args").get("name").asText());

        final CliRun skipped = run("inspect", "perfetto", fixture("spec_decode_trace.jsonl"), "-o", out.toString());
        assertEquals(0, skipped.exitCode());
        assertTrue(skipped.out().contains("skipped 8 records without arrival_ms"), skipped.out());

        final CliRun noOutput = run("inspect", "perfetto", fixture("simple_trace.jsonl"));
        assertEquals(2, noOutput.exitCode());
        assertTrue(noOutput.err().contains("give -o OUT.json"), noOutput.err());
    }

    private static String fixture(final String name)
    {
        return TraceTestData.path("vllm-vcr-fixtures/" + name).toString();
    }
}
