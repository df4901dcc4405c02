package dev.tapedeck.http;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every client error gets an OpenAI-shaped body with the right status, and never disturbs other requests.
 */
@Timeout(60)
@ExtendWith(NoNettyLeaks.class)
class ErrorsIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;

    @BeforeAll
    static void start() throws Exception
    {
        server = new TestServer(TestServer.context(), c -> c.maxModelLen(256));
    }

    @AfterAll
    static void stop()
    {
        server.close();
    }

    private static JsonNode assertError(final HttpResponse<String> response, final int status, final String type,
        final String param) throws Exception
    {
        assertEquals(status, response.statusCode(), response.body());
        assertEquals("application/json", response.headers().firstValue("content-type").orElse(""));
        final JsonNode error = JSON.readTree(response.body()).get("error");
        assertEquals(status, error.get("code").asInt());
        assertEquals(type, error.get("type").asText());
        if (null == param)
        {
            assertTrue(error.get("param").isNull());
        }
        else
        {
            assertEquals(param, error.get("param").asText());
        }
        assertTrue(error.get("message").asText().length() > 5);
        return error;
    }

    @Test
    void shouldRejectMalformedJson() throws Exception
    {
        assertError(server.post("/v1/chat/completions", "{\"messages\": [}"), 400, "Bad Request", "body");
    }

    @Test
    void shouldRejectWrongFieldTypes() throws Exception
    {
        assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":\"ten\"}"),
            400, "Bad Request", "body.max_tokens");
        assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"maybe\"}"),
            400, "Bad Request", "body.stream");
        assertError(server.post("/v1/chat/completions", "{\"messages\":\"hello\"}"),
            400, "Bad Request", "body.messages");
        assertError(server.post("/v1/chat/completions", "[1,2]"), 400, "Bad Request", "body");
    }

    @Test
    void shouldRejectMissingMessagesOrPrompt() throws Exception
    {
        final JsonNode error = assertError(server.post("/v1/chat/completions", "{\"model\":\"Qwen/Qwen3-8B\"}"),
            400, "Bad Request", "body.messages");
        assertTrue(error.get("message").asText().contains("Field required"));
        assertError(server.post("/v1/completions", "{\"max_tokens\":3}"), 400, "Bad Request", "body.prompt");
    }

    @Test
    void shouldAnswerUnknownModelWith404() throws Exception
    {
        final JsonNode error = assertError(server.post("/v1/chat/completions",
            "{\"model\":\"gpt-9\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"), 404, "NotFoundError",
            "model");
        assertEquals("The model `gpt-9` does not exist.", error.get("message").asText());
    }

    @Test
    void shouldRejectMaxTokensBeyondTheContext() throws Exception
    {
        assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":300}"),
            400, "BadRequestError", "max_tokens");
        assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_completion_tokens\":300}"),
            400, "BadRequestError", "max_completion_tokens");
        final JsonNode error = assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":250}"),
            400, "BadRequestError", "input_tokens");
        assertTrue(error.get("message").asText().startsWith("This model's maximum context length is 256 tokens."));
    }

    @Test
    void shouldRejectBodiesOverTheLimitWith413() throws Exception
    {
        final String big = "{\"prompt\":\"" + "x".repeat(70 * 1024) + "\"}";
        assertError(server.post("/v1/completions", big), 413, "RequestTooLargeError", null);
    }

    @Test
    void shouldAnswerUnknownRoutesAndMethodsLikeFastApi() throws Exception
    {
        final HttpResponse<String> missing = server.get("/v2/nothing");
        assertEquals(404, missing.statusCode());
        assertEquals("{\"detail\":\"Not Found\"}", missing.body());
        final HttpResponse<String> wrongMethod = server.get("/v1/chat/completions");
        assertEquals(405, wrongMethod.statusCode());
        assertEquals("{\"detail\":\"Method Not Allowed\"}", wrongMethod.body());
    }

    @Test
    void shouldRejectBadParametersWith400() throws Exception
    {
        assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":0}"), 400, "BadRequestError", "n");
        assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream_options\":{\"include_usage\":true}}"),
            400, "BadRequestError", "stream_options");
        assertError(server.post("/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logprobs\":true,\"top_logprobs\":99}"),
            400, "BadRequestError", "logprobs");
        assertError(server.post("/v1/completions", "{\"prompt\":[1,2,999999999]}"), 400, "BadRequestError",
            "prompt");
    }

    @Test
    void shouldKeepServingAStreamWhileBadRequestsArrive() throws Exception
    {
        final CompletableFuture<HttpResponse<String>> stream = server.client.sendAsync(
            HttpRequest.newBuilder(server.uri("/v1/chat/completions")).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]," +
                    "\"stream\":true,\"max_tokens\":200,\"stream_options\":{\"include_usage\":true}}")).build(),
            HttpResponse.BodyHandlers.ofString());
        final List<CompletableFuture<HttpResponse<String>>> bad = new ArrayList<>();
        for (int i = 0; i < 50; i++)
        {
            bad.add(server.client.sendAsync(HttpRequest.newBuilder(server.uri("/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString(i % 2 == 0 ? "{oops" : "{\"max_tokens\":-1}")).build(),
                HttpResponse.BodyHandlers.ofString()));
        }
        for (final CompletableFuture<HttpResponse<String>> response : bad)
        {
            assertEquals(400, response.get().statusCode());
        }
        final Sse.Stream result = Sse.parse(stream.get().body());
        assertTrue(result.done());
        assertEquals(200, result.usage().get("completion_tokens").asInt());
        assertEquals("length", result.finishReason(0));
    }

    @Test
    void shouldAnswer429WhenTheWaitingQueueIsFull() throws Exception
    {
        try (TestServer small = new TestServer(TestServer.context(),
            c -> c.maxNumSeqs(1).maxWaitingQueueLength(1)))
        {
            final List<CompletableFuture<HttpResponse<String>>> streams = new ArrayList<>();
            for (int i = 0; i < 2; i++)
            {
                streams.add(small.client.sendAsync(HttpRequest.newBuilder(small.uri("/v1/completions"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"x\",\"max_tokens\":300,\"stream\":" +
                        "true}")).build(), HttpResponse.BodyHandlers.ofString()));
            }
            waitForRunningAndWaiting(small, 1, 1);
            assertError(small.post("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":3}"), 429,
                "RateLimitError", null);
            for (final CompletableFuture<HttpResponse<String>> response : streams)
            {
                assertEquals("length", Sse.parse(response.get().body()).finishReason(0));
            }
        }
    }

    @Test
    void shouldAnswer503WhileShuttingDown() throws Exception
    {
        final TestServer draining = new TestServer(TestServer.context(), EngineConfig::conclude);
        final CompletableFuture<HttpResponse<String>> inFlight = draining.client.sendAsync(
            HttpRequest.newBuilder(draining.uri("/v1/completions")).POST(HttpRequest.BodyPublishers.ofString(
                "{\"prompt\":\"x\",\"max_tokens\":1500,\"stream\":true}")).build(),
            HttpResponse.BodyHandlers.ofString());
        waitForRunningAndWaiting(draining, 1, 0);
        final Thread shutdown = new Thread(() -> draining.server.shutdown(30_000_000_000L));
        shutdown.start();
        HttpResponse<String> refused = null;
        for (int i = 0; i < 200 && (null == refused || 503 != refused.statusCode()); i++)
        {
            refused = draining.post("/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":3}");
        }
        assertError(refused, 503, "ServiceUnavailableError", null);
        final Sse.Stream drained = Sse.parse(inFlight.get().body());
        assertEquals("length", drained.finishReason(0), "the in-flight request finished during the drain");
        shutdown.join();
    }

    private static void waitForRunningAndWaiting(final TestServer target, final int running, final int waiting)
        throws Exception
    {
        final String labels = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";
        for (int i = 0; i < 500; i++)
        {
            if (target.metric("vllm:num_requests_running" + labels) == running &&
                target.metric("vllm:num_requests_waiting" + labels) == waiting)
            {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("never reached running=" + running + " waiting=" + waiting);
    }
}
