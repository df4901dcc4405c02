package dev.tapedeck.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.load.LengthDistribution;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.PlannedRequest;
import dev.tapedeck.load.RunRecorder;
import dev.tapedeck.load.RunResult;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.trace.TraceTestData;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadFormat;
import dev.tapedeck.workload.WorkloadRequest;
import dev.tapedeck.workload.WorkloadWriter;
import dev.tapedeck.workload.Workloads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every workload format, from the real shipped files (or, for the formats with no shipped file, files written from
 * the shipped Azure and Mooncake rows), replayed open loop against an in-process {@code serve}: every planned request
 * completes, nothing fails, and the server counted exactly the planned prompt tokens (and output tokens, which
 * {@code ignore_eos} makes exact).
 */
@Timeout(120)
class WorkloadFormatsIT
{
    private static final LengthDistribution SHORT = LengthDistribution.parse("16..48");
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

    /**
     * Load the file as the CLI does (sessions inferred), keep the first requests, replay and check the counts.
     */
    private static void replay(final Path file, final WorkloadFormat format, final int maxRequests,
        final double timeScale) throws IOException, InterruptedException
    {
        replay(file, format, maxRequests, timeScale, null);
    }

    /**
     * As above, with the outputs replaced (long prompts are the point; hundreds of output tokens per turn only make
     * the test slow).
     */
    private static void replay(final Path file, final WorkloadFormat format, final int maxRequests,
        final double timeScale, final LengthDistribution outputs) throws IOException, InterruptedException
    {
        final Workload workload = Workloads.load(file, format);
        final LoadPlan plan = LoadPlan.fromWorkload(workload, timeScale, maxRequests, 0, outputs, 1);
        long plannedPrompt = 0;
        long plannedOutput = 0;
        boolean outputsKnown = true;
        for (final PlannedRequest r : plan.requests())
        {
            plannedPrompt += r.promptTokens();
            plannedOutput += Math.max(0, r.outputTokens());
            outputsKnown &= r.outputTokens() > 0;
        }
        final RunResult result = LoadHarness.run(LoadHarness.url(server.ports.get(0)), LoadHarness.open(plan),
            TimeUnit.SECONDS.toNanos(60));
        final RunRecorder r = result.recorder();
        final String what = format + " " + file.getFileName() + ": " + r.errors();
        assertEquals(plan.requests().size(), result.sent(), what);
        assertEquals(plan.requests().size(), r.completed(), what);
        assertEquals(0, r.failed(), what);
        assertTrue(r.errors().isEmpty(), what);
        assertEquals(plannedPrompt, r.promptTokens(), what + ": the server's usage counts the planned prompt tokens");
        if (outputsKnown)
        {
            assertEquals(plannedOutput, r.outputTokens(), what + ": ignore_eos gives the planned output lengths");
        }
        else
        {
            assertTrue(r.outputTokens() >= plannedOutput, what);
        }
        assertEquals(plan.requests().size(), r.ttftNs().getTotalCount(), what);
    }

    @Test
    void shouldReplayMooncake() throws Exception
    {
        replay(TraceTestData.path("workloads/mooncake_fast25/conversation_trace.jsonl"), WorkloadFormat.MOONCAKE, 24,
            0.05, SHORT);
    }

    @Test
    void shouldReplayAzure() throws Exception
    {
        replay(TraceTestData.path("workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv"), WorkloadFormat.AZURE,
            40, 0.02);
    }

    @Test
    void shouldReplayKvCacheTesterConversationsTurnAfterTurn() throws Exception
    {
        final Path conversations = TraceTestData.path("workloads/kv_cache_tester");
        assertEquals(2, Workloads.load(conversations, WorkloadFormat.KVCACHE_TESTER).sessionCount());
        replay(conversations, WorkloadFormat.KVCACHE_TESTER, 0, 0.002, SHORT);
    }

    @Test
    void shouldReplayAiperfConversationsTurnAfterTurnAndBurstGpt() throws Exception
    {
        final Path aiperf = dir.resolve("conversations.jsonl");
        Files.writeString(aiperf, "{\"session_id\":\"a\",\"turns\":[{\"role\":\"system\",\"text\":\"" +
            "s".repeat(120) + "\"},{\"text\":\"" + "q".repeat(200) + "\",\"output_length\":12,\"timestamp\":0}," +
            "{\"text\":\"follow up\",\"delay\":20,\"output_length\":6}]}\n" +
            "{\"session_id\":\"b\",\"turns\":[{\"texts\":[\"" + "w".repeat(90) + "\"],\"timestamp\":30," +
            "\"output_length\":5}]}\n");
        final Workload conversations = Workloads.load(aiperf);
        assertEquals(2, conversations.sessionCount());
        replay(aiperf, WorkloadFormat.AIPERF_MULTI_TURN, 0, 1.0);

        final Path burst = dir.resolve("burst.csv");
        Files.writeString(burst, "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
            "0.25,ChatGPT,180,9,189,Conversation log\n0.5,GPT-4,90,0,90,API log\n0.75,GPT-4,400,7,407,API log\n" +
            "1.0,ChatGPT,33,3,36,API log\n");
        replay(burst, WorkloadFormat.BURSTGPT, 0, 0.1);
    }

