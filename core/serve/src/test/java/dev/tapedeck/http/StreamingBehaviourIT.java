package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Wire framing, keep-alive, disconnects, slow readers, replicas, echo and stop strings, over loopback.
 */
@Timeout(60)
@ExtendWith(NoNettyLeaks.class)
class StreamingBehaviourIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";

    @Test
    void shouldFrameEverySseEventInValidChunkedTransferAndKeepTheConnection() throws Exception
    {
        try (TestServer server = TestServer.start(); RawHttp http = new RawHttp(server.ports.get(0)))
        {
            for (int round = 0; round < 2; round++)
            {
                http.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]," +
                    "\"stream\":true,\"max_tokens\":5}");
                final String head = http.readHead();
                assertTrue(head.startsWith("HTTP/1.1 200 OK\r\n"), head);
                assertTrue(head.contains("transfer-encoding: chunked"), head);
                final ByteArrayOutputStream body = new ByteArrayOutputStream();
                byte[] chunk;
                while ((chunk = http.readChunk()).length > 0)
                {
                    body.write(chunk);
                }
                final Sse.Stream stream = Sse.parse(body.toString(StandardCharsets.UTF_8));
                assertTrue(stream.done());
                assertEquals("length", stream.finishReason(0));
            }
        }
    }

    @Test
    void shouldAbortTheRequestWhenTheClientDisconnects() throws Exception
    {
        try (TestServer server = new TestServer(TestServer.context(), c -> c.latencyModel(
            new StepLatencyModel(new StepCoefficients("slow", 5000, 0, 0, 0, 0, "test")))))
        {
            final String aborts = "vllm:request_success_total{engine=\"0\",finished_reason=\"abort\"," +
                "model_name=\"Qwen/Qwen3-8B\"}";
            assertEquals(0, server.metric(aborts));
            try (RawHttp http = new RawHttp(server.ports.get(0)))
            {
                http.post("/v1/completions", "{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":5000," +
                    "\"ignore_eos\":true}");
                http.readHead();
                http.readChunk();
                assertEquals(1, server.metric("vllm:num_requests_running" + LABELS));
            }
            for (int i = 0; i < 500 && server.metric(aborts) < 1; i++)
            {
                Thread.sleep(10);
            }
            assertEquals(1, server.metric(aborts));
            assertEquals(0, server.metric("vllm:num_requests_running" + LABELS));
            assertEquals(0, server.metric("vllm:kv_cache_usage_perc" + LABELS));
        }
    }

    @Test
    void shouldMergeTokensForASlowReaderAndLoseNone() throws Exception
    {
        final ServeContext smallSendBuffer = TestServer.context().shutdownTimeoutNs(0)
            .socketSendBufferBytes(16 * 1024);
        try (TestServer server = new TestServer(smallSendBuffer, c -> c);
            RawHttp http = new RawHttp(server.ports.get(0), 4096))
        {
            final int maxTokens = 6000;
            http.post("/v1/completions", "{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":" + maxTokens +
                ",\"stream_options\":{\"include_usage\":true}}");
            http.readHead();
            Thread.sleep(1500); // do not read: the server's socket buffer fills and the channel turns unwritable
            final ByteArrayOutputStream body = new ByteArrayOutputStream();
            byte[] chunk;
            while ((chunk = http.readChunk()).length > 0)
            {
                body.write(chunk);
            }
            final Sse.Stream stream = Sse.parse(body.toString(StandardCharsets.UTF_8));
            assertEquals(maxTokens, stream.usage().get("completion_tokens").asInt());
            assertTrue(stream.events().size() < maxTokens, "some events carry merged tokens: " +
                stream.events().size());
            assertEquals("length", stream.finishReason(0));
        }
    }

    @Test
    void shouldRunIndependentReplicasOnTheirOwnPorts() throws Exception
    {
        try (TestServer server = new TestServer(TestServer.context().instances(3), c -> c))
        {
            assertEquals(3, server.ports.size());
            final String[] texts = new String[3];
            for (int i = 0; i < 3; i++)
            {
                final HttpResponse<String> response = server.post(i, "/v1/completions",
                    "{\"prompt\":\"same prompt\",\"max_tokens\":8}");
                assertEquals(200, response.statusCode());
                texts[i] = JSON.readTree(response.body()).at("/choices/0/text").asText();
            }
            assertNotEquals(texts[0], texts[1], "each replica has its own seed");
            assertNotEquals(texts[1], texts[2]);
            for (int i = 0; i < 3; i++)
            {
                final HttpResponse<String> metrics = server.client.send(HttpRequest.newBuilder(
                    server.uri(i, "/metrics")).GET().build(), HttpResponse.BodyHandlers.ofString());
                assertTrue(metrics.body().contains("vllm:generation_tokens_total" + LABELS + " 8.0"),
                    "replica " + i + " counts only its own tokens");
            }
        }
    }

    @Test
    void shouldEchoThePromptAndCutAtAStopString() throws Exception
    {
        final ServeContext echo = TestServer.context().servedModelNames(List.of(TestServer.MODEL))
            .mode(ServeOptions.Mode.ECHO).shutdownTimeoutNs(0).enablePromptTokensDetails(true);
        try (TestServer server = new TestServer(echo, c -> c))
        {
            final JsonNode plain = JSON.readTree(server.post("/v1/chat/completions",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"Ünïcode \\\"quoted\\\" line\\nnext 日本語\"}]}")
                .body());
            assertEquals("Ünïcode \"quoted\" line\nnext 日本語", plain.at("/choices/0/message/content").asText());
            assertEquals("stop", plain.at("/choices/0/finish_reason").asText());
            assertEquals(0, plain.at("/usage/prompt_tokens_details/cached_tokens").asInt());

            final Sse.Stream stopped = Sse.parse(server.post("/v1/completions", "{\"prompt\":\"one two three " +
                "four five\",\"stop\":[\" four\",\"xyz\"],\"stream\":true,\"max_tokens\":50}").body());
            assertEquals("one two three", stopped.text(0));
            assertEquals("stop", stopped.finishReason(0));
            final JsonNode last = stopped.events().get(stopped.events().size() - 1);
            assertEquals(" four", last.at("/choices/0/stop_reason").asText());

            final JsonNode included = JSON.readTree(server.post("/v1/completions", "{\"prompt\":\"one two three " +
                "four five\",\"stop\":\" four\",\"include_stop_str_in_output\":true}").body());
            assertEquals("one two three four", included.at("/choices/0/text").asText());
        }
    }

    @Test
    void shouldHonourTheXRequestIdHeaderInResponseIds() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final HttpResponse<String> response = server.client.send(HttpRequest.newBuilder(
                server.uri("/v1/completions")).timeout(Duration.ofSeconds(10)).header("X-Request-Id", "abc-123")
                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"x\",\"max_tokens\":1}")).build(),
                HttpResponse.BodyHandlers.ofString());
            assertEquals("cmpl-abc-123", JSON.readTree(response.body()).get("id").asText());
        }
    }
}
