package dev.tapedeck.system;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.tapedeck.load.LengthDistribution;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.LoadRun;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.load.PromptWords;
import dev.tapedeck.load.RequestBodies;
import dev.tapedeck.load.RunRecorder;
import dev.tapedeck.load.RunResult;
import dev.tapedeck.load.Slo;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.load.client.LoadClient;
import dev.tapedeck.net.Transport;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadRequest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The load generator against a real {@code serve} over loopback: open loop at planned times, closed loop, exact
 * prompt lengths, token counts from the server's usage, latencies measured from the intended send time.
 */
@Timeout(120)
class LoadRunIT
{
    private static RunResult run(final TestServer server, final LoadRun.Settings settings, final boolean stream,
        final RequestBodies.Endpoint endpoint) throws InterruptedException
    {
        return run(server, settings, stream, endpoint, true);
    }

    private static RunResult run(final TestServer server, final LoadRun.Settings settings, final boolean stream,
        final RequestBodies.Endpoint endpoint, final boolean continuousUsage) throws InterruptedException
    {
        final RequestBodies bodies = bodies(endpoint, stream, continuousUsage, settings.plan().blockSize());
        try (LoadClient client = client(server))
        {
            assertTrue(client.preconnect(settings.warmConnections(), TimeUnit.SECONDS.toNanos(10)));
            return new LoadRun(settings, client, bodies).run(null);
        }
    }

    private static RequestBodies bodies(final RequestBodies.Endpoint endpoint, final boolean stream,
        final boolean continuousUsage, final int blockSize)
    {
        return new RequestBodies(endpoint, TestServer.MODEL, stream, true, false, continuousUsage,
            new PromptFactory(PromptWords.of(TestServer.tokenizer()), 7, blockSize, false));
    }

    /** A one-loop client of the server's first port, with a 30 s request timeout. */
    private static LoadClient client(final TestServer server)
    {
        return new LoadClient(URI.create("http://127.0.0.1:" + server.ports.get(0)), 1, Map.of(),
            TimeUnit.SECONDS.toNanos(30), Transport.select("auto"));
    }