    @Test
    void shouldReplayVcrTraces() throws Exception
    {
        replay(TraceTestData.path("vllm-vcr-fixtures/edge_cases_trace.jsonl"), WorkloadFormat.TRACE, 0, 1.0);
        replay(TraceTestData.path("vllm-vcr-fixtures/batch_context_trace.jsonl"), WorkloadFormat.TRACE, 0, 1.0);
    }

    @Test
    void shouldReplayAGuidellmReport() throws Exception
    {
        replay(TraceTestData.path("vllm-vcr-fixtures/guidellm_sample.json"), WorkloadFormat.GUIDELLM, 0, 0.01);
    }

    @Test
    void shouldReplayATapedeckWorkloadFile() throws Exception
    {
        final Workload mooncake = Workloads.load(TraceTestData.path(
            "workloads/mooncake_fast25/conversation_trace.jsonl"), WorkloadFormat.MOONCAKE);
        final Path file = dir.resolve("mooncake.workload.jsonl.gz");
        WorkloadWriter.write(file, new Workload(mooncake.source(), mooncake.hashBlockSize(),
            mooncake.requests().subList(0, 20), mooncake.notes()));
        replay(file, WorkloadFormat.TAPEDECK, 0, 0.05, SHORT);
    }

    @Test
    void shouldReplayAGuidellmReplayFile() throws Exception
    {
        final Path file = dir.resolve("replay.jsonl");
        final StringBuilder out = new StringBuilder();
        for (final String[] row : azureRows(30))
        {
            out.append(String.format(Locale.ROOT,
                "{\"timestamp\": %.7f, \"input_length\": %s, \"output_length\": %s}%n", epochSeconds(row[0]),
                row[1], row[2]));
        }
        Files.writeString(file, out);
        replay(file, WorkloadFormat.GUIDELLM_REPLAY, 0, 0.02);
    }

    @Test
    void shouldReplayAVllmBenchResult() throws Exception
    {
        final List<String[]> rows = azureRows(30);
        final List<String> inputs = new ArrayList<>();
        final List<String> outputs = new ArrayList<>();
        final List<String> starts = new ArrayList<>();
        final List<String> empty = new ArrayList<>();
        final double origin = epochSeconds(rows.get(0)[0]);
        for (final String[] row : rows)
        {
            inputs.add(row[1]);
            outputs.add(row[2]);
            starts.add(String.format(Locale.ROOT, "%.7f", 5000 + epochSeconds(row[0]) - origin));
            empty.add("\"\"");
        }
        final Path file = dir.resolve("vllm-bench.json");
        Files.writeString(file, "{\"backend\":\"vllm\",\"model_id\":\"" + TestServer.MODEL + "\",\"input_lens\":" +
            inputs + ",\"output_lens\":" + outputs + ",\"start_times\":" + starts + ",\"errors\":" + empty + "}");
        replay(file, WorkloadFormat.VLLM_BENCH, 0, 0.02);
    }

    /**
     * @return the first rows of the shipped Azure code trace: timestamp, context tokens, generated tokens.
     */
    private static List<String[]> azureRows(final int count) throws IOException
    {
        final List<String> lines = Files.readAllLines(TraceTestData.path(
            "workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv"));
        final List<String[]> rows = new ArrayList<>();
        for (int i = 1; i <= count; i++)
        {
            rows.add(lines.get(i).split(","));
        }
        return rows;
    }

    private static double epochSeconds(final String azureTimestamp)
    {
        final LocalDateTime time = LocalDateTime.parse(azureTimestamp,
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSSS"));
        return time.toEpochSecond(ZoneOffset.UTC) + time.getNano() / 1e9;
    }

    /**
     * The workload's requests as the plan sees them (a sanity check that the loaders keep sizes).
     */
    @Test
    void shouldPlanTheWorkloadsSizes() throws Exception
    {
        final Workload azure = Workloads.load(TraceTestData.path(
            "workloads/azure_llm_2023/AzureLLMInferenceTrace_code.csv"), WorkloadFormat.AZURE);
        final LoadPlan plan = LoadPlan.fromWorkload(azure, 1.0, 3, 0, null, 0);
        final List<WorkloadRequest> first = azure.requests().subList(0, 3);
        for (int i = 0; i < 3; i++)
        {
            assertEquals(first.get(i).promptTokens(), plan.requests().get(i).promptTokens());
            assertEquals(first.get(i).outputTokens(), plan.requests().get(i).outputTokens());
        }
        assertEquals(4808, plan.requests().get(0).promptTokens(), "the first row of the shipped file");
    }
}
