package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Client strings that reach a response ({@code request_id}, {@code X-Request-Id}) are escaped: seeded random strings
 * of quotes, backslashes, control characters, lone surrogates, newlines and SSE look-alikes, sent to chat and
 * completions, streamed and not, and every response read back with a strict JSON parser (no trailing tokens, no
 * duplicate keys) and a strict SSE reader (one data line per event, one {@code [DONE]}, at the end).
 */
class ClientStringEscapingTest
{
    private static final JsonMapper STRICT = JsonMapper.builder()
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .build();
    private static final String[] PIECES = {"\"", "\\", "\n", "\r", "\t", "\u0000", "\u001f", "\u2028", "\ud800",
        "\udfff", "\n\ndata: [DONE]\n\n", "\",\"injected\":\"1", "}", "{", "é", "\ud83d\ude00", "data: ", "x"};
    private static final String HEADER_CHARS = "\"\\\t{}:,[] abcXYZ019'`";

    @Test
    void shouldEscapeRandomRequestIdsInEveryResponseShape()
    {
        final Random random = new Random(20261125);
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            for (int i = 0; i < 400; i++)
            {
                final String id = randomId(random);
                final boolean chat = random.nextBoolean();
                final boolean stream = random.nextBoolean();
                final String body = (chat ? "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]" :
                    "{\"prompt\":[97,98]") + ",\"max_tokens\":2,\"stream\":" + stream + ",\"request_id\":" +
                    unicodeEscaped(id) + "}";
                final EmbeddedChannel client = serve.connect();
                EmbeddedServe.send(client, EmbeddedServe.post(chat ? "/v1/chat/completions" : "/v1/completions",
                    body));
                serve.runUntilIdle();
                final String expected = (chat ? "chatcmpl-" : "cmpl-") + utf8RoundTrip(id);
                checkResponse(EmbeddedServe.responses(client), stream, expected, "request_id #" + i);
            }
        }
    }

    @Test
    void shouldEscapeRandomRequestIdHeaders()
    {
        final Random random = new Random(7);
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            for (int i = 0; i < 200; i++)
            {
                final StringBuilder id = new StringBuilder("h");
                for (int c = random.nextInt(24); c > 0; c--)
                {
                    id.append(HEADER_CHARS.charAt(random.nextInt(HEADER_CHARS.length())));
                }
                final boolean stream = random.nextBoolean();
                final EmbeddedChannel client = serve.connect();
                EmbeddedServe.send(client, EmbeddedServe.post("/v1/completions",
                    "{\"prompt\":[97],\"max_tokens\":2,\"stream\":" + stream + "}", "x-request-id: " + id));
                serve.runUntilIdle();
                checkResponse(EmbeddedServe.responses(client), stream, "cmpl-" + id.toString().strip(),
                    "header #" + i);
            }
        }
    }

    private static void checkResponse(final List<HttpWire.Response> responses, final boolean stream,
        final String expectedId, final String what)
    {
        assertEquals(1, responses.size(), what);
        final HttpWire.Response response = responses.get(0);
        assertEquals(200, response.status(), what + ": " + response.text());
        final String text = StreamWire.utf8(response.body());
        if (!stream)
        {
            assertEquals(expectedId, strict(text).get("id").asText(), what);
            return;
        }
        final List<String> events = StreamWire.events(response.body());
        assertEquals(StreamWire.DONE, events.get(events.size() - 1), what + ": ends with [DONE]");
        assertEquals(1, events.stream().filter(StreamWire.DONE::equals).count(), what + ": one [DONE] in " + text);
        for (final String data : events.subList(0, events.size() - 1))
        {
            assertEquals(expectedId, strict(data).get("id").asText(), what);
        }
    }

    private static JsonNode strict(final String json)
    {
        try
        {
            final JsonNode node = STRICT.readTree(json);
            assertTrue(node.isObject(), json);
            return node;
        }
        catch (final Exception ex)
        {
            throw new AssertionError("not strict JSON: " + json, ex);
        }
    }

    private static String randomId(final Random random)
    {
        final StringBuilder id = new StringBuilder();
        for (int p = 1 + random.nextInt(6); p > 0; p--)
        {
            id.append(PIECES[random.nextInt(PIECES.length)]);
        }
        return id.toString();
    }

    /** The JSON string literal of {@code text} with every character as a {@code \}{@code uXXXX} escape. */
    private static String unicodeEscaped(final String text)
    {
        final StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++)
        {
            out.append(String.format("\\u%04x", (int)text.charAt(i)));
        }
        return out.append('"').toString();
    }

    /** What survives UTF-8 encoding: a lone surrogate becomes '?'. */
    private static String utf8RoundTrip(final String text)
    {
        return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
    }
}
