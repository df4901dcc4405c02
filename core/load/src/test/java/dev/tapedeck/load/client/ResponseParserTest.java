package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The load client's response parser, fed each response whole and split at every byte (as reads can split it): the
 * events it reports must not depend on where the reads end.
 */
class ResponseParserTest
{
    private static final String JSON = "{\"id\":\"cmpl-1\",\"choices\":[{\"text\":\"hi\"}]}";

    @Test
    void shouldReadABodyByItsContentLength()
    {
        assertParsedAlike("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nContent-Length: " + JSON.length() +
            "\r\nDate: Sat, 28 Nov 2026 10:00:00 GMT\r\n\r\n" + JSON, "head 200 keep-alive json|body " + JSON + "|end");
    }

    @Test
    void shouldReadAChunkedEventStreamWithExtensionsAndTrailers()
    {
        final String first = "data: {\"a\":1}\n\n";
        final String second = "data: [DONE]\n\n";
        assertParsedAlike("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n" +
            "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(first.length()) + "\r\n" + first + "\r\n" +
            Integer.toHexString(second.length()).toUpperCase() + ";name=value\r\n" + second + "\r\n0\r\n" +
            "X-Trailer: 1\r\n\r\n", "head 200 keep-alive stream|body " + first + second + "|end");
    }

    @Test
    void shouldSkipAnInterimResponseAndReadTheOneAfterIt()
    {
        assertParsedAlike("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nContent-Length: 2\r\n\r\n{}",
            "head 429 keep-alive json|body {}|end");
    }

    @Test
    void shouldReadTwoResponsesInARowOnOneConnection()
    {
        assertParsedAlike("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" +
            "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1\r\n\r\nx",
            "head 204 keep-alive json|end|head 200 keep-alive json|end|head 500 keep-alive json|body x|end");
    }

    @Test
    void shouldFollowTheConnectionHeaderAndTheHttpVersion()
    {
        assertParsedAlike("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
            "head 200 close json|body x|end");
        assertParsedAlike("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", "head 200 close json|body x|end");
        assertParsedAlike("HTTP/1.0 200 OK\r\nconnection: Keep-Alive\r\ncontent-length: 1\r\n\r\nx",
            "head 200 keep-alive json|body x|end");
    }

    @Test
    void shouldReadABodyWithoutLengthUntilTheConnectionCloses()
    {
        assertParsedAlike("HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\ndata: x\n\n",
            "head 200 close stream|body data: x\n\n|end");
    }

