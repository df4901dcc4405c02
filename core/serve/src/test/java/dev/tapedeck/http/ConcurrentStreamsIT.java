package dev.tapedeck.http;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 1,000 concurrent streaming requests over loopback (bounded: 32 tokens each, a fast latency model): every one ends
 * with exactly max_tokens tokens, a length finish and [DONE]; the server's counters agree; no buffer leaks.
 */
@Timeout(120)
@ExtendWith(NoNettyLeaks.class)
class ConcurrentStreamsIT
{
    private static final int STREAMS = 1000;
    private static final int MAX_TOKENS = 32;

    @Test
    void shouldCompleteAThousandConcurrentStreamsExactly() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>(STREAMS);
            for (int i = 0; i < STREAMS; i++)
            {
                final String body = i % 2 == 0 ?
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"request " + i + "\"}],\"stream\":true," +
                        "\"max_tokens\":" + MAX_TOKENS + ",\"stream_options\":{\"include_usage\":true}}" :
                    "{\"prompt\":\"request " + i + "\",\"stream\":true,\"max_tokens\":" + MAX_TOKENS +
                        ",\"stream_options\":{\"include_usage\":true}}";
                responses.add(server.client.sendAsync(HttpRequest.newBuilder(
                    server.uri(i % 2 == 0 ? "/v1/chat/completions" : "/v1/completions"))
                    .timeout(Duration.ofSeconds(90)).header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()));
            }
            int completed = 0;
            for (final CompletableFuture<HttpResponse<String>> future : responses)
            {
                final HttpResponse<String> response = future.get();
                assertEquals(200, response.statusCode());
                final Sse.Stream stream = Sse.parse(response.body());
                assertTrue(stream.done(), "ends with [DONE]");
                assertEquals("length", stream.finishReason(0));
                assertEquals(MAX_TOKENS, stream.usage().get("completion_tokens").asInt());
                completed++;
            }
            assertEquals(STREAMS, completed);
            final String labels = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";
            assertEquals(STREAMS, server.metric("vllm:request_success_total{engine=\"0\",finished_reason=\"length\"," +
                "model_name=\"Qwen/Qwen3-8B\"}"));
            assertEquals((double)STREAMS * MAX_TOKENS, server.metric("vllm:generation_tokens_total" + labels));
            assertEquals(0, server.metric("vllm:num_requests_running" + labels));
            assertEquals(0, server.metric("vllm:num_requests_waiting" + labels));
        }
    }
}
