package dev.tapedeck.http;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The gauges a router balances on agree with the traffic at scrape time: with 10 streams open against
 * {@code --max-num-seqs 4}, {@code vllm:num_requests_running} is 4 and {@code vllm:num_requests_waiting} is 6 (their
 * sum is the requests in flight), {@code /load} says 10, KV usage is above zero; once the clients hang up, everything
 * returns to zero and the blocks are free.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(NoNettyLeaks.class)
class InFlightMetricsIT
{
    private static final String LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";
    private static final int STREAMS = 10;
    private static final int MAX_NUM_SEQS = 4;

    @Test
    void shouldCountEveryOpenRequestAsRunningOrWaiting() throws Exception
    {
        // 20 ms per step: 1,000 tokens take 20 s, far longer than the test looks
        final StepLatencyModel slow = new StepLatencyModel(new StepCoefficients("test-slow", 20_000, 0.5, 5, 0, 0,
            "tests"));
        try (TestServer server = new TestServer(TestServer.context(), c -> c.maxNumSeqs(MAX_NUM_SEQS)
            .latencyModel(slow)))
        {
            final List<CompletableFuture<HttpResponse<Void>>> streams = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++)
            {
                streams.add(server.client.sendAsync(HttpRequest.newBuilder(server.uri("/v1/completions"))
                    .header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"stream " + i + " " + "word ".repeat(40) +
                        "\",\"max_tokens\":1000,\"ignore_eos\":true,\"stream\":true}")).build(),
                    HttpResponse.BodyHandlers.discarding()));
            }
            awaitInFlight(server, STREAMS);
            // requests that arrived during a step are admitted at the next one: wait for the batch to fill
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (server.metric("vllm:num_requests_running" + LABELS) < MAX_NUM_SEQS)
            {
                assertTrue(System.nanoTime() - deadlineNs < 0, "the batch never filled");
                Thread.sleep(10);
            }
            assertEquals(MAX_NUM_SEQS, server.metric("vllm:num_requests_running" + LABELS), "the batch is full");
            assertEquals(STREAMS - MAX_NUM_SEQS, server.metric("vllm:num_requests_waiting" + LABELS),
                "the rest wait");
            assertTrue(server.get("/load").body().contains("\"server_load\":" + STREAMS));
            assertTrue(server.metric("vllm:kv_cache_usage_perc" + LABELS) > 0, "running requests hold blocks");

            streams.forEach(s -> s.cancel(true));
            awaitInFlight(server, 0);
            assertEquals(0, server.metric("vllm:num_requests_running" + LABELS));
            assertEquals(0.0, server.metric("vllm:kv_cache_usage_perc" + LABELS), "every block is free again");
        }
    }

    private static void awaitInFlight(final TestServer server, final int expected) throws Exception
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        double now;
        while ((now = server.metric("vllm:num_requests_running" + LABELS) +
            server.metric("vllm:num_requests_waiting" + LABELS)) != expected)
        {
            assertTrue(System.nanoTime() - deadlineNs < 0, "running + waiting stayed " + now + ", expected " +
                expected);
            Thread.sleep(10);
        }
    }
}
