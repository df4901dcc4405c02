package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When a step's tokens reach the wire: an engine that keeps its clock writes each stream as soon as the step moves on
 * to another stream's tokens (before it composes its next step), the step's last stream at the end of the batch; an
 * engine that fell a step or more behind writes each stream once for all the steps it caught up on; a response that
 * ends in the middle of a step serves what was pipelined behind it after the step, in order.
 */
@ExtendWith(NoNettyLeaks.class)
class StepWritesTest
{
    private static String stream(final String echo)
    {
        return EmbeddedServe.post("/v1/completions", "{\"prompt\":" + Arrays.toString(ByteTokenizer.bytes(echo)) +
            ",\"stream\":true}");
    }

    /** Records, for every buffer a connection writes, whether the engine had a step in flight at that moment. */
    private static final class WriteMoments extends ChannelOutboundHandlerAdapter
    {
        private final EmbeddedServe serve;
        private final List<Boolean> stepInFlight = new ArrayList<>();
        private final List<String> written = new ArrayList<>();

        WriteMoments(final EmbeddedServe serve)
        {
            this.serve = serve;
        }

        @Override
        public void write(final ChannelHandlerContext ctx, final Object msg, final ChannelPromise promise)
        {
            if (msg instanceof ByteBuf && ((ByteBuf)msg).isReadable())
            {
                stepInFlight.add(serve.engine0().isStepInFlight());
                written.add(((ByteBuf)msg).toString(StandardCharsets.UTF_8));
            }
            ctx.write(msg, promise);
        }
    }

    private static EmbeddedChannel connect(final EmbeddedServe serve, final WriteMoments moments)
    {
        final EmbeddedChannel channel = serve.connect();
        channel.pipeline().addFirst(moments);
        return channel;
    }

    /** @return the payload of one write of a chunked stream (one HTTP chunk), empty for the terminating chunk. */
    private static byte[] payload(final byte[] write)
    {
        final String text = new String(write, StandardCharsets.ISO_8859_1);
        final int lineEnd = text.indexOf("\r\n");
        final int length = Integer.parseInt(text.substring(0, lineEnd), 16);
        return Arrays.copyOfRange(write, lineEnd + 2, lineEnd + 2 + length);
    }

    /** @return the text of the token events in these writes (HTTP chunks). */
    private static String text(final List<byte[]> writes)
    {
        final StringBuilder text = new StringBuilder();
        for (final byte[] write : writes)
        {
            for (final String data : StreamWire.events(payload(write)))
            {
                if (!StreamWire.DONE.equals(data))
                {
                    text.append(StreamWire.text(data));
                }
            }
        }
        return text.toString();
    }

    private static String bodyText(final HttpWire.Response response)
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

    @Test
    void shouldWriteAStreamBeforeTheNextStepIsComposedOnceTheStepMovesPastIt()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final WriteMoments first = new WriteMoments(serve);
            final WriteMoments last = new WriteMoments(serve);
            final EmbeddedChannel a = connect(serve, first);
            final EmbeddedChannel b = connect(serve, last);
            EmbeddedServe.send(a, stream("abcdef"));
            EmbeddedServe.send(b, stream("uvwxyz"));
            EmbeddedServe.writes(a); // the heads, written on admission
            EmbeddedServe.writes(b);
            first.stepInFlight.clear();
            last.stepInFlight.clear();
            for (int i = 0; i < 3; i++)
            {
                assertTrue(serve.step());
            }
            // b arrived while a's prefill ran: it joined the step after, and follows a in every step since
            assertEquals("abc", text(EmbeddedServe.writes(a)));
            assertEquals("uv", text(EmbeddedServe.writes(b)));
            assertEquals(List.of(true, false, false), first.stepInFlight,
                "alone in its prefill step a is written at the end of the batch; then, with b after it, while the " +
                "step completes, before the next one is composed");
            assertEquals(List.of(true, true), last.stepInFlight,
                "the step's last stream is written at the end of the batch, after the next step was composed");
        }
    }

    @Test
    void shouldWriteEachStreamOnceForTheStepsAnEngineBehindItsClockCaughtUpOn()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final EmbeddedChannel a = serve.connect();
            final EmbeddedChannel b = serve.connect();
            EmbeddedServe.send(a, stream("abcdefgh"));
            EmbeddedServe.send(b, stream("stuvwxyz"));
            EmbeddedServe.writes(a); // the heads, written on admission
            EmbeddedServe.writes(b);
            assertTrue(serve.step()); // a's prefill (b arrived while it ran)
            assertTrue(serve.step()); // a's decode, b's prefill
            assertEquals("ab", text(EmbeddedServe.writes(a)));
            assertEquals("s", text(EmbeddedServe.writes(b)));
            // the loop was held up for three steps: the engine takes them in one call
            serve.ticker.advance(3 * EmbeddedServe.STEP_NS, TimeUnit.NANOSECONDS);
            serve.runTasks();
            for (final EmbeddedChannel client : List.of(a, b))
            {
                final List<byte[]> writes = EmbeddedServe.writes(client);
                assertEquals(1, writes.size(), "one write for the three steps");
                assertEquals(1, StreamWire.events(payload(writes.get(0))).size(), "their tokens merged into one event");
                assertEquals(client == a ? "cde" : "tuv", text(writes));
            }
            assertTrue(serve.step()); // on time again: one write per step
            assertEquals("f", text(EmbeddedServe.writes(a)));
            assertEquals("w", text(EmbeddedServe.writes(b)));
        }
    }

    @Test
    void shouldServeARequestPipelinedBehindAStreamThatEndsMidStepAfterTheStep()
    {
        try (EmbeddedServe serve = EmbeddedServe.echo())
        {
            final WriteMoments moments = new WriteMoments(serve);
            final EmbeddedChannel a = connect(serve, moments);
            final EmbeddedChannel b = serve.connect();
            final EmbeddedChannel c = serve.connect();
            EmbeddedServe.send(a, stream("ab"), stream("cd"));
            EmbeddedServe.send(b, stream("uvwxyz"));
            EmbeddedServe.send(c, stream("klmnop"));
            assertEquals(3, serve.engine0().numRunning() + serve.engine0().numWaiting(),
                "the pipelined request waits for the response before it");
            serve.runUntilIdle();
            final List<HttpWire.Response> responses = EmbeddedServe.responses(a);
            assertEquals(2, responses.size());
            for (final HttpWire.Response response : responses)
            {
                assertTrue(response.complete());
            }
            assertEquals("ab", bodyText(responses.get(0)));
            assertEquals("cd", bodyText(responses.get(1)));
            // b and c came after a in the step a's stream ended in: the next request is not served inside it
            assertEquals("uvwxyz", bodyText(EmbeddedServe.responses(b).get(0)));
            assertEquals("klmnop", bodyText(EmbeddedServe.responses(c).get(0)));
            final int end = moments.written.indexOf("0\r\n\r\n");
            assertTrue(moments.written.get(end - 1).contains("[DONE]"), String.valueOf(moments.written));
            assertEquals(List.of(false, false), moments.stepInFlight.subList(end - 1, end + 1),
                "the first response's end was written in the middle of the step b's first token came in");
            assertTrue(a.isOpen());
        }
    }
}
