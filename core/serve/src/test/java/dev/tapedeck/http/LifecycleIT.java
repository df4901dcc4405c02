package dev.tapedeck.http;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * vLLM's sleep mode and llm-d's start-up delay on real sockets: a sleeping instance queues new requests until it is
 * awake, level 1 forgets the KV cache, {@code wait} and {@code keep} let running requests finish or freeze them, the
 * sleep-state gauge follows, bad parameters get 400; a starting instance answers only {@code /health/ready}.
 */
@Timeout(60)
class LifecycleIT
{
    private static final String SLEEP_AWAKE = "vllm:engine_sleep_state{engine=\"0\",model_name=\"" + TestServer.MODEL +
        "\",sleep_state=\"awake\"}";
    private static final String SLEEP_OFFLOADED = SLEEP_AWAKE.replace("\"awake\"", "\"weights_offloaded\"");
    private static final String HITS = "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"" + TestServer.MODEL +
        "\"}";

    private static String body(final int maxTokens, final boolean stream)
    {
        return "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"" + "the same long prompt ".repeat(20) +
            "\",\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true,\"stream\":" + stream + "}";
    }

    private static CompletableFuture<HttpResponse<String>> postAsync(final TestServer server, final String path,
        final String json)
    {
        return server.client.sendAsync(HttpRequest.newBuilder(server.uri(path)).timeout(Duration.ofSeconds(30))
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    private static TestServer sleepy() throws Exception
    {
        return new TestServer(TestServer.context().enableSleepMode(true));
    }

    private static void awaitRunning(final TestServer server) throws Exception
    {
        for (int i = 0; i < 2000; i++) // a bound on a hang, not a timing check
        {
            if (server.metric("vllm:num_requests_running{engine=\"0\",model_name=\"" + TestServer.MODEL + "\"}") > 0)
            {
                return;
            }
            Thread.sleep(5);
        }
        throw new AssertionError("the request never ran");
    }

    @Test
    void shouldAbortWhatRunsQueueNewRequestsAndForgetTheCacheUntilWokenUp() throws Exception
    {
        try (TestServer server = sleepy())
        {
            assertEquals(200, server.post("/v1/completions", body(4, false)).statusCode());
            assertEquals(200, server.post("/v1/completions", body(4, false)).statusCode());
            assertTrue(server.metric(HITS) > 0, "the second request hit the cache");
            assertEquals(1.0, server.metric(SLEEP_AWAKE));

            final CompletableFuture<HttpResponse<String>> running = postAsync(server, "/v1/completions",
                body(5000, true));
            awaitRunning(server);
            final HttpResponse<String> sleep = server.post("/sleep", "");
            assertEquals(200, sleep.statusCode(), sleep.body());
            assertTrue(sleep.body().startsWith("{\"status\":\"sleeping\",\"level\":1,"), sleep.body());
            assertTrue(running.get(20, TimeUnit.SECONDS).body().contains("\"finish_reason\":\"abort\""),
                "mode=abort (the default) aborts what runs");
            assertEquals("{\"is_sleeping\":true}", server.get("/is_sleeping").body());
            final double hitsBefore = server.metric(HITS);
            assertEquals(0.0, server.metric(SLEEP_AWAKE));
            assertEquals(1.0, server.metric(SLEEP_OFFLOADED));

            final CompletableFuture<HttpResponse<String>> queued = postAsync(server, "/v1/completions",
                body(4, false));
            Thread.sleep(300);
            assertFalse(queued.isDone(), "a sleeping instance queues new requests");
            assertEquals(200, server.get("/health").statusCode(), "a sleeping server is healthy");
            final HttpResponse<String> weights = server.post("/wake_up?tags=weights", "");
            assertTrue(weights.body().startsWith("{\"status\":\"sleeping\",\"tags_woken\":[\"weights\"]"),
                weights.body());
            Thread.sleep(100);
            assertFalse(queued.isDone(), "the KV cache is still released");
            final HttpResponse<String> kv = server.post("/wake_up?tags=kv_cache", "");
            assertTrue(kv.body().startsWith("{\"status\":\"awake\",\"tags_woken\":[\"kv_cache\"]"), kv.body());
            assertEquals(200, queued.get(20, TimeUnit.SECONDS).statusCode(), "served once awake");
            assertEquals(hitsBefore, server.metric(HITS), "level 1 released the KV cache: no prefix hit");
            assertEquals("{\"is_sleeping\":false}", server.get("/is_sleeping").body());
            assertEquals(1.0, server.metric(SLEEP_AWAKE));
        }
    }

    @Test
    void shouldLetRunningRequestsFinishWithWaitAndFreezeThemWithKeep() throws Exception
    {
        try (TestServer server = sleepy())
        {
            final CompletableFuture<HttpResponse<String>> finishing = postAsync(server, "/v1/completions",
                body(300, true));
            awaitRunning(server);
            final CompletableFuture<HttpResponse<String>> sleep = postAsync(server, "/sleep?level=0&mode=wait", "");
            final HttpResponse<String> stream = finishing.get(20, TimeUnit.SECONDS);
            assertTrue(stream.body().contains("\"finish_reason\":\"length\""), "mode=wait lets it finish");
            assertTrue(sleep.get(20, TimeUnit.SECONDS).body().startsWith("{\"status\":\"sleeping\",\"level\":0"));
            assertEquals(0.0, server.metric(SLEEP_AWAKE), "level 0: asleep, weights still there");
            assertEquals(0.0, server.metric(SLEEP_OFFLOADED));
            assertTrue(server.post("/wake_up", "").body().startsWith("{\"status\":\"awake\",\"tags_woken\":null"));

            final CompletableFuture<HttpResponse<String>> frozen = postAsync(server, "/v1/completions",
                body(300, true));
            awaitRunning(server);
            assertEquals(200, server.post("/sleep?level=0&mode=keep", "").statusCode());
            Thread.sleep(400);
            assertFalse(frozen.isDone(), "mode=keep freezes it");
            server.post("/wake_up?tags=scheduling", "");
            final String text = frozen.get(20, TimeUnit.SECONDS).body();
            assertTrue(text.contains("\"finish_reason\":\"length\"") && text.endsWith("data: [DONE]\n\n"),
                "it goes on to its end once awake");
        }
    }

    @Test
    void shouldStayAwakeWhenWokenUpWhileAWaitSleepDrains() throws Exception
    {
        try (TestServer server = sleepy())
        {
            final CompletableFuture<HttpResponse<String>> running = postAsync(server, "/v1/completions",
                body(300, true));
            awaitRunning(server);
            final CompletableFuture<HttpResponse<String>> sleep = postAsync(server, "/sleep?mode=wait", "");
            Thread.sleep(50);
            assertTrue(server.post("/wake_up", "").body().startsWith("{\"status\":\"awake\""));
            assertTrue(running.get(20, TimeUnit.SECONDS).body().contains("\"finish_reason\":\"length\""));
            assertTrue(sleep.get(20, TimeUnit.SECONDS).body().startsWith("{\"status\":\"awake\""),
                "the sleep found the instance woken up: nothing released");
            assertEquals("{\"is_sleeping\":false}", server.get("/is_sleeping").body());
            assertEquals(200, server.post("/v1/completions", body(3, false)).statusCode(), "served at once");
        }
    }

    @Test
    void shouldRefuseBadParametersAndServeTheRoutesOnlyInSleepMode() throws Exception
    {
        try (TestServer server = sleepy())
        {
            final HttpResponse<String> level = server.post("/sleep?level=3", "");
            assertEquals(400, level.statusCode());
            assertTrue(level.body().contains("\"param\":\"query.level\""), level.body());
            assertEquals(400, server.post("/sleep?level=x", "").statusCode());
            assertTrue(server.post("/sleep?mode=later", "").body().contains("\"param\":\"query.mode\""));
            assertTrue(server.post("/wake_up?tags=gpu", "").body().contains("\"param\":\"query.tags\""));
            assertEquals(405, server.get("/sleep").statusCode());
            assertEquals("{\"is_sleeping\":false}", server.get("/is_sleeping").body(), "nothing changed");
        }
        try (TestServer server = TestServer.start())
        {
            assertEquals(404, server.post("/sleep", "").statusCode(), "no sleep routes without --enable-sleep-mode");
            assertEquals(1.0, server.metric(SLEEP_AWAKE), "the gauge is there, always awake");
        }
        try (TestServer server = new TestServer(TestServer.context().enableSleepMode(true).apiKey("k")))
        {
            assertEquals(401, server.post("/sleep", "").statusCode(), "sleep changes state: the key is required");
            assertEquals(401, server.post("/wake_up", "").statusCode());
        }
    }

    @Test
    void shouldAnswerOnlyReadinessUntilTheStartupDurationPassed() throws Exception
    {
        try (TestServer server = new TestServer(TestServer.context().startupDurationNs(1_500_000_000L)))
        {
            assertEquals(503, server.get("/health/ready").statusCode(), "not ready yet");
            final CompletableFuture<HttpResponse<String>> health = server.client.sendAsync(HttpRequest.newBuilder(
                server.uri("/health")).GET().build(), HttpResponse.BodyHandlers.ofString());
            final CompletableFuture<HttpResponse<String>> completion = postAsync(server, "/v1/completions",
                body(3, false));
            Thread.sleep(300);
            assertFalse(health.isDone() || completion.isDone(), "nothing is answered before the engine is ready");
            assertEquals(200, health.get(20, TimeUnit.SECONDS).statusCode());
            assertEquals(200, completion.get(20, TimeUnit.SECONDS).statusCode(), "served once ready");
            assertEquals(200, server.get("/health/ready").statusCode());
        }
    }
}
