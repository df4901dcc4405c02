package dev.tapedeck.http;

import java.net.http.HttpResponse;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The OpenAI surface of {@code serve} over real loopback HTTP: response shapes, SSE framing, usage, endpoints.
 */
@Timeout(60)
@ExtendWith(NoNettyLeaks.class)
class HttpApiIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;

    @BeforeAll
    static void start() throws Exception
    {
        server = TestServer.start();
    }

    @AfterAll
    static void stop()
    {
        server.close();
    }

    private static String chat(final String extra)
    {
        return "{\"model\":\"Qwen/Qwen3-8B\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]" + extra + "}";
    }

    @Test
    void shouldStreamChatChunksLikeVllm() throws Exception
    {
        final HttpResponse<String> response = server.post("/v1/chat/completions",
            chat(",\"stream\":true,\"max_tokens\":12,\"stream_options\":{\"include_usage\":true}"));
        assertEquals(200, response.statusCode());
        assertEquals("text/event-stream; charset=utf-8", response.headers().firstValue("content-type").orElse(""));
        final Sse.Stream stream = Sse.parse(response.body());
        assertTrue(stream.done());
        final JsonNode role = stream.events().get(0);
        final String id = role.get("id").asText();
        assertTrue(id.matches("chatcmpl-[0-9a-f]{32}"), id);
        assertEquals("chat.completion.chunk", role.get("object").asText());
        assertEquals("Qwen/Qwen3-8B", role.get("model").asText());
        assertEquals("{\"role\":\"assistant\",\"content\":\"\"}", role.at("/choices/0/delta").toString());
        assertTrue(role.has("prompt_token_ids"));
        for (final JsonNode event : stream.events())
        {
            assertEquals(id, event.get("id").asText());
            assertEquals(role.get("created").asLong(), event.get("created").asLong());
        }
        assertEquals("length", stream.finishReason(0));
        // one event per step; a step the event loop reached late merges its tokens into one event
        assertTrue(stream.contentEvents(0) >= 1 && stream.contentEvents(0) <= 12);
        final JsonNode usage = stream.usage();
        assertNotNull(usage);
        assertEquals(12, usage.get("completion_tokens").asInt());
        assertEquals(usage.get("prompt_tokens").asInt() + 12, usage.get("total_tokens").asInt());
        assertEquals(List.of("prompt_tokens", "total_tokens", "completion_tokens"), fieldNames(usage));
        // prompt: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n" in o200k_base + ChatML markers
        assertEquals(9, usage.get("prompt_tokens").asInt());
        assertFalse(stream.text(0).isEmpty());
    }

    @Test
    void shouldAnswerNonStreamingChatWithTheFullVllmBody() throws Exception
    {
        final HttpResponse<String> response = server.post("/v1/chat/completions", chat(",\"max_tokens\":5"));
        assertEquals(200, response.statusCode());
        assertEquals("application/json", response.headers().firstValue("content-type").orElse(""));
        final JsonNode body = JSON.readTree(response.body());
        assertEquals(List.of("id", "object", "created", "model", "choices", "service_tier", "system_fingerprint",
            "usage", "prompt_logprobs", "prompt_token_ids", "kv_transfer_params"), fieldNames(body));
        assertEquals("chat.completion", body.get("object").asText());
        final JsonNode choice = body.at("/choices/0");
        assertEquals("length", choice.get("finish_reason").asText());
        assertTrue(choice.get("stop_reason").isNull());
        assertEquals("assistant", choice.at("/message/role").asText());
        assertTrue(choice.at("/message/tool_calls").isArray());
        assertFalse(choice.at("/message/content").asText().isEmpty());
        assertEquals(5, body.at("/usage/completion_tokens").asInt());
        assertTrue(body.at("/usage/prompt_tokens_details").isNull());
    }

    @Test
    void shouldStreamCompletionsWithoutARoleChunk() throws Exception
    {
        final HttpResponse<String> response = server.post("/v1/completions",
            "{\"model\":\"Qwen/Qwen3-8B\",\"prompt\":\"The capital of France is\",\"stream\":true,\"max_tokens\":6}");
        assertEquals(200, response.statusCode());
        final Sse.Stream stream = Sse.parse(response.body());
        assertTrue(stream.done());
        assertTrue(stream.events().size() >= 1 && stream.events().size() <= 6);
        for (final JsonNode event : stream.events())
        {
            assertEquals("text_completion", event.get("object").asText());
            assertTrue(event.get("id").asText().startsWith("cmpl-"));
            assertEquals(List.of("index", "text", "logprobs", "finish_reason", "stop_reason", "prompt_token_ids",
                "token_ids"), fieldNames(event.at("/choices/0")));
        }
        assertEquals("length", stream.finishReason(0));
        assertTrue(null == stream.usage(), "no usage without stream_options");
    }

    @Test
    void shouldDefaultCompletionsMaxTokensTo16AsVllmDoes() throws Exception
    {
        final JsonNode body = JSON.readTree(server.post("/v1/completions",
            "{\"prompt\":\"hello\"}").body());
        assertEquals(16, body.at("/usage/completion_tokens").asInt());
        assertEquals("length", body.at("/choices/0/finish_reason").asText());
        assertEquals("text_completion", body.get("object").asText());
    }

    @Test
    void shouldServeEveryChoiceOfNAndSumTheirTokens() throws Exception
    {
        final HttpResponse<String> response = server.post("/v1/chat/completions",
            chat(",\"n\":3,\"stream\":true,\"max_tokens\":4,\"stream_options\":{\"include_usage\":true}"));
        final Sse.Stream stream = Sse.parse(response.body());
        for (int i = 0; i < 3; i++)
        {
            assertEquals("length", stream.finishReason(i));
            assertTrue(stream.contentEvents(i) >= 1 && stream.contentEvents(i) <= 4);
        }
        assertEquals(12, stream.usage().get("completion_tokens").asInt());
        assertEquals(9, stream.usage().get("prompt_tokens").asInt(), "the prompt counts once");
    }

    @Test
    void shouldAnswerOneChoicePerPromptOfABatch() throws Exception
    {
        final JsonNode body = JSON.readTree(server.post("/v1/completions",
            "{\"prompt\":[\"a b c\",[1,2,3,4,5]],\"max_tokens\":3}").body());
        assertEquals(2, body.get("choices").size());
        assertEquals(1, body.at("/choices/1/index").asInt());
        assertEquals(6, body.at("/usage/completion_tokens").asInt());
        assertEquals(3 + 5, body.at("/usage/prompt_tokens").asInt());
    }

    @Test
    void shouldReportContinuousUsageOnEveryChunkWhenAsked() throws Exception
    {
        final Sse.Stream stream = Sse.parse(server.post("/v1/chat/completions", chat(",\"stream\":true," +
            "\"max_tokens\":3,\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}")).body());
        int last = -1;
        for (final JsonNode event : stream.events())
        {
            assertTrue(event.has("usage"), event.toString());
            final int completion = event.at("/usage/completion_tokens").asInt();
            assertTrue(completion >= last);
            last = completion;
        }
        assertEquals(3, last);
    }

    @Test
    void shouldServeHealthVersionModelsAndLoad() throws Exception
    {
        final HttpResponse<String> health = server.get("/health");
        assertEquals(200, health.statusCode());
        assertEquals("", health.body());
        assertEquals("{\"version\":\"0.19.0\"}", server.get("/version").body());
        final JsonNode models = JSON.readTree(server.get("/v1/models").body());
        assertEquals("list", models.get("object").asText());
        assertEquals(2, models.get("data").size());
        final JsonNode card = models.at("/data/0");
        assertEquals("Qwen/Qwen3-8B", card.get("id").asText());
        assertEquals("vllm", card.get("owned_by").asText());
        assertEquals(8192, card.get("max_model_len").asInt());
        assertEquals("model_permission", card.at("/permission/0/object").asText());
        assertEquals("alias", models.at("/data/1/id").asText());
        assertEquals(0, JSON.readTree(server.get("/load").body()).get("server_load").asInt());
    }

    @Test
    void shouldAcceptAnyServedAliasAndReportTheFirstName() throws Exception
    {
        final JsonNode body = JSON.readTree(server.post("/v1/chat/completions",
            "{\"model\":\"alias\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":1}").body());
        assertEquals("Qwen/Qwen3-8B", body.get("model").asText());
    }

    @Test
    void shouldExposeRequestCountsInMetrics() throws Exception
    {
        final String labels = "{engine=\"0\",finished_reason=\"length\",model_name=\"Qwen/Qwen3-8B\"}";
        final double before = server.metric("vllm:request_success_total" + labels);
        final double tokensBefore = server.metric("vllm:generation_tokens_total{engine=\"0\",model_name=\"" +
            "Qwen/Qwen3-8B\"}");
        server.post("/v1/chat/completions", chat(",\"max_tokens\":7"));
        assertEquals(before + 1, server.metric("vllm:request_success_total" + labels));
        assertEquals(tokensBefore + 7, server.metric("vllm:generation_tokens_total{engine=\"0\",model_name=\"" +
            "Qwen/Qwen3-8B\"}"));
        final HttpResponse<String> metrics = server.get("/metrics");
        assertEquals("text/plain; version=0.0.4; charset=utf-8",
            metrics.headers().firstValue("content-type").orElse(""));
    }

    private static List<String> fieldNames(final JsonNode node)
    {
        final List<String> names = new java.util.ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
