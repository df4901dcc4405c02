package dev.tapedeck.cli.inspect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


import dev.tapedeck.load.Load;
import dev.tapedeck.load.LoadContext;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceTestData;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadReader;
import dev.tapedeck.testing.CliRun;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck inspect convert} in-process on the shipped files: one summary line, the file it promises, and one
 * line with exit code 2 for every mistake.
 */
class ConvertCommandTest
{
    @TempDir
    Path dir;

    private static CliRun run(final String... args)
    {
        return CliRun.of(args);
    }

    @Test
    void shouldConvertMooncakeToAGzippedWorkloadFile() throws IOException
    {
        final Path source = TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl");
        final Path out = dir.resolve("mooncake.workload.jsonl.gz");

        final CliRun run = run("inspect", "convert", source.toString(), "-o", out.toString());

        assertEquals(0, run.exitCode(), run.err());
        assertEquals(1, run.out().lines().count(), run.out());
        assertTrue(run.out().startsWith("mooncake " + source + " -> workload " + out + ": 12031 requests over " +
            "3536999 ms (58m56.999s), block size 512, 2027 sessions; notes: timestamp is in milliseconds"), run.out());
        final byte[] head = Files.readAllBytes(out);
        assertEquals(0x1f, head[0] & 0xff, "gzip by the .gz name");
        final Workload workload = WorkloadReader.readAll(out);
        assertEquals(12_031, workload.requests().size());
        assertEquals(512, workload.hashBlockSize());
        assertEquals("mooncake", workload.source());
        assertEquals(2_027, workload.sessionCount(), "the workload file keeps the sessions inferred on load");
    }

    @Test
    void shouldCountTheSameSessionsAsLoadForTheSameFile() throws IOException
    {
        final Path source = TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl");
        final Path out = dir.resolve("mooncake.workload.jsonl");

        final CliRun run = run("inspect", "convert", source.toString(), "-o", out.toString());
        final LoadPlan loadPlan = Load.basePlan(new LoadContext().workload(source));
        final LoadPlan convertedPlan = Load.basePlan(new LoadContext().workload(out));

        assertEquals(0, run.exitCode(), run.err());
        assertTrue(loadPlan.sessions() > 2_000, "the conversation trace chains: " + loadPlan.sessions());
        assertTrue(run.out().contains(", " + loadPlan.sessions() + " sessions; "), loadPlan.sessions() + " vs " +
            run.out());
        assertEquals(loadPlan.sessions(), convertedPlan.sessions(), "load of the converted file");
        assertEquals(0, Load.basePlan(new LoadContext().workload(source).inferSessions(false)).sessions(),
            "--sessions off");
    }

    @Test
    void shouldConvertAiperfMultiTurnAndBurstGptByContent() throws IOException
    {
        final Path aiperf = dir.resolve("conversations.jsonl");
        Files.writeString(aiperf, "{\"session_id\":\"a\",\"turns\":[{\"text\":\"" + "x".repeat(80) +
            "\",\"output_length\":8,\"timestamp\":0},{\"text\":\"more\",\"delay\":100,\"output_length\":4}]}\n");
        final Path burst = dir.resolve("burst.csv");
        Files.writeString(burst, "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
            "0.5,ChatGPT,100,10,110,API log\n2.0,GPT-4,200,0,200,API log\n3.25,GPT-4,300,30,330,API log\n");
        final Path aiperfOut = dir.resolve("aiperf.workload.jsonl");
        final Path burstOut = dir.resolve("burst.workload.jsonl");

        final CliRun fromAiperf = run("inspect", "convert", aiperf.toString(), "-o", aiperfOut.toString());
        final CliRun fromBurst = run("inspect", "convert", burst.toString(), "-o", burstOut.toString());

        assertEquals(0, fromAiperf.exitCode(), fromAiperf.err());
        assertTrue(fromAiperf.out().startsWith("aiperf-multi-turn " + aiperf + " -> workload " + aiperfOut +
            ": 2 requests over 0 ms, block size 16, 1 session; notes:"), fromAiperf.out());
        final Workload conversation = WorkloadReader.readAll(aiperfOut);
        assertEquals(20, conversation.requests().get(0).promptTokens());
        assertEquals(20 + 8 + 1, conversation.requests().get(1).promptTokens(), "history, answer, new text");
        assertEquals(0, fromBurst.exitCode(), fromBurst.err());
        assertTrue(fromBurst.out().startsWith("burstgpt " + burst + " -> workload " + burstOut + ": 2 requests over " +
            "2750 ms (2.75s), no hash ids, 0 sessions; notes:"), fromBurst.out());
        assertTrue(fromBurst.out().contains("1 rows have Response tokens 0 (failed requests) and were skipped (" +
            burst + ":3)"), fromBurst.out());
    }

