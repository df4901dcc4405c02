package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * HTTP/1.1 pipelining on one connection: requests written back to back (in one read or while a response is still
 * being produced) are answered one at a time, in the order they were sent, whatever each one is (stream, JSON body,
 * control endpoint, error); the next generation request reaches the engine only when the previous response is done.
 */
@ExtendWith(NoNettyLeaks.class)
class PipeliningTest
{
    private static String completion(final String echo, final String extra, final String... headers)
    {
        return EmbeddedServe.post("/v1/completions", "{\"prompt\":" + Arrays.toString(ByteTokenizer.bytes(echo)) +
            extra + "}", headers);
    }

    private static String streamedText(final HttpWire.Response response)
    {
        final StringBuilder text = new StringBuilder();
        for (final String data : StreamWire.events(response.body()))
        {
            if (!StreamWire.DONE.equals(data))
            {
                text.append(StreamWire.text(data));
            }
        }
        return text.toString();
    }

    private static int inEngine(final EmbeddedServe serve)
    {
        return serve.engine0().numRunning() + serve.engine0().numWaiting();
    }

    @Test
    void shouldAnswerPipelinedStreamsOneAfterTheOtherInOrder()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completion("first", ",\"stream\":true"),
                completion("second", ",\"stream\":true"), completion("3rd", ",\"stream\":true"));
            assertEquals(1, inEngine(serve), "the next request waits for the response before it");
            for (int i = 0; i < 4; i++)
            {
                assertTrue(serve.step());
                assertEquals(1, inEngine(serve));
            }
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(3, responses.size());
            assertEquals(List.of("first", "second", "3rd"), List.of(streamedText(responses.get(0)),
                streamedText(responses.get(1)), streamedText(responses.get(2))));
            for (final HttpWire.Response response : responses)
            {
                assertTrue(response.complete());
                assertTrue(response.chunked());
            }
            assertTrue(client.isOpen());
        }
    }

    @Test
    void shouldAnswerPipelinedNonStreamingRequestsInOrderEvenWhenALaterOneIsShorter()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completion("a longer answer", "", "x-request-id: long"),
                completion("b", "", "x-request-id: short"));
            assertEquals(List.of(), EmbeddedServe.writes(client));
            assertEquals(1, inEngine(serve));
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(2, responses.size());
            final JsonNode first = StreamWire.json(responses.get(0).text());
            final JsonNode second = StreamWire.json(responses.get(1).text());
            assertEquals("cmpl-long", first.get("id").asText());
            assertEquals("a longer answer", first.at("/choices/0/text").asText());
            assertEquals("cmpl-short", second.get("id").asText());
            assertEquals("b", second.at("/choices/0/text").asText());
        }
    }

    @Test
    void shouldAnswerEveryKindOfRequestInItsTurn()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client,
                EmbeddedServe.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"j\"}]}"),
                completion("sse", ",\"stream\":true"),
                EmbeddedServe.get("/health"),
                EmbeddedServe.post("/v1/completions", "{oops"),
                EmbeddedServe.get("/version"),
                EmbeddedServe.get("/nowhere"),
                completion("z", ""));
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(7, responses.size());
            assertEquals("j", StreamWire.json(responses.get(0).text()).at("/choices/0/message/content").asText());
            assertEquals("sse", streamedText(responses.get(1)));
            assertEquals(200, responses.get(2).status());
            assertEquals(0, responses.get(2).body().length);
            assertEquals(400, responses.get(3).status());
            assertEquals("Bad Request", StreamWire.json(responses.get(3).text()).at("/error/type").asText());
            assertEquals("{\"version\":\"0.0.0-test\"}", responses.get(4).text());
            assertEquals(404, responses.get(5).status());
            assertEquals("z", StreamWire.json(responses.get(6).text()).at("/choices/0/text").asText());
            assertTrue(client.isOpen());
        }
    }

    @Test
    void shouldQueueARequestThatArrivesWhileAStreamRuns()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completion("abc", ",\"stream\":true"));
            assertTrue(serve.step());
            EmbeddedServe.send(client, EmbeddedServe.get("/load"));
            final String sofar = new String(EmbeddedServe.bytes(client), StandardCharsets.UTF_8);
            assertFalse(sofar.contains("server_load"), "the /load answer waits for the stream: " + sofar);
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = HttpWire.parse((sofar + new String(EmbeddedServe.bytes(client),
                StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8));
            assertEquals(2, responses.size());
            assertEquals("abc", streamedText(responses.get(0)));
            assertEquals("{\"server_load\":0}", responses.get(1).text(), "answered after the stream ended");
        }
    }

    @Test
    void shouldCloseAfterAResponseToConnectionCloseAndDropWhatWasPipelinedBehindIt()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completion("ab", ",\"stream\":true", "connection: close"),
                completion("never", ",\"stream\":true"), EmbeddedServe.get("/health"));
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(1, responses.size());
            assertEquals("ab", streamedText(responses.get(0)));
            assertEquals("close", responses.get(0).header("connection"));
            assertFalse(client.isOpen());
            assertEquals(0, inEngine(serve), "the requests behind it never reached the engine");
        }
    }

    @Test
    void shouldDropPipelinedRequestsWhenTheClientLeaves()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completion("abcdef", ",\"stream\":true"), completion("x", ""),
                completion("y", ""));
            assertTrue(serve.step());
            client.close();
            serve.runUntilIdle();
            assertEquals(0, inEngine(serve));
            final String metrics = serve.metrics();
            for (final String reason : new String[] {"abort", "stop", "length"})
            {
                assertEquals("abort".equals(reason) ? 1 : 0, StreamWire.metric(metrics, "vllm:request_success_total" +
                    "{engine=\"0\",finished_reason=\"" + reason + "\",model_name=\"" + EmbeddedServe.MODEL + "\"}"),
                    reason + ": the stream was aborted, the requests queued behind it never ran");
            }
            EmbeddedServe.writes(client);
        }
    }

    @Test
    void shouldAnswerAnOversizedBodyInItsTurnBehindAStream()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completion("abc", ",\"stream\":true"),
                EmbeddedServe.post("/v1/completions", "{\"prompt\":\"" + "x".repeat(EmbeddedServe.MAX_BODY_BYTES) +
                    "\"}"),
                EmbeddedServe.get("/health"));
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(3, responses.size());
            assertEquals("abc", streamedText(responses.get(0)));
            assertEquals(413, responses.get(1).status());
            assertEquals("RequestTooLargeError", StreamWire.json(responses.get(1).text()).at("/error/type").asText());
            assertEquals(200, responses.get(2).status());
            assertTrue(client.isOpen());
        }
    }

    @Test
    void shouldAnswerAnOversizedBodyInItsTurnBehindAJsonResponse()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, completion("abc", ""),
                EmbeddedServe.post("/v1/completions", "{\"prompt\":\"" + "x".repeat(EmbeddedServe.MAX_BODY_BYTES) +
                    "\"}"));
            assertEquals(List.of(), EmbeddedServe.writes(client), "nothing may overtake the first response");
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertEquals(2, responses.size());
            assertEquals("abc", StreamWire.json(responses.get(0).text()).at("/choices/0/text").asText());
            assertEquals(413, responses.get(1).status());
        }
    }
}