    @Test
    void shouldReplayAWorkloadOpenLoopWithExactPromptAndOutputLengths() throws Exception
    {
        final List<WorkloadRequest> requests = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++)
        {
            requests.add(WorkloadRequest.of(i * 25.0, 100 + i, 8));
        }
        final LoadPlan plan = LoadPlan.fromWorkload(new Workload("test", 0, requests, List.of()), 1.0, 0, 0, null, 0);
        // 20 ms steps: the engine never falls behind, so every token gets its own chunk
        try (TestServer server = new TestServer(TestServer.context(), c -> c.latencyModel(new StepLatencyModel(
            new StepCoefficients("slow", 20_000, 0, 0, 0, 0, "test")))))
        {
            final RunResult result = run(server, new LoadRun.Settings(plan, LoadRun.Mode.OPEN, 0, 0, 0, 0,
                TimeUnit.SECONDS.toNanos(30), Slo.NONE, "run"), true, RequestBodies.Endpoint.COMPLETIONS);
            final RunRecorder r = result.recorder();
            assertEquals(40, r.completed(), r.errors().toString());
            assertEquals(0, r.failed());
            long expectedPrompt = 0;
            for (int i = 0; i < 40; i++)
            {
                expectedPrompt += 100 + i;
            }
            assertEquals(expectedPrompt, r.promptTokens(), "the server counted exactly the planned prompt tokens");
            assertEquals(40 * 8, r.outputTokens());
            assertEquals(40, r.ttftNs().getTotalCount());
            // one gap per token after the first event; on a loaded machine the first event can carry two tokens
            final long gaps = r.itlNs().getTotalCount();
            assertTrue(gaps <= 40 * 7 && gaps >= 40 * 6, "per-token gaps: " + gaps);
            assertEquals(40, r.dispatchLatenessNs().getTotalCount(), "every send's lateness is recorded");
            assertTrue(result.measuredSeconds() >= 0.9, "the plan spans about a second: " + result.measuredSeconds());
        }
    }

    @Test
    void shouldCountOneTokenPerTextChunkWithoutContinuousUsage() throws Exception
    {
        final LoadPlan plan = LoadPlan.pool(12, LengthDistribution.parse("30"), LengthDistribution.parse("6"), 3);
        // 20 ms steps: every token gets its own chunk; the include_usage summary at the end adds no token
        try (TestServer server = new TestServer(TestServer.context(), c -> c.latencyModel(new StepLatencyModel(
            new StepCoefficients("slow", 20_000, 0, 0, 0, 0, "test")))))
        {
            final RunResult result = run(server, new LoadRun.Settings(plan, LoadRun.Mode.CLOSED, 4, 12, 0, 0,
                TimeUnit.SECONDS.toNanos(30), Slo.NONE, "chat"), true, RequestBodies.Endpoint.CHAT, false);
            final RunRecorder r = result.recorder();
            assertEquals(12, r.completed(), r.errors().toString());
            assertEquals(12 * 6, r.outputTokens(), "usage from the summary chunk");
            final long gaps = r.itlNs().getTotalCount();
            assertTrue(gaps <= 12 * 5 && gaps >= 12 * 4, "one gap per text chunk after the first: " + gaps);
        }
    }

    @Test
    void shouldRunAgainOnTheSameClientAfterADrainTimeoutAbort() throws Exception
    {
        // the sweep case: point 1 is cut short by its drain timeout, point 2 must still run on the same client
        final LoadPlan slowPlan = LoadPlan.pool(4, LengthDistribution.parse("20"), LengthDistribution.parse("200"), 1);
        final LoadPlan quickPlan = LoadPlan.pool(8, LengthDistribution.parse("20"), LengthDistribution.parse("2"), 2);
        // 20 ms steps: 200 tokens take 4 s, far beyond the first run's 200 ms drain
        try (TestServer server = new TestServer(TestServer.context(), c -> c.latencyModel(new StepLatencyModel(
            new StepCoefficients("slow", 20_000, 0, 0, 0, 0, "test"))));
            LoadClient client = client(server))
        {
            final RequestBodies bodies = bodies(RequestBodies.Endpoint.COMPLETIONS, true, true, 0);
            final RunRecorder aborted = new LoadRun(new LoadRun.Settings(slowPlan, LoadRun.Mode.CLOSED, 4, 4, 0, 0,
                TimeUnit.MILLISECONDS.toNanos(200), Slo.NONE, "cut"), client, bodies).run(null).recorder();
            assertEquals(4, aborted.failed(), "the drain timeout aborts the four long requests");
            final RunRecorder next = new LoadRun(new LoadRun.Settings(quickPlan, LoadRun.Mode.CLOSED, 4, 8, 0, 0,
                TimeUnit.SECONDS.toNanos(30), Slo.NONE, "next"), client, bodies).run(null).recorder();
            assertEquals(8, next.completed(), "the client takes requests again: " + next.errors());
            assertEquals(0, next.failed());
        }
    }

    @Test
    void shouldKeepTheConcurrencyInClosedLoop() throws Exception
    {
        final LoadPlan plan = LoadPlan.pool(64, LengthDistribution.parse("20..60"), LengthDistribution.parse("5"), 1);
        try (TestServer server = TestServer.start())
        {
            final RunResult result = run(server, new LoadRun.Settings(plan, LoadRun.Mode.CLOSED, 8, 100, 0, 0,
                TimeUnit.SECONDS.toNanos(30), Slo.parse("ttft_ms=60000"), "concurrency=8"), false,
                RequestBodies.Endpoint.CHAT);
            final RunRecorder r = result.recorder();
            assertEquals(100, result.sent());
            assertEquals(100, r.completed(), r.errors().toString());
            assertEquals(100 * 5, r.outputTokens());
            assertEquals(100, r.goodRequests(), "every request meets a 60 s TTFT");
            assertEquals(0, r.itlNs().getTotalCount(), "non-streaming responses have no token gaps");
        }
    }

    @Test
    void shouldCountOnlyTheSparesAClosedLoopSentWhenItStopsOnTime() throws Exception
    {
        final LoadPlan plan = LoadPlan.pool(16, LengthDistribution.parse("20"), LengthDistribution.parse("3"), 1);
        // 10 ms steps: each request takes about 30 ms, so 8 in flight finish about 130 requests in half a second;
        // most replacements are spares the event loop starts at once, and those never used must not count as sent
        try (TestServer server = new TestServer(TestServer.context(), c -> c.latencyModel(new StepLatencyModel(
            new StepCoefficients("steady", 10_000, 0, 0, 0, 0, "test")))))
        {
            final RunResult result = run(server, new LoadRun.Settings(plan, LoadRun.Mode.CLOSED, 8, 0, 0.5, 0,
                TimeUnit.SECONDS.toNanos(30), Slo.NONE, "seconds"), true, RequestBodies.Endpoint.COMPLETIONS);
            final RunRecorder r = result.recorder();
            assertEquals(0, r.failed(), r.errors().toString());
            assertTrue(r.completed() > 40, "kept 8 in flight for half a second: " + r.completed());
            assertEquals(result.sent(), r.completed(), "every request sent completed, no spare counted twice or lost");
            assertEquals(8, r.peakInFlight(), "the concurrency, never more");
            assertEquals(r.completed(), r.dispatchLatenessNs().getTotalCount(), "every send's lateness is recorded");
        }
    }
}