    @Test
    void shouldReportWhatCannotBeFramedOnceAndReadNothingAfterIt()
    {
        assertParsedAlike("HTTP/1.1 2x0 OK\r\n\r\n", "malformed");
        assertParsedAlike("HTTP/2 200 OK\r\n\r\n", "malformed");
        assertParsedAlike("HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\nHTTP/1.1 200 OK\r\n", "malformed");
        assertParsedAlike("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "malformed");
        assertParsedAlike("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "head 200 keep-alive " +
            "json|malformed");
        assertParsedAlike("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", "head 200 keep-alive " +
            "json|body a|malformed");
        assertParsedAlike("HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n", "malformed");
    }

    @Test
    void shouldReadConnectionAndTransferEncodingAsTokenLists()
    {
        assertParsedAlike("HTTP/1.1 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
            "head 200 close json|end");
        assertParsedAlike("HTTP/1.1 200 OK\r\nConnection: x-closed, Upgrade\r\nContent-Length: 0\r\n\r\n",
            "head 200 keep-alive json|end");
        assertParsedAlike("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\nContent-Length: 9\r\n\r\n" +
            "1\r\nx\r\n0\r\n\r\n", "head 200 keep-alive json|body x|end");
        // chunked not last: the body runs until the close (RFC 9112 section 6.3)
        assertParsedAlike("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nzz",
            "head 200 close json|body zz|end");
    }

    @Test
    void shouldReadAFoldedHeaderAsOneValue()
    {
        assertParsedAlike("HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n chunked\r\nContent-Type:\r\n\ttext/event-stream" +
            "\r\n\r\n2\r\nab\r\n0\r\n\r\n", "head 200 keep-alive stream|body ab|end");
    }

    @Test
    void shouldAcceptARepeatedEqualLengthAndHaveNoBodyAfter304Or101()
    {
        assertParsedAlike("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            "head 200 keep-alive json|body {}|end");
        assertParsedAlike("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", "head 304 keep-alive json|end");
        assertParsedAlike("HTTP/1.1 101 Switching Protocols\r\n\r\n", "head 101 keep-alive json|end");
    }

    @Test
    void shouldRefuseAnEmptyOrSignedContentLength()
    {
        assertParsedAlike("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n{}", "malformed");
        assertParsedAlike("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n{}", "malformed");
        assertParsedAlike("HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}", "malformed");
    }

    /** What the sink does inside a callback (fail the exchange, close the connection) stops the parser there. */
    @Test
    void shouldReadNothingMoreOnceTheSinkStopsItInsideACallback()
    {
        final String twoResponses = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd" +
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
        assertEquals("head 200 keep-alive json|body abcd|stopped", parseStoppingAt(twoResponses, "body"));
        assertEquals("head 200 keep-alive json|stopped", parseStoppingAt(twoResponses, "head"));
        assertEquals("head 200 keep-alive json|body abcd|end|stopped", parseStoppingAt(twoResponses, "end"));
        assertEquals("head 204 keep-alive json|stopped", parseStoppingAt("HTTP/1.1 204 No Content\r\n\r\n" +
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "head"), "a response without a body");
    }

    @Test
    void shouldSayWhetherItStandsBetweenResponses()
    {
        final Recorder recorder = new Recorder();
        final ResponseParser parser = new ResponseParser(recorder, UnpooledByteBufAllocator.DEFAULT);
        assertTrue(parser.atResponseStart());
        feed(parser, bytes("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"));
        assertTrue(parser.atResponseStart(), "after a whole response");
        feed(parser, bytes("HTTP/1.1 2"));
        assertFalse(parser.atResponseStart(), "part of a status line");
        feed(parser, bytes("00 OK\r\n"));
        assertFalse(parser.atResponseStart(), "a status line without its head's end");
        feed(parser, bytes("Content-Length: 2\r\n\r\n{"));
        assertFalse(parser.atResponseStart(), "inside a body");
        feed(parser, bytes("}"));
        assertTrue(parser.atResponseStart());
        parser.release();
        assertEquals("head 200 keep-alive json|body x|end|head 200 keep-alive json|body {}|end", recorder.events());
    }

    @Test
    void shouldRefuseAHeadLargerThanItsLimit()
    {
        final String filler = "X-Filler: " + "a".repeat(1000) + "\r\n";
        assertParsedAlike("HTTP/1.1 200 OK\r\n" + filler.repeat(ResponseParser.MAX_HEAD_BYTES / filler.length() + 1) +
            "Content-Length: 0\r\n\r\n", "malformed");
    }

    /** The events of the response fed whole, then split in two at every byte, then one byte per read. */
    private static void assertParsedAlike(final String response, final String expected)
    {
        final byte[] bytes = response.getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(expected, parse(bytes, bytes.length), "in one read");
        for (int split = 1; split < bytes.length; split++)
        {
            assertEquals(expected, parse(bytes, split, bytes.length), "split at byte " + split);
        }
        assertEquals(expected, parse(bytes, 1), "one byte per read");
    }

    private static String parse(final byte[] bytes, final int... readEnds)
    {
        final Recorder recorder = new Recorder();
        final ResponseParser parser = new ResponseParser(recorder, UnpooledByteBufAllocator.DEFAULT);
        int from = 0;
        for (final int end : readEnds)
        {
            feed(parser, bytes, from, end);
            from = end;
        }
        parser.closed();
        parser.release();
        return recorder.events();
    }

    private static String parse(final byte[] bytes, final int readBytes)
    {
        final Recorder recorder = new Recorder();
        final ResponseParser parser = new ResponseParser(recorder, UnpooledByteBufAllocator.DEFAULT);
        for (int from = 0; from < bytes.length; from += readBytes)
        {
            feed(parser, bytes, from, Math.min(bytes.length, from + readBytes));
        }
        parser.closed();
        parser.release();
        return recorder.events();
    }

    /**
     * The events of {@code response} read at once, the sink stopping the parser inside its first callback of a kind
     * ({@code head}, {@code body} or {@code end}), as the client does when it fails an exchange or closes.
     */
    private static String parseStoppingAt(final String response, final String kind)
    {
        final ResponseParser[] parser = new ResponseParser[1];
        final Recorder recorder = new Recorder()
        {
            @Override
            public void onHead(final int status, final boolean keepAlive, final boolean eventStream)
            {
                super.onHead(status, keepAlive, eventStream);
                stopAt("head");
            }

            @Override
            public void onBody(final ByteBuf buf, final int from, final int to)
            {
                super.onBody(buf, from, to);
                stopAt("body");
            }

            @Override
            public void onEnd()
            {
                super.onEnd();
                stopAt("end");
            }

            private void stopAt(final String callback)
            {
                if (callback.equals(kind))
                {
                    event("stopped");
                    parser[0].stop();
                }
            }
        };
        parser[0] = new ResponseParser(recorder, UnpooledByteBufAllocator.DEFAULT);
        feed(parser[0], bytes(response));
        parser[0].closed();
        parser[0].release();
        return recorder.events();
    }

    private static byte[] bytes(final String text)
    {
        return text.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static void feed(final ResponseParser parser, final byte[] bytes)
    {
        feed(parser, bytes, 0, bytes.length);
    }

    /** One read: the bytes in a buffer with other bytes around them, as a reused read buffer has. */
    private static void feed(final ResponseParser parser, final byte[] bytes, final int from, final int to)
    {
        final ByteBuf read = Unpooled.buffer(to - from + 8).writeBytes(new byte[3]).writeBytes(bytes, from, to - from);
        read.readerIndex(3);
        read.writeBytes(new byte[] {'H', 'T', 'T'}).writerIndex(read.writerIndex() - 3);
        parser.read(read);
        read.release();
    }

    /** Records events, joining the body's pieces (where the reads split the body is not an event). */
    private static class Recorder implements ResponseParser.Sink
    {
        private final List<String> events = new ArrayList<>();
        private final StringBuilder body = new StringBuilder();

        @Override
        public void onHead(final int status, final boolean keepAlive, final boolean eventStream)
        {
            event("head " + status + (keepAlive ? " keep-alive" : " close") + (eventStream ? " stream" : " json"));
        }

        @Override
        public void onBody(final ByteBuf buf, final int from, final int to)
        {
            body.append(buf.toString(from, to - from, StandardCharsets.ISO_8859_1));
        }

        @Override
        public void onEnd()
        {
            event("end");
        }

        @Override
        public void onMalformed()
        {
            event("malformed");
        }

        void event(final String event)
        {
            flushBody();
            events.add(event);
        }

        private void flushBody()
        {
            if (!body.isEmpty())
            {
                events.add("body " + body);
                body.setLength(0);
            }
        }

        String events()
        {
            flushBody();
            return String.join("|", events);
        }
    }
}
