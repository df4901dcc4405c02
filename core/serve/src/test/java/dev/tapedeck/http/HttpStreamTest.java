package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.tokens.ChatTemplate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link HttpStream} on an {@link EmbeddedChannel}, one engine step at a time: the SSE head committed at once, each
 * step's events as exactly one HTTP chunk framed by hand, the final event, usage and {@code [DONE]} in the last one,
 * then the terminating chunk; keep-alive and {@code Connection: close}; a slow reader's tokens merged; a client that
 * leaves; the non-streaming body.
 */
@ExtendWith(NoNettyLeaks.class)
class HttpStreamTest
{
    private static final String SSE_HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n" +
        "transfer-encoding: chunked\r\n\r\n";
    private static final String LAST_CHUNK = "0\r\n\r\n";
    private static final String ABORTS = "vllm:request_success_total{engine=\"0\",finished_reason=\"abort\"," +
        "model_name=\"" + EmbeddedServe.MODEL + "\"}";

    private static String completions(final String text, final String extra)
    {
        return EmbeddedServe.post("/v1/completions", "{\"prompt\":" + Arrays.toString(ByteTokenizer.bytes(text)) +
            extra + "}");
    }

    private static String chat(final String content, final String extra)
    {
        return EmbeddedServe.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":" +
            StreamWire.JSON.valueToTree(content) + "}]" + extra + "}");
    }

    private static String ascii(final byte[] bytes)
    {
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    /**
     * @param write one write of the server.
     * @return the payload of the single, complete HTTP chunk the write must be.
     */
    private static byte[] chunkPayload(final byte[] write)
    {
        final String text = new String(write, StandardCharsets.ISO_8859_1);
        final int lineEnd = text.indexOf("\r\n");
        assertTrue(lineEnd > 0, "no chunk size line: " + text);
        final String size = text.substring(0, lineEnd);
        assertTrue(size.matches("[0-9a-f]+"), "chunk size '" + size + "'");
        final int length = Integer.parseInt(size, 16);
        assertEquals(lineEnd + 2 + length + 2, write.length, "one chunk, nothing before or after it: " + text);
        assertEquals("\r\n", text.substring(text.length() - 2));
        return Arrays.copyOfRange(write, lineEnd + 2, lineEnd + 2 + length);
    }

    /**
     * Step the engine to the end; every write must be one HTTP chunk of whole events, or the terminating chunk.
     *
     * @return the events of each step that wrote something, in order.
     */
    private static List<List<String>> eventsPerStep(final EmbeddedServe serve, final EmbeddedChannel client)
    {
        final List<List<String>> steps = new ArrayList<>();
        boolean ended = false;
        while (serve.step())
        {
            final List<byte[]> writes = EmbeddedServe.writes(client);
            if (writes.isEmpty())
            {
                continue;
            }
            assertFalse(ended, "writes after the terminating chunk");
            steps.add(StreamWire.events(chunkPayload(writes.get(0))));
            if (writes.size() > 1)
            {
                assertEquals(2, writes.size(), "one chunk per step, then at most the terminator");
                assertEquals(LAST_CHUNK, ascii(writes.get(1)));
                ended = true;
            }
        }
        assertTrue(ended, "the stream never ended");
        return steps;
    }

    @Test
    void shouldCommitTheStreamingHeadBeforeTheFirstToken()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completions("abc", ",\"stream\":true"));
            final List<byte[]> writes = EmbeddedServe.writes(client);
            assertEquals(1, writes.size());
            assertEquals(SSE_HEAD, ascii(writes.get(0)));
            assertEquals(1, serve.engine0().numRunning() + serve.engine0().numWaiting());
            assertEquals(EmbeddedServe.STEP_NS, serve.engine0().nextDeadlineNs() - serve.ticker.nanoTime(),
                "the engine's first step is under way and the loop's timer is armed for its end");
        }
    }

    @Test
    void shouldWriteEachStepAsOneChunkAndEndWithDoneAndTheLastChunk()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completions("abcde", ",\"stream\":true"));
            assertEquals(SSE_HEAD, ascii(EmbeddedServe.bytes(client)));
            final List<List<String>> steps = eventsPerStep(serve, client);
            assertEquals(5, steps.size(), "one token per step, one chunk per token");
            final String id = StreamWire.json(steps.get(0).get(0)).get("id").asText();
            assertTrue(id.startsWith("cmpl-"), id);
            for (int i = 0; i < 5; i++)
            {
                final List<String> events = steps.get(i);
                assertEquals(i < 4 ? 1 : 2, events.size(), "step " + i + ": " + events);
                final JsonNode event = StreamWire.json(events.get(0));
                assertEquals(id, event.get("id").asText());
                assertEquals("text_completion", event.get("object").asText());
                assertEquals(EmbeddedServe.MODEL, event.get("model").asText());
                assertEquals(String.valueOf("abcde".charAt(i)), StreamWire.text(events.get(0)));
                final JsonNode choice = event.get("choices").get(0);
                assertEquals(0, choice.get("index").asInt());
                if (i < 4)
                {
                    assertTrue(choice.get("finish_reason").isNull());
                }
                else
                {
                    assertEquals("stop", choice.get("finish_reason").asText(), "the whole echo fitted");
                    assertTrue(choice.get("stop_reason").isNull());
                }
            }
            assertEquals(StreamWire.DONE, steps.get(4).get(1), "[DONE] goes in the last step's chunk");
            assertTrue(client.isOpen(), "keep-alive by default");
            assertEquals(0, serve.engine0().numRunning());
        }
    }

    @Test
    void shouldStreamChatWithTheRoleFirstAndUsageBeforeDone()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, chat("hey", ",\"stream\":true,\"stream_options\":{\"include_usage\":true}"));
            EmbeddedServe.writes(client);
            final List<List<String>> steps = eventsPerStep(serve, client);
            assertEquals(3, steps.size());
            final JsonNode role = StreamWire.json(steps.get(0).get(0));
            assertEquals("chat.completion.chunk", role.get("object").asText());
            assertEquals("assistant", role.at("/choices/0/delta/role").asText());
            assertEquals("", role.at("/choices/0/delta/content").asText());
            assertEquals("h", StreamWire.text(steps.get(0).get(1)), "role and first token share the first chunk");
            assertEquals("e", StreamWire.text(steps.get(1).get(0)));
            final List<String> last = steps.get(2);
            assertEquals(3, last.size(), "final choice event, usage, [DONE]: " + last);
            assertEquals("y", StreamWire.text(last.get(0)));
            assertEquals("stop", StreamWire.json(last.get(0)).at("/choices/0/finish_reason").asText());
            final JsonNode usage = StreamWire.json(last.get(1));
            assertEquals(0, usage.get("choices").size());
            final int prompt = ByteTokenizer.bytes(ChatTemplate.PLAIN.render(
                List.of(new ChatTemplate.Message("user", "hey")))).length;
            assertEquals(prompt, usage.at("/usage/prompt_tokens").asInt());
            assertEquals(3, usage.at("/usage/completion_tokens").asInt());
            assertEquals(prompt + 3, usage.at("/usage/total_tokens").asInt());
            assertEquals(StreamWire.DONE, last.get(2));
        }
    }

    @Test
    void shouldCarryEveryChoiceOfNInTheSameChunks()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completions("xy", ",\"stream\":true,\"n\":2"));
            EmbeddedServe.writes(client);
            assertEquals(2, serve.engine0().numWaiting() + serve.engine0().numRunning());
            final List<List<String>> steps = eventsPerStep(serve, client);
            assertEquals(2, steps.size(), "both children share each step");
            for (int step = 0; step < 2; step++)
            {
                for (int index = 0; index < 2; index++)
                {
                    final JsonNode choice = StreamWire.json(steps.get(step).get(index)).at("/choices/0");
                    assertEquals(index, choice.get("index").asInt());
                    assertEquals(String.valueOf("xy".charAt(step)), choice.get("text").asText());
                }
            }
            assertEquals(List.of(StreamWire.DONE), steps.get(1).subList(2, 3), "one [DONE] after both finished");
        }
    }

    @Test
    void shouldQueueTheChoicesOfNTogetherAfterOneJitteredFrontendDelay()
    {
        try (EmbeddedServe serve = new EmbeddedServe(EmbeddedServe.options(ServeOptions.Mode.ECHO),
            EmbeddedServe.engine().frontendDelayNs(20 * EmbeddedServe.STEP_NS).frontendDelayJitter(0.8),
            new ByteTokenizer()))
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completions("xy", ",\"stream\":true,\"n\":3"));
            EmbeddedServe.writes(client);
            final List<List<String>> steps = eventsPerStep(serve, client);
            assertEquals(2, steps.size(), "the frontend works once for the request: its 3 children reach the " +
                "queue together and share each step");
            assertEquals(3, steps.get(0).size());
            assertEquals(4, steps.get(1).size(), "3 choices and one [DONE]");
        }
    }

    @Test
    void shouldServeTheNextRequestOnAKeptAliveConnection()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            for (final String text : new String[] {"one", "two"})
            {
                EmbeddedServe.send(client, completions(text, ",\"stream\":true"));
                serve.runUntilIdle();
                final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
                assertEquals(1, responses.size());
                final HttpWire.Response response = responses.get(0);
                assertTrue(response.complete());
                assertNull(response.header("connection"));
                final List<String> events = StreamWire.events(response.body());
                assertEquals(text, StreamWire.text(events.get(0)) + StreamWire.text(events.get(1)) +
                    StreamWire.text(events.get(2)));
                assertTrue(client.isOpen());
            }
        }
    }

    @Test
    void shouldCloseAfterTheLastChunkWhenTheClientAsksForClose()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, EmbeddedServe.post("/v1/completions", "{\"prompt\":[97,98],\"stream\":true}",
                "connection: close"));
            final String head = ascii(EmbeddedServe.bytes(client));
            assertTrue(head.startsWith("HTTP/1.1 200 OK\r\n") && head.contains("\r\nconnection: close\r\n"), head);
            assertTrue(serve.step());
            assertTrue(client.isOpen(), "open while the stream runs");
            serve.runUntilIdle();
            final List<byte[]> writes = EmbeddedServe.writes(client);
            assertEquals(LAST_CHUNK, ascii(writes.get(writes.size() - 1)), "the stream was ended before closing");
            assertTrue(StreamWire.events(chunkPayload(writes.get(writes.size() - 2))).contains(StreamWire.DONE));
            assertFalse(client.isOpen());
        }
    }

    @Test
    void shouldMergeWhatASlowReaderMissedIntoOneEvent()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completions("abcdef", ",\"stream\":true"));
            EmbeddedServe.writes(client);
            assertTrue(serve.step());
            assertEquals(List.of("a"), texts(EmbeddedServe.writes(client)));
            client.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
            serve.runTasks();
            assertFalse(client.isWritable());
            assertTrue(serve.step());
            assertTrue(serve.step());
            assertTrue(serve.step());
            assertEquals(List.of(), EmbeddedServe.writes(client), "nothing is written to an unwritable channel");
            client.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
            serve.runTasks();
            assertEquals(List.of("bcd"), texts(EmbeddedServe.writes(client)), "three tokens, one event, at once");
            final long latenessNs = serve.instance.rank(0).emissionLatenessNs().getMaxValue();
            // the lateness histogram keeps two significant digits: within 1%
            assertTrue(latenessNs >= 2 * EmbeddedServe.STEP_NS * 0.99 && latenessNs <= 2 * EmbeddedServe.STEP_NS *
                1.01, "'b' waited two steps: " + latenessNs);
            serve.runUntilIdle();
            final List<byte[]> rest = EmbeddedServe.writes(client);
            assertEquals(LAST_CHUNK, ascii(rest.remove(rest.size() - 1)));
            assertEquals(List.of("e", "f"), texts(rest));
        }
    }

    private static List<String> texts(final List<byte[]> chunks)
    {
        final List<String> texts = new ArrayList<>();
        for (final byte[] chunk : chunks)
        {
            final List<String> events = StreamWire.events(chunkPayload(chunk));
            texts.add(StreamWire.text(events.get(0)));
        }
        return texts;
    }

    @Test
    void shouldAbortTheEngineRequestWhenTheClientGoesAway()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completions("a long answer", ",\"stream\":true"));
            assertTrue(serve.step());
            assertEquals(1, serve.engine0().numRunning());
            assertEquals(0, StreamWire.metric(serve.metrics(), ABORTS));
            client.close();
            serve.runTasks();
            assertEquals(0, serve.engine0().numRunning() + serve.engine0().numWaiting(), "the slot is free at once");
            assertEquals(1, StreamWire.metric(serve.metrics(), ABORTS));
            serve.runUntilIdle();
            EmbeddedServe.writes(client);
        }
    }

    @Test
    void shouldAnswerWithOneJsonBodyWhenNotStreaming()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, chat("ok!", ",\"max_tokens\":2"));
            assertTrue(serve.step());
            assertEquals(List.of(), EmbeddedServe.writes(client), "nothing before the answer is complete");
            assertTrue(serve.step());
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(1, responses.size());
            final HttpWire.Response response = responses.get(0);
            assertEquals(200, response.status());
            assertFalse(response.chunked());
            assertTrue(response.complete());
            assertEquals("application/json", response.header("content-type"));
            assertEquals(Integer.toString(response.body().length), response.header("content-length"));
            final JsonNode body = StreamWire.json(StreamWire.utf8(response.body()));
            assertEquals("chat.completion", body.get("object").asText());
            assertTrue(body.get("id").asText().startsWith("chatcmpl-"));
            assertEquals("ok", body.at("/choices/0/message/content").asText());
            assertEquals("length", body.at("/choices/0/finish_reason").asText(), "max_tokens cut the echo");
            assertEquals(2, body.at("/usage/completion_tokens").asInt());
            assertTrue(client.isOpen());
        }
    }

    @Test
    void shouldNameTheResponseAfterTheRequestIdHeader()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, EmbeddedServe.post("/v1/completions", "{\"prompt\":[97],\"request_id\":\"b\"}",
                "x-request-id: from-header"));
            serve.runUntilIdle();
            final JsonNode body = StreamWire.json(EmbeddedServe.responses(client).get(0).text());
            assertEquals("cmpl-from-header", body.get("id").asText(), "the header wins over the body's request_id");
        }
    }
}
