package dev.tapedeck.http;

import java.util.Iterator;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The error responses of {@link OpenAiHandler} and the pipeline in front of it, on an {@link EmbeddedChannel}: each
 * client error gets its status and an OpenAI-shaped body ({@code {"error":{"message","type","param","code"}}}, or
 * FastAPI's {@code {"detail":..}} for routes and methods), and the connection stays usable unless the request asked
 * to close it or could not be parsed as HTTP.
 */
@ExtendWith(NoNettyLeaks.class)
class ErrorResponsesTest
{
    private static final String CHAT = "/v1/chat/completions";
    private static final String COMPLETIONS = "/v1/completions";
    private static final String HI = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

    /**
     * Send one request on a connection and read its one response.
     */
    private static HttpWire.Response exchange(final EmbeddedServe serve, final EmbeddedChannel client,
        final String request)
    {
        EmbeddedServe.send(client, request);
        serve.runUntilIdle();
        final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
        assertEquals(1, responses.size(), request);
        assertTrue(responses.get(0).complete());
        return responses.get(0);
    }

    /**
     * Check an OpenAI-shaped error.
     *
     * @return its "error" object.
     */
    private static JsonNode assertError(final HttpWire.Response response, final int status, final String type,
        final String param)
    {
        assertEquals(status, response.status(), response.text());
        assertEquals("application/json", response.header("content-type"));
        assertEquals(Integer.toString(response.body().length), response.header("content-length"));
        final JsonNode body = StreamWire.json(StreamWire.utf8(response.body()));
        assertEquals(1, body.size(), response.text());
        final JsonNode error = body.get("error");
        final Iterator<String> fields = error.fieldNames();
        assertEquals(List.of("message", "type", "param", "code"), List.of(fields.next(), fields.next(),
            fields.next(), fields.next()));
        assertFalse(fields.hasNext());
        assertEquals(status, error.get("code").asInt());
        assertEquals(type, error.get("type").asText());
        if (null == param)
        {
            assertTrue(error.get("param").isNull(), response.text());
        }
        else
        {
            assertEquals(param, error.get("param").asText());
        }
        assertFalse(error.get("message").asText().isEmpty());
        return error;
    }

    private static void assertDetail(final HttpWire.Response response, final int status, final String detail)
    {
        assertEquals(status, response.status());
        assertEquals("application/json", response.header("content-type"));
        assertEquals("{\"detail\":\"" + detail + "\"}", response.text());
    }

    /**
     * The connection still serves requests.
     */
    private static void assertUsable(final EmbeddedServe serve, final EmbeddedChannel client)
    {
        assertTrue(client.isOpen());
        final HttpWire.Response next = exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
            "{\"prompt\":[111,107]}"));
        assertEquals(200, next.status(), next.text());
        assertEquals("ok", StreamWire.json(next.text()).at("/choices/0/text").asText());
    }

    @Test
    void shouldAnswerBodyValidationErrorsWith400AndKeepTheConnection()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final JsonNode malformed = assertError(exchange(serve, client,
                EmbeddedServe.post(CHAT, "{\"messages\": [}")), 400, "Bad Request", "body");
            assertTrue(malformed.get("message").asText().contains("json_invalid"));
            assertError(exchange(serve, client, EmbeddedServe.post(CHAT, HI + ",\"max_tokens\":\"ten\"}")), 400,
                "Bad Request", "body.max_tokens");
            assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS, "{\"max_tokens\":3}")), 400,
                "Bad Request", "body.prompt");
            assertError(exchange(serve, client, EmbeddedServe.post(CHAT, HI + ",\"n\":0}")), 400, "BadRequestError",
                "n");
            assertError(exchange(serve, client, EmbeddedServe.post(CHAT, HI + ",\"top_logprobs\":3}")), 400,
                "BadRequestError", "top_logprobs");
            assertEquals(0, serve.engine0().stepCount(), "nothing reached the engine");
            assertUsable(serve, client);
        }
    }

    @Test
    void shouldAnswerJsonBeyondTheParserLimitsWith400()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final JsonNode error = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "[".repeat(1100) + "]".repeat(1100))), 400, "Bad Request", "body");
            assertTrue(error.get("message").asText().contains("nesting depth"), error.toString());
            final JsonNode digits = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "{\"prompt\":\"hi\",\"max_tokens\":" + "9".repeat(1100) + "}")), 400, "Bad Request", "body");
            assertTrue(digits.get("message").asText().contains("Number value length"), digits.toString());
            assertUsable(serve, client);
        }
    }

    @Test
    void shouldRefuseAnUnknownHttpVersionWith400AndClose()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final JsonNode error = assertError(exchange(serve, client, "GET /v1/models HTTP/9.9\r\nhost: x\r\n\r\n"),
                400, "Bad Request", null);
            assertTrue(error.get("message").asText().contains("HTTP/9.9"), error.toString());
            assertFalse(client.isOpen());
        }
    }

    @Test
    void shouldAnswerAnUnknownExpectationWith417AndABody()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final JsonNode error = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "{\"prompt\":[97]}", "expect: teapot")), 417, "ExpectationFailed", null);
            assertTrue(error.get("message").asText().contains("teapot"), error.toString());
        }
    }

    @Test
    void shouldAnswerABadPercentEncodingInThePathWith400()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            for (final String path : new String[] {"/%zz", "/v1/chat%2", "/v1/models?x=%zz"})
            {
                final JsonNode error = assertError(exchange(serve, client, EmbeddedServe.get(path)), 400,
                    "Bad Request", null);
                assertTrue(error.get("message").asText().contains("percent-encoding"), error.toString());
            }
            assertUsable(serve, client);
        }
    }

    @Test
    void shouldAnswerRequestsThatDoNotFitTheModelWith400()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final int maxLen = EmbeddedServe.MAX_MODEL_LEN;
            final JsonNode tooMany = assertError(exchange(serve, client, EmbeddedServe.post(CHAT, HI +
                ",\"max_completion_tokens\":" + (maxLen + 1) + "}")), 400, "BadRequestError", "max_completion_tokens");
            assertEquals("max_completion_tokens=257 cannot be greater than max_model_len=256. Please request fewer " +
                "output tokens.", tooMany.get("message").asText());
            final JsonNode context = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "{\"prompt\":\"" + "x".repeat(250) + "\",\"max_tokens\":10}")), 400, "BadRequestError", "input_tokens");
            assertEquals("This model's maximum context length is 256 tokens. However, you requested 10 output " +
                "tokens and your prompt contains 250 input tokens, for a total of 260 tokens. Please reduce the " +
                "length of the input prompt or the number of requested output tokens.",
                context.get("message").asText());
            assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS, "{\"prompt\":\"\"}")), 400,
                "BadRequestError", "prompt");
            final JsonNode vocabulary = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "{\"prompt\":[1,2,900]}")), 400, "BadRequestError", "prompt");
            assertEquals("Token id 900 is out of vocabulary", vocabulary.get("message").asText());
            assertEquals(0, serve.engine0().stepCount(), "nothing reached the engine");
            assertUsable(serve, client);
        }
    }

    @Test
    void shouldAnswerAnUnknownModelWith404()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final JsonNode error = assertError(exchange(serve, client, EmbeddedServe.post(CHAT,
                HI + ",\"model\":\"gpt-9\"}")), 404, "NotFoundError", "model");
            assertEquals("The model `gpt-9` does not exist.", error.get("message").asText());
            final HttpWire.Response alias = exchange(serve, client, EmbeddedServe.post(CHAT,
                HI + ",\"model\":\"alias\"}"));
            assertEquals(200, alias.status());
            assertEquals(EmbeddedServe.MODEL, StreamWire.json(alias.text()).get("model").asText(),
                "responses name the first served name");
        }
    }

    @Test
    void shouldAnswerUnknownRoutesWith404AndWrongMethodsWith405LikeFastApi()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            assertDetail(exchange(serve, client, EmbeddedServe.get("/v2/nothing")), 404, "Not Found");
            assertDetail(exchange(serve, client, EmbeddedServe.post("/v1/load_lora_adapter", "{}")), 404,
                "Not Found");
            for (final String path : new String[] {CHAT, COMPLETIONS, "/reset_prefix_cache", "/tapedeck/stats/reset"})
            {
                assertDetail(exchange(serve, client, EmbeddedServe.get(path)), 405, "Method Not Allowed");
            }
            for (final String path : new String[] {"/health", "/version", "/load", "/v1/models", "/metrics",
                "/tapedeck/stats"})
            {
                assertDetail(exchange(serve, client, EmbeddedServe.post(path, "{}")), 405, "Method Not Allowed");
                assertEquals(200, exchange(serve, client, EmbeddedServe.get(path)).status(), path);
            }
            assertUsable(serve, client);
        }
    }

    @Test
    void shouldAnswerAnOversizedBodyWith413AndKeepTheConnection()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final JsonNode error = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "{\"prompt\":\"" + "x".repeat(EmbeddedServe.MAX_BODY_BYTES) + "\"}")), 413, "RequestTooLargeError",
                null);
            assertEquals("Request body exceeds the limit of 4096 bytes (--max-request-body-size).",
                error.get("message").asText());
            assertUsable(serve, client);
        }
    }

    @Test
    void shouldAnswerAnOversizedChunkedBodyWith413()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final String part = "x".repeat(3000);
            final String chunk = Integer.toHexString(part.length()) + "\r\n" + part + "\r\n";
            final HttpWire.Response response = exchange(serve, client, "POST " + COMPLETIONS + " HTTP/1.1\r\n" +
                "host: test\r\ntransfer-encoding: chunked\r\n\r\n" + chunk + chunk + "0\r\n\r\n");
            assertError(response, 413, "RequestTooLargeError", null);
            assertUsable(serve, client);
        }
    }

    @Test
    void shouldCloseAfterA413WhenTheClientAskedToClose()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final HttpWire.Response response = exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "{\"prompt\":\"" + "x".repeat(EmbeddedServe.MAX_BODY_BYTES) + "\"}", "connection: close"));
            assertError(response, 413, "RequestTooLargeError", null);
            assertEquals("close", response.header("connection"));
            assertFalse(client.isOpen());
        }
    }

    @Test
    void shouldAnswer429WhenTheWaitingQueueIsFull()
    {
        try (EmbeddedServe serve = new EmbeddedServe(EmbeddedServe.options(ServeOptions.Mode.ECHO),
            EmbeddedServe.engine().maxNumSeqs(1).maxWaitingQueueLength(1), new ByteTokenizer()))
        {
            final EmbeddedChannel running = serve.connect();
            final EmbeddedChannel waiting = serve.connect();
            final EmbeddedChannel refused = serve.connect();
            EmbeddedServe.send(running, EmbeddedServe.post(COMPLETIONS, "{\"prompt\":[97,98,99],\"stream\":true}"));
            EmbeddedServe.send(waiting, EmbeddedServe.post(COMPLETIONS, "{\"prompt\":[100,101],\"stream\":true}"));
            assertEquals(1, serve.engine0().numRunning());
            assertEquals(1, serve.engine0().numWaiting());
            EmbeddedServe.send(refused, EmbeddedServe.post(COMPLETIONS, "{\"prompt\":[102]}"));
            final List<HttpWire.Response> responses = EmbeddedServe.responses(refused);
            assertEquals(1, responses.size());
            final JsonNode error = assertError(responses.get(0), 429, "RateLimitError", null);
            assertTrue(error.get("message").asText().contains("max-waiting-queue-length=1"), error.toString());
            assertEquals("1", responses.get(0).header("retry-after"), "a 429 says when to retry");
            assertTrue(refused.isOpen());
            serve.runUntilIdle();
            assertEquals("stop", finishReason(EmbeddedServe.responses(running).get(0)));
            assertEquals("stop", finishReason(EmbeddedServe.responses(waiting).get(0)), "the queued one still ran");
            assertUsable(serve, refused);
        }
    }

    @Test
    void shouldAnswer400WhenTheChildrenOfOneRequestCanNeverFitTheQueue()
    {
        try (EmbeddedServe serve = new EmbeddedServe(EmbeddedServe.options(ServeOptions.Mode.ECHO),
            EmbeddedServe.engine().maxWaitingQueueLength(3), new ByteTokenizer()))
        {
            final EmbeddedChannel client = serve.connect();
            final HttpWire.Response never = exchange(serve, client, EmbeddedServe.post(COMPLETIONS,
                "{\"prompt\":[97],\"n\":4}"));
            assertError(never, 400, "BadRequestError", "n");
            assertNull(never.header("retry-after"), "not worth retrying");
            assertEquals(0, serve.engine0().stepCount(), "none of the four was submitted");
            assertEquals(200, exchange(serve, client, EmbeddedServe.post(COMPLETIONS, "{\"prompt\":[97],\"n\":3}"))
                .status());
        }
    }

    private static String finishReason(final HttpWire.Response stream)
    {
        String reason = null;
        for (final String data : StreamWire.events(stream.body()))
        {
            if (!StreamWire.DONE.equals(data) && !StreamWire.json(data).at("/choices/0/finish_reason").isNull())
            {
                reason = StreamWire.json(data).at("/choices/0/finish_reason").asText();
            }
        }
        return reason;
    }

    @Test
    void shouldAnswer503AndCloseWhileShuttingDown()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            serve.instance.beginShutdown();
            final HttpWire.Response response = exchange(serve, client, EmbeddedServe.post(CHAT, HI + "}"));
            final JsonNode error = assertError(response, 503, "ServiceUnavailableError", null);
            assertEquals("The server is shutting down.", error.get("message").asText());
            assertEquals("close", response.header("connection"));
            assertFalse(client.isOpen());
            final EmbeddedChannel probe = serve.connect();
            assertEquals(200, exchange(serve, probe, EmbeddedServe.get("/health")).status(), "health still answers");
        }
    }

    @Test
    void shouldAnswer401WithoutTheApiKeyOnV1AndTheRoutesThatChangeState()
    {
        try (EmbeddedServe serve = new EmbeddedServe(EmbeddedServe.options("s3cret"), EmbeddedServe.engine(),
            new ByteTokenizer()))
        {
            final EmbeddedChannel client = serve.connect();
            final String body = "{\"prompt\":[97]}";
            for (final String request : new String[] {EmbeddedServe.post(COMPLETIONS, body),
                EmbeddedServe.post(COMPLETIONS, body, "authorization: Bearer wrong"),
                EmbeddedServe.post(COMPLETIONS, body, "authorization: s3cret"), EmbeddedServe.get("/v1/models"),
                EmbeddedServe.post("/reset_prefix_cache", ""), EmbeddedServe.post("/tapedeck/stats/reset", ""),
                EmbeddedServe.post(COMPLETIONS, body, "authorization: Bearer s3cret2")})
            {
                final HttpWire.Response response = exchange(serve, client, request);
                assertEquals(401, response.status(), request);
                assertEquals("{\"error\":\"Unauthorized\"}", response.text());
                assertTrue(client.isOpen());
            }
            assertEquals(200, exchange(serve, client, EmbeddedServe.get("/health")).status());
            assertEquals(200, exchange(serve, client, EmbeddedServe.get("/tapedeck/stats")).status(), "a read");
            assertEquals(200, exchange(serve, client, EmbeddedServe.post(COMPLETIONS, body,
                "authorization: Bearer s3cret")).status());
            assertEquals(200, exchange(serve, client, EmbeddedServe.post("/reset_prefix_cache", "",
                "authorization: Bearer s3cret")).status());
            assertEquals(200, exchange(serve, client, EmbeddedServe.post("/tapedeck/stats/reset", "",
                "authorization: Bearer s3cret")).status());
        }
    }

    @Test
    void shouldAnswerARequestThatIsNotValidHttpWith400AndClose()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final HttpWire.Response response = exchange(serve, client, "POST " + COMPLETIONS + " HTTP/1.1\r\n" +
                "host: test\r\ncontent-length: twelve\r\n\r\n{}");
            final JsonNode error = assertError(response, 400, "Bad Request", null);
            assertTrue(error.get("message").asText().startsWith("malformed HTTP request: "), error.toString());
            assertEquals("close", response.header("connection"));
            assertFalse(client.isOpen());
        }
    }

    @Test
    void shouldAnswerABadDataParallelRankWith400()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            final String body = "{\"prompt\":[97]}";
            final JsonNode notANumber = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS, body,
                "x-data-parallel-rank: first")), 400, "BadRequestError", null);
            assertEquals("X-data-parallel-rank must be an integer, got 'first'", notANumber.get("message").asText());
            final JsonNode outOfRange = assertError(exchange(serve, client, EmbeddedServe.post(COMPLETIONS, body,
                "x-data-parallel-rank: 1")), 400, "BadRequestError", null);
            assertEquals("Requested DP rank 1 is out of range [0, 1)", outOfRange.get("message").asText());
            final HttpWire.Response pinned = exchange(serve, client, EmbeddedServe.post(COMPLETIONS, body,
                "x-data-parallel-rank: 0"));
            assertEquals(200, pinned.status());
            assertNull(pinned.header("connection"));
        }
    }
}