    @Test
    void shouldConvertTheGuidellmReportToATraceByDefault() throws IOException
    {
        final Path source = TraceTestData.path("vllm-vcr-fixtures/guidellm_sample.json");
        final Path out = dir.resolve("guidellm.trace.jsonl");

        final CliRun run = run("inspect", "convert", source.toString(), "--from", "guidellm", "-o", out.toString(),
            "--model", "my-model");

        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().startsWith("guidellm " + source + " -> trace " + out + ": 4 records, arrivals over " +
            "60000 ms (1m0s)"), run.out());
        final TraceReader.Trace trace = TraceReader.readAll(out);
        assertEquals("my-model", trace.meta().model());
        assertEquals(4, trace.records().size());

        final Path workload = dir.resolve("guidellm.workload.jsonl");
        final CliRun asWorkload = run("inspect", "convert", source.toString(), "--to", "workload", "-o",
            workload.toString());
        assertEquals(0, asWorkload.exitCode(), asWorkload.err());
        assertEquals(4, WorkloadReader.readAll(workload).requests().size());
    }

    @Test
    void shouldConvertKvCacheTesterConversationsAndAzure() throws IOException
    {
        final Path out = dir.resolve("kv.jsonl");
        final CliRun kv = run("inspect", "convert", TraceTestData.path("workloads/kv_cache_tester").toString(), "-o",
            out.toString());
        assertEquals(0, kv.exitCode(), kv.err());
        assertTrue(kv.out().contains(": 21 requests over 400000 ms (6m40s), block size 64, 2 sessions;"), kv.out());

        final Path azure = dir.resolve("azure.jsonl");
        final CliRun run = run("inspect", "convert",
            TraceTestData.path("workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv").toString(), "--from",
            "azure", "-o", azure.toString());
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.out().contains(": 8819 requests over "), run.out());
        assertTrue(run.out().contains("no hash ids, 0 sessions"), run.out());
    }

    @Test
    void shouldRefuseMistakesInOneLineWithExitCode2() throws IOException
    {
        final Path mooncake = TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl");
        final Path out = dir.resolve("out.jsonl");

        final CliRun trace = run("inspect", "convert", mooncake.toString(), "--to", "trace", "-o", out.toString());
        assertEquals(2, trace.exitCode());
        assertTrue(trace.err().contains("--to trace needs measured results"), trace.err());
        assertEquals(1, trace.err().lines().count(), trace.err());
        assertFalse(Files.exists(out), "nothing written");

        final Path ambiguous = dir.resolve("replay.jsonl");
        Files.writeString(ambiguous, "{\"timestamp\": 1.5, \"input_length\": 5, \"output_length\": 2}\n");
        final CliRun unknown = run("inspect", "convert", ambiguous.toString(), "-o", out.toString());
        assertEquals(2, unknown.exitCode());
        assertTrue(unknown.err().contains("cannot tell the format") && unknown.err().contains("vllm-bench"),
            unknown.err());
        final CliRun named = run("inspect", "convert", ambiguous.toString(), "--format", "guidellm-replay", "-o",
            out.toString());
        assertEquals(0, named.exitCode(), named.err());

        final CliRun model = run("inspect", "convert", mooncake.toString(), "--model", "m", "-o", out.toString());
        assertEquals(2, model.exitCode());
        assertTrue(model.err().contains("--model"), model.err());

        final CliRun from = run("inspect", "convert", mooncake.toString(), "--from", "sharegpt", "-o", out.toString());
        assertEquals(2, from.exitCode());
        assertTrue(from.err().contains("unknown format 'sharegpt'"), from.err());

        final Path broken = dir.resolve("broken.jsonl");
        Files.writeString(broken, "{\"timestamp\": 0, \"input_length\": 5, \"hash_ids\": [0]}\n{\"timestamp\": 1}\n");
        final CliRun bad = run("inspect", "convert", broken.toString(), "-o", out.toString());
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains(broken + ":2: input_length is missing"), bad.err());

        final CliRun missing = run("inspect", "convert", dir.resolve("nope.json").toString(), "-o", out.toString());
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().contains("nope.json"), missing.err());
    }

    @Test
    void shouldListConvertUnderInspect()
    {
        final CliRun help = run("inspect", "--help");
        assertEquals(0, help.exitCode());
        assertTrue(help.out().contains("convert"), help.out());
        final CliRun convertHelp = run("inspect", "convert", "--help");
        assertEquals(0, convertHelp.exitCode());
        for (final String flag : new String[] {"--from", "--to", "--model", "-o"})
        {
            assertTrue(convertHelp.out().contains(flag), flag);
        }
    }
}
