package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seeded fuzz of hostile HTTP input, one fresh connection per input, on the full pipeline (connection limits, codec,
 * body limit, OpenAI handler) with a manual clock: malformed HTTP, bad percent-encoding, JSON too deep or too long,
 * trailing data, mistyped and out-of-range fields, hostile ids, invalid UTF-8, oversized bodies, unknown routes, and
 * requests that never finish. For every input: no 5xx, never a close without a response, nothing left hanging past
 * the read timeout; afterwards valid requests are still served.
 */
class HostileInputFuzzTest
{
    private static final int INPUTS = 1200;
    private static final long READ_TIMEOUT_MS = 1_000;
    private static final String CHAT = "/v1/chat/completions";
    private static final String COMPLETIONS = "/v1/completions";

    private final Random random = new Random(15);

    private String junk(final int length)
    {
        final String alphabet = "\"\\{}[]:,\r\n\t\u0000\u001f\u2028\ud800é😀%/?&= abcXYZ019-_.'`<>";
        final StringBuilder out = new StringBuilder(length);
        for (int i = 0; i < length; i++)
        {
            out.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return out.toString();
    }

    private String escaped(final String text)
    {
        final StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++)
        {
            out.append(String.format("\\u%04x", (int)text.charAt(i)));
        }
        return out.append('"').toString();
    }

    private String field()
    {
        final String[] names = {"max_tokens", "n", "stream", "temperature", "top_p", "top_k", "seed", "priority",
            "min_tokens", "ignore_eos", "stop", "stop_token_ids", "logprobs", "request_id", "model", "cache_salt",
            "stream_options", "kv_transfer_params", "presence_penalty", "repetition_penalty"};
        final String[] values = {"-1", "0", "1e309", "\"8\"", "\"x\"", "true", "null", "[]", "{}", "[1,\"a\"]",
            "9".repeat(30), "-9".repeat(5), "1.5", "\"" + "a".repeat(2000) + "\"", escaped(junk(12)), "100000",
            "{\"include_usage\":\"yes\"}", "[-1]", "\"\\ud800\""};
        return "\"" + names[random.nextInt(names.length)] + "\":" + values[random.nextInt(values.length)];
    }

    private String body()
    {
        final boolean chat = random.nextBoolean();
        final StringBuilder json = new StringBuilder(chat ? "{\"messages\":[{\"role\":\"user\",\"content\":" +
            escaped(junk(random.nextInt(20))) + "}]" : "{\"prompt\":" + escaped(junk(random.nextInt(20))));
        for (int f = random.nextInt(4); f > 0; f--)
        {
            json.append(',').append(field());
        }
        return json.append('}').toString();
    }

    private static String post(final String path, final String json, final String... headers)
    {
        return EmbeddedServe.post(path, json, headers);
    }

    /** One hostile input, as the bytes to send; the classes are picked in turn. */
    private byte[] input(final int i)
    {
        final List<Function<Random, String>> classes = List.of(
            r -> post(r.nextBoolean() ? CHAT : COMPLETIONS, body()),
            r -> post(COMPLETIONS, body(), "x-request-id: " + junk(8).replaceAll("[\r\n\u0000]", "x")),
            r -> post(CHAT, "[".repeat(1000 + r.nextInt(2000)) + "]".repeat(10)),
            r -> post(COMPLETIONS, "{\"prompt\":\"a\",\"max_tokens\":" + "7".repeat(1000 + r.nextInt(2000)) + "}"),
            r -> post(COMPLETIONS, "{\"prompt\":\"a\"}" + junk(1 + r.nextInt(10))),
            r -> post(COMPLETIONS, junk(1 + r.nextInt(60))),
            r -> "GET /" + junk(6).replaceAll("[\\s]", "") + "%zz HTTP/1.1\r\nhost: x\r\n\r\n",
            r -> "GET /v1/models HTTP/" + r.nextInt(10) + "." + r.nextInt(10) + "\r\nhost: x\r\n\r\n",
            r -> junk(5 + r.nextInt(40)) + "\r\n\r\n",
            r -> "POST " + COMPLETIONS + " HTTP/1.1\r\nhost: x\r\ncontent-length: " + junk(3) + "\r\n\r\n{}",
            r -> "POST " + COMPLETIONS + " HTTP/1.1\r\nhost: x\r\ncontent-length: 99999999\r\n\r\n{\"prompt\":",
            r -> post(r.nextBoolean() ? "/reset_prefix_cache" : "/v1/" + junk(5).replaceAll("[\\s%?]", ""), "{}"),
            r -> post(COMPLETIONS, "{\"prompt\":\"a\"}", "expect: " + junk(6).replaceAll("[\r\n]", "x")),
            r -> "POST " + CHAT + " HTTP/1.1\r\nhost: x\r\ncontent-length: 40\r\n\r\n{\"messa",
            r -> "POST " + CHAT + " HTTP/1.1\r\nhost: x\r\nx-slow: ");
        final Function<Random, String> pick = classes.get(i % classes.size());
        final byte[] text = pick.apply(random).getBytes(StandardCharsets.UTF_8);
        if (0 == i % 7 && text.length > 60)
        {
            text[text.length - 1 - random.nextInt(20)] = (byte)(0x80 | random.nextInt(0x40)); // invalid UTF-8
        }
        return text;
    }

