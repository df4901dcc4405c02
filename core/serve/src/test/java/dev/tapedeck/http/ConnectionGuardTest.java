package dev.tapedeck.http;

import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ConnectionGuard} on embedded connections with a manual clock: an idle connection is closed after the
 * keep-alive timeout, a request whose head or body does not arrive in time gets 408 and the connection is closed, a
 * stream longer than both is never cut, and connections over the cap get 503.
 */
class ConnectionGuardTest
{
    private static final long KEEP_ALIVE_MS = 500;
    private static final long READ_MS = 2_000;

    private static EmbeddedServe serve(final int maxConnections)
    {
        return serve(maxConnections, ServeOptions.Mode.ECHO);
    }

    private static EmbeddedServe serve(final int maxConnections, final ServeOptions.Mode mode)
    {
        return new EmbeddedServe(EmbeddedServe.options(mode).connectionLimits(new ConnectionLimits(
            TimeUnit.MILLISECONDS.toNanos(KEEP_ALIVE_MS), TimeUnit.MILLISECONDS.toNanos(READ_MS), maxConnections)),
            EmbeddedServe.engine(), new ByteTokenizer());
    }

    private static void wait(final EmbeddedServe serve, final long ms)
    {
        for (long waited = 0; waited < ms; waited += 50)
        {
            serve.ticker.advance(50, TimeUnit.MILLISECONDS);
            serve.runTasks();
        }
    }

    @Test
    void shouldCloseAnIdleConnectionAfterTheKeepAliveTimeoutAndOnlyThen()
    {
        try (EmbeddedServe serve = serve(0))
        {
            final EmbeddedChannel never = serve.connect();
            wait(serve, KEEP_ALIVE_MS - 100);
            assertTrue(never.isOpen(), "not yet");
            wait(serve, 200);
            assertFalse(never.isOpen(), "a connection that never sent a byte is closed");
            assertEquals(List.of(), EmbeddedServe.writes(never), "closed without a word, as uvicorn does");

            final EmbeddedChannel used = serve.connect();
            EmbeddedServe.send(used, EmbeddedServe.post("/v1/completions", "{\"prompt\":[97],\"max_tokens\":1}"));
            serve.runUntilIdle();
            assertEquals(200, EmbeddedServe.responses(used).get(0).status());
            wait(serve, KEEP_ALIVE_MS - 100);
            EmbeddedServe.send(used, EmbeddedServe.post("/v1/completions", "{\"prompt\":[98],\"max_tokens\":1}"));
            serve.runUntilIdle();
            assertEquals(200, EmbeddedServe.responses(used).get(0).status(), "kept alive: it came back in time");
            wait(serve, KEEP_ALIVE_MS + 100);
            assertFalse(used.isOpen(), "idle again, and for too long");
        }
    }

    @Test
    void shouldAnswer408WhenARequestDoesNotArriveInTime()
    {
        try (EmbeddedServe serve = serve(0))
        {
            final EmbeddedChannel slowloris = serve.connect();
            EmbeddedServe.send(slowloris, "POST /v1/completions HTTP/1.1\r\n");
            for (int i = 0; i < 5; i++)
            {
                EmbeddedServe.send(slowloris, "x-slow-" + i + ": 1\r\n");
                wait(serve, 300); // a header line every 300 ms: not idle, so no keep-alive timeout
            }
            assertTrue(slowloris.isOpen(), "1.5 s of trickling: the read timeout is 2 s from the first byte");
            wait(serve, 600);
            assertFalse(slowloris.isOpen());
            final List<HttpWire.Response> responses = EmbeddedServe.responses(slowloris);
            assertEquals(1, responses.size());
            assertEquals(408, responses.get(0).status());
            final JsonNode error = StreamWire.json(responses.get(0).text()).get("error");
            assertEquals("RequestTimeoutError", error.get("type").asText());
            assertTrue(error.get("message").asText().contains("--http-read-timeout"), error.toString());

            final EmbeddedChannel unfinished = serve.connect();
            EmbeddedServe.send(unfinished, "POST /v1/completions HTTP/1.1\r\ncontent-length: 100\r\n\r\n{\"pro");
            wait(serve, READ_MS + 100);
            assertEquals(408, EmbeddedServe.responses(unfinished).get(0).status(), "an unfinished body");
            assertFalse(unfinished.isOpen());
        }
    }

    @Test
    void shouldNeverCutAStreamLongerThanTheTimeouts()
    {
        try (EmbeddedServe serve = serve(0, ServeOptions.Mode.RANDOM))
        {
            final EmbeddedChannel client = serve.connect();
            EmbeddedServe.send(client, EmbeddedServe.post("/v1/completions",
                "{\"prompt\":[97],\"max_tokens\":200,\"ignore_eos\":true,\"stream\":true}"));
            final int steps = serve.runUntilIdle(); // 10 ms per step: 2 s of streaming
            assertTrue(steps >= 200, "steps " + steps);
            final List<HttpWire.Response> responses = EmbeddedServe.responses(client);
            assertTrue(responses.get(0).complete(), "the stream ran to its end");
            assertTrue(client.isOpen());
        }
    }