    @Test
    void shouldAnswerEveryHostileInputWithoutA5xxOrASilentClose()
    {
        final Map<Integer, Integer> statuses = new TreeMap<>();
        final List<String> failures = new ArrayList<>();
        try (EmbeddedServe serve = new EmbeddedServe(EmbeddedServe.options(ServeOptions.Mode.ECHO)
            .connectionLimits(new ConnectionLimits(TimeUnit.SECONDS.toNanos(5),
            TimeUnit.MILLISECONDS.toNanos(READ_TIMEOUT_MS), 0)), EmbeddedServe.engine(), new ByteTokenizer()))
        {
            for (int i = 0; i < INPUTS; i++)
            {
                final byte[] input = input(i);
                final EmbeddedChannel client = serve.connect();
                client.writeInbound(Unpooled.wrappedBuffer(input));
                serve.runUntilIdle();
                for (long waited = 0; waited <= READ_TIMEOUT_MS + 200 && client.isOpen() &&
                    !hasResponse(serve, client); waited += 100)
                {
                    serve.ticker.advance(100, TimeUnit.MILLISECONDS);
                    serve.runTasks();
                }
                check(i, input, client, serve, statuses, failures);
            }
            assertTrue(failures.isEmpty(), failures.size() + " failures, e.g. " +
                failures.subList(0, Math.min(5, failures.size())));
            for (final int status : new int[] {200, 400, 404, 408, 413})
            {
                assertTrue(statuses.getOrDefault(status, 0) > 10, "every class was exercised: " + statuses);
            }
            System.out.println("hostile inputs by status: " + statuses);
            final EmbeddedChannel valid = serve.connect();
            EmbeddedServe.send(valid, post(CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]," +
                "\"stream\":true}"));
            serve.runUntilIdle();
            final HttpWire.Response response = EmbeddedServe.responses(valid).get(0);
            assertEquals(200, response.status(), "still serving after " + INPUTS + " hostile inputs: " + statuses);
            assertTrue(response.complete());
        }
    }

    private final Map<EmbeddedChannel, List<HttpWire.Response>> seen = new java.util.HashMap<>();

    /** Read what the server wrote so far into {@link #seen}; true when a response is complete. */
    private boolean hasResponse(final EmbeddedServe serve, final EmbeddedChannel client)
    {
        final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
        seen.computeIfAbsent(client, c -> new ArrayList<>()).addAll(responses);
        return !seen.get(client).isEmpty();
    }

    private void check(final int i, final byte[] input, final EmbeddedChannel client, final EmbeddedServe serve,
        final Map<Integer, Integer> statuses, final List<String> failures)
    {
        hasResponse(serve, client);
        final List<HttpWire.Response> responses = seen.remove(client);
        final String shown = "#" + i + " " + new String(input, 0, Math.min(input.length, 80),
            StandardCharsets.ISO_8859_1).replace("\r\n", "\\r\\n");
        if (responses.isEmpty())
        {
            failures.add(shown + (client.isOpen() ? ": left hanging" : ": closed without a response"));
            return;
        }
        for (final HttpWire.Response response : responses)
        {
            statuses.merge(response.status(), 1, Integer::sum);
            if (response.status() >= 500)
            {
                failures.add(shown + ": " + response.status() + " " + response.text());
            }
        }
        client.close();
    }
}