    @Test
    void shouldCheckEveryConnectionFromOneSweepThatRunsOnlyWhileConnectionsAreOpen()
    {
        try (EmbeddedServe serve = serve(0))
        {
            final ConnectionGuard.Sweep sweep = serve.instance.connectionSweep();
            assertEquals(TimeUnit.MILLISECONDS.toNanos(KEEP_ALIVE_MS / 10), sweep.periodNs(),
                "a tenth of the shorter timeout");
            final List<EmbeddedChannel> idle = new java.util.ArrayList<>();
            for (int i = 0; i < 6; i++)
            {
                idle.add(serve.connect());
                wait(serve, 50); // opened at different times, checked by the same periodic task
            }
            assertEquals(6, sweep.size());
            idle.get(0).close();
            serve.runTasks();
            assertEquals(5, sweep.size(), "a closed connection leaves the sweep");
            wait(serve, KEEP_ALIVE_MS + KEEP_ALIVE_MS / 10);
            for (int i = 1; i < idle.size(); i++)
            {
                assertFalse(idle.get(i).isOpen(), "idle connection " + i + " is closed, none skipped");
            }
            assertEquals(0, sweep.size());
            assertFalse(sweep.scheduled(), "nothing left to check: the periodic task is cancelled");

            final EmbeddedChannel later = serve.connect();
            assertEquals(1, sweep.size());
            assertTrue(sweep.scheduled(), "a new connection starts the task again");
            wait(serve, KEEP_ALIVE_MS - 100);
            assertTrue(later.isOpen(), "not yet");
            wait(serve, 200);
            assertFalse(later.isOpen(), "closed by the restarted task");
        }
    }

    /**
     * @return a connection whose request was answered (200) and which still has bytes the client has not taken:
     *     written below the codec, not yet out of the channel (as behind a full socket buffer).
     */
    private static EmbeddedChannel answeredWithBytesUnread(final EmbeddedServe serve)
    {
        final EmbeddedChannel channel = serve.connect();
        EmbeddedServe.send(channel, EmbeddedServe.post("/v1/completions", "{\"prompt\":[97],\"max_tokens\":1}"));
        serve.runUntilIdle();
        assertEquals(200, EmbeddedServe.responses(channel).get(0).status());
        channel.pipeline().firstContext().write(io.netty.buffer.Unpooled.wrappedBuffer(new byte[] {'x'}));
        return channel;
    }

    @Test
    void shouldNotCountAConnectionIdleWhileItsResponseIsStillUnread()
    {
        try (EmbeddedServe serve = serve(0))
        {
            final EmbeddedChannel slowReader = answeredWithBytesUnread(serve);
            wait(serve, 3 * KEEP_ALIVE_MS);
            assertTrue(slowReader.isOpen(), "the client has not read the response's end: not idle");
            slowReader.flush();
            wait(serve, KEEP_ALIVE_MS - 100);
            assertTrue(slowReader.isOpen(), "idle from when the bytes were gone, not from the response's end");
            wait(serve, 200);
            assertFalse(slowReader.isOpen(), "idle for the keep-alive timeout once everything was read");

            final EmbeddedChannel stalled = answeredWithBytesUnread(serve);
            wait(serve, READ_MS - 100);
            assertTrue(stalled.isOpen(), "bytes pending for less than the longer timeout");
            wait(serve, 200);
            assertFalse(stalled.isOpen(), "a client that takes nothing for the longer timeout is gone: closed");
        }
    }

    @Test
    void shouldNotSweepWithoutTimeouts()
    {
        final ConnectionGuard.Sweep sweep = new ConnectionGuard.Sweep(null, new ConnectionLimits(0, 0, 10));
        assertFalse(sweep.checksTimeouts());
        assertEquals(0, sweep.periodNs());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(250), new ConnectionGuard.Sweep(null, new ConnectionLimits(
            TimeUnit.SECONDS.toNanos(5), TimeUnit.SECONDS.toNanos(30), 0)).periodNs(), "at most 250 ms");
        assertEquals(TimeUnit.MILLISECONDS.toNanos(10), new ConnectionGuard.Sweep(null, new ConnectionLimits(
            TimeUnit.MILLISECONDS.toNanos(20), 0, 0)).periodNs(), "at least 10 ms");
    }

    @Test
    void shouldRefuseConnectionsOverTheCapWith503()
    {
        try (EmbeddedServe serve = serve(2))
        {
            final EmbeddedChannel first = serve.connect();
            final EmbeddedChannel second = serve.connect();
            final EmbeddedChannel third = serve.connect();
            assertTrue(first.isOpen() && second.isOpen());
            assertFalse(third.isOpen());
            final HttpWire.Response refused = EmbeddedServe.responses(third).get(0);
            assertEquals(503, refused.status());
            assertTrue(refused.text().contains("--max-connections 2"), refused.text());
            first.close();
            final EmbeddedChannel fourth = serve.connect();
            assertTrue(fourth.isOpen(), "a place was freed");
            EmbeddedServe.send(fourth, EmbeddedServe.post("/v1/completions", "{\"prompt\":[97],\"max_tokens\":1}"));
            serve.runUntilIdle();
            assertEquals(200, EmbeddedServe.responses(fourth).get(0).status());
        }
    }
}
