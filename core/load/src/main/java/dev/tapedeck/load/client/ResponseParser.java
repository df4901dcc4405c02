package dev.tapedeck.load.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Reads HTTP/1.1 responses from a connection's bytes as they arrive, keeping only what the load client uses: the
 * status, whether the connection stays open, whether the body is an event stream, and the body's bytes (framed by
 * {@code Content-Length}, by chunks, or by the connection's close). No response object, header map or content
 * object is made per response, and a head that arrives in one read is parsed where it lies: Netty's HTTP decoder did
 * all three and was the largest part of the client's own time per request.
 * <p>
 * Interim responses ({@code 1xx}) are skipped; {@code 204} and {@code 304} have no body. A response the parser
 * cannot frame (a bad status line, a {@code Content-Length} that is not a number or differs between two headers,
 * a bad chunk size, a head over {@link #MAX_HEAD_BYTES}) is reported once and nothing more is read.
 * <p>
 * Confined to the connection's event loop. Allocates nothing per response: a line split across reads is gathered
 * in one buffer kept for the connection.
 */
final class ResponseParser
{
    /** A response's status line and headers may take this many bytes. */
    static final int MAX_HEAD_BYTES = 64 * 1024;
    /** A chunk-size line or trailer may take this many bytes. */
    private static final int MAX_LINE_BYTES = 8 * 1024;
    private static final int CODING_NONE = 0;
    private static final int CODING_CHUNKED = 1;
    /** A coding other than chunked last: RFC 9112 section 6.3, the body runs until the close. */
    private static final int CODING_OTHER = 2;

    /** What the parser found. Each call may close the connection; the parser then reads nothing more. */
    interface Sink
    {
        /**
         * @param status the status code.
         * @param keepAlive the connection may carry another exchange once this response ended.
         * @param eventStream the body is {@code text/event-stream}.
         */
        void onHead(int status, boolean keepAlive, boolean eventStream);

        /** Body bytes {@code [from, to)} of {@code buf}, valid during the call only. */
        void onBody(ByteBuf buf, int from, int to);

        void onEnd();

        /** The response cannot be read (see the class comment). */
        void onMalformed();
    }

    private enum State
    {
        HEAD, BODY_LENGTH, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILERS, BODY_UNTIL_CLOSE, FAILED
    }

    private final Sink sink;
    /** Head, chunk-size and trailer lines, whole or split over reads. */
    private final LineGatherer lines;
    private final LineGatherer.Sink lineSink = this::line;
    private State state = State.HEAD;
    private int headBytes;
    private boolean statusRead;
    private int status;
    private boolean keepAlive;
    private boolean eventStream;
    /** A {@code Connection: close} was read: no later {@code keep-alive} token keeps the connection. */
    private boolean closeAsked;
    /** The response's {@code Transfer-Encoding}: none, chunked last (framed by chunks), or another coding last. */
    private int transferCoding;
    /** The header a folded continuation line continues (its name's length), or 0. */
    private int lastHeader;
    private long contentLength;
    /** Body or chunk bytes still to come. */
    private long remaining;

    ResponseParser(final Sink sink, final ByteBufAllocator allocator)
    {
        this.sink = sink;
        this.lines = new LineGatherer(allocator, 256);
        startHead();
    }

    /**
     * Free the parser's buffer (the connection is gone).
     */
    void release()
    {
        lines.release();
    }

    /**
     * Stop reading: the connection is closing (its exchange failed).
     */
    void stop()
    {
        state = State.FAILED;
    }

    /**
     * Parse every readable byte of {@code in} (its reader index is not moved).
     */
    void read(final ByteBuf in)
    {
        int index = in.readerIndex();
        final int end = in.writerIndex();
        while (index < end && State.FAILED != state)
        {
            switch (state)
            {
                case BODY_LENGTH, CHUNK_DATA ->
                {
                    final int take = (int)Math.min(remaining, end - index);
                    remaining -= take;
                    final boolean bodyEnds = 0 == remaining && State.BODY_LENGTH == state;
                    if (0 == remaining)
                    {
                        state = bodyEnds ? State.HEAD : State.CHUNK_END;
                    }
                    sink.onBody(in, index, index + take);
                    index += take;
                    if (bodyEnds && State.FAILED != state)
                    {
                        sink.onEnd();
                    }
                }
                case BODY_UNTIL_CLOSE ->
                {
                    sink.onBody(in, index, end);
                    index = end;
                }
                default -> index = readLine(in, index, end);
            }
        }
    }

    /**
     * @return true between responses: nothing of a next response has been read (not even part of a line).
     */
    boolean atResponseStart()
    {
        return State.HEAD == state && !statusRead && !lines.holdsPart();
    }

    /**
     * The connection closed: a body that runs until the close has ended.
     */
    void closed()
    {
        if (State.BODY_UNTIL_CLOSE == state)
        {
            state = State.HEAD;
            sink.onEnd();
        }
    }

    /** @return where the next byte to parse is: past the line, when it ended in this read. */
    private int readLine(final ByteBuf in, final int from, final int end)
    {
        final int limit = State.HEAD == state ? MAX_HEAD_BYTES - headBytes : MAX_LINE_BYTES;
        final int next = lines.next(in, from, end, limit, lineSink);
        if (LineGatherer.TOO_LONG == next)
        {
            fail();
            return end;
        }
        return next;
    }

    /** One line of a head, a chunk size, a chunk's end or a trailer, {@code [from, to)} without its {@code \n}. */
    private void line(final ByteBuf buf, final int from, final int toExclusive)
    {
        final int to = toExclusive > from && '\r' == buf.getByte(toExclusive - 1) ? toExclusive - 1 : toExclusive;
        switch (state)
        {
            case HEAD -> headLine(buf, from, to, toExclusive - from + 1);
            case CHUNK_SIZE -> chunkSize(buf, from, to);
            case CHUNK_END ->
            {
                if (to != from)
                {
                    fail();
                    return;
                }
                state = State.CHUNK_SIZE;
            }
            case TRAILERS ->
            {
                if (to == from)
                {
                    state = State.HEAD;
                    sink.onEnd();
                }
            }
            default -> throw new IllegalStateException(state.name());
        }
    }

    private void headLine(final ByteBuf buf, final int from, final int to, final int lineBytes)
    {
        headBytes += lineBytes;
        if (!statusRead)
        {
            if (to == from)
            {
                headBytes = 0; // blank lines before a response are tolerated
                return;
            }
            statusLine(buf, from, to);
            return;
        }
        if (to == from)
        {
            headEnded();
            return;
        }
        if (' ' == buf.getByte(from) || '\t' == buf.getByte(from))
        {
            // an obsolete folded line continues the header before it (RFC 9112 section 5.2: read as a space)
            headerValue(lastHeader, buf, trimStart(buf, from, to), to);
            return;
        }
        final int colon = buf.indexOf(from, to, (byte)':');
        if (colon <= from)
        {
            fail();
            return;
        }
        lastHeader = headerKind(buf, from, trimEnd(buf, from, colon));
        headerValue(lastHeader, buf, trimStart(buf, colon + 1, to), trimEnd(buf, colon + 1, to));
    }

    /** {@code HTTP/1.x SSS[ reason]}. */
    private void statusLine(final ByteBuf buf, final int from, final int to)
    {
        final int minor = to - from < 12 ? -1 : buf.getByte(from + 7) - '0';
        final long code = minor < 0 ? -1 : digits(buf, from + 9, from + 12);
        if (code < 0 || minor > 9 || !ascii(buf, from, "HTTP/1.") || ' ' != buf.getByte(from + 8)
            || (to > from + 12 && ' ' != buf.getByte(from + 12)))
        {
            fail();
            return;
        }
        statusRead = true;
        status = (int)code;
        keepAlive = minor >= 1;
    }

    /** @return the length of the header's name if it is one this client reads, else 0. */
    private static int headerKind(final ByteBuf buf, final int name, final int nameEnd)
    {
        final int length = nameEnd - name;
        final boolean read = switch (length)
        {
            case 10 -> asciiIgnoreCase(buf, name, "connection");
            case 12 -> asciiIgnoreCase(buf, name, "content-type");
            case 14 -> asciiIgnoreCase(buf, name, "content-length");
            case 17 -> asciiIgnoreCase(buf, name, "transfer-encoding");
            default -> false;
        };
        return read ? length : 0;
    }

    /** One value (or a folded part of one) of the header {@link #headerKind} named. */
    private void headerValue(final int kind, final ByteBuf buf, final int value, final int valueEnd)
    {
        switch (kind)
        {
            case 10 ->
            {
                if (hasToken(buf, value, valueEnd, "close"))
                {
                    closeAsked = true;
                    keepAlive = false;
                }
                else if (hasToken(buf, value, valueEnd, "keep-alive") && !closeAsked)
                {
                    keepAlive = true;
                }
            }
            case 12 -> eventStream |= valueEnd - value >= 17 && asciiIgnoreCase(buf, value, "text/event-stream");
            case 14 ->
            {
                final long length = digits(buf, value, valueEnd);
                if (length < 0 || (contentLength >= 0 && length != contentLength))
                {
                    fail();
                    return;
                }
                contentLength = length;
            }
            case 17 ->
            {
                final int last = lastTokenStart(buf, value, valueEnd);
                if (last >= 0)
                {
                    transferCoding = trimEnd(buf, last, valueEnd) - last == 7 && asciiIgnoreCase(buf, last, "chunked") ?
                        CODING_CHUNKED : CODING_OTHER;
                }
            }
            default ->
            {
                // a header this client does not read
            }
        }
    }

    private void headEnded()
    {
        final int code = status;
        final boolean interim = code >= 100 && code < 200;
        final boolean bodyless = interim || 204 == code || 304 == code;
        if (interim && 101 != code)
        {
            startHead(); // 100 Continue and friends: the response follows
            return;
        }
        final boolean reuse = keepAlive;
        final boolean stream = eventStream;
        if (bodyless || (CODING_NONE == transferCoding && 0 == contentLength))
        {
            startHead();
            sink.onHead(code, reuse, stream);
            if (State.FAILED != state)
            {
                sink.onEnd();
            }
            return;
        }
        if (CODING_CHUNKED == transferCoding)
        {
            state = State.CHUNK_SIZE;
        }
        else if (CODING_NONE == transferCoding && contentLength > 0)
        {
            state = State.BODY_LENGTH;
            remaining = contentLength;
        }
        else
        {
            state = State.BODY_UNTIL_CLOSE;
        }
        startHead();
        sink.onHead(code, reuse && State.BODY_UNTIL_CLOSE != state, stream);
    }

    /** Ready for the next response's head (the body, if any, is still to be read). */
    private void startHead()
    {
        headBytes = 0;
        statusRead = false;
        status = 0;
        eventStream = false;
        closeAsked = false;
        transferCoding = CODING_NONE;
        lastHeader = 0;
        contentLength = -1;
    }

    /** A chunk-size line: hex digits, then optional extensions after {@code ;}. */
    private void chunkSize(final ByteBuf buf, final int from, final int to)
    {
        long size = 0;
        int i = from;
        for (; i < to; i++)
        {
            final int digit = Character.digit(buf.getByte(i), 16);
            if (digit < 0)
            {
                break;
            }
            size = (size << 4) | digit;
            if (size > Integer.MAX_VALUE)
            {
                fail();
                return;
            }
        }
        if (i == from || (i < to && ';' != buf.getByte(i) && ' ' != buf.getByte(i) && '\t' != buf.getByte(i)))
        {
            fail();
            return;
        }
        if (0 == size)
        {
            state = State.TRAILERS;
            return;
        }
        state = State.CHUNK_DATA;
        remaining = size;
    }

    private void fail()
    {
        state = State.FAILED;
        sink.onMalformed();
    }

    /** @return the decimal number {@code [from, to)}, or -1 if it is not one. */
    private static long digits(final ByteBuf buf, final int from, final int to)
    {
        if (to <= from || to - from > 18)
        {
            return -1; // empty (or only spaces, which the trimming crossed), or too long
        }
        long value = 0;
        for (int i = from; i < to; i++)
        {
            final int digit = buf.getByte(i) - '0';
            if (digit < 0 || digit > 9)
            {
                return -1;
            }
            value = value * 10 + digit;
        }
        return value;
    }

    private static int trimStart(final ByteBuf buf, final int from, final int to)
    {
        int i = from;
        while (i < to && (' ' == buf.getByte(i) || '\t' == buf.getByte(i)))
        {
            i++;
        }
        return i;
    }

    private static int trimEnd(final ByteBuf buf, final int from, final int to)
    {
        int i = to;
        while (i > from && (' ' == buf.getByte(i - 1) || '\t' == buf.getByte(i - 1)))
        {
            i--;
        }
        return i;
    }

    private static boolean ascii(final ByteBuf buf, final int from, final String text)
    {
        for (int i = 0; i < text.length(); i++)
        {
            if (text.charAt(i) != buf.getByte(from + i))
            {
                return false;
            }
        }
        return true;
    }

    /** {@code text} is lower-case ASCII; the bytes at {@code from} match it in any case. */
    private static boolean asciiIgnoreCase(final ByteBuf buf, final int from, final String text)
    {
        for (int i = 0; i < text.length(); i++)
        {
            final int b = buf.getByte(from + i);
            if (text.charAt(i) != (b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b))
            {
                return false;
            }
        }
        return true;
    }

    /** @return the comma-separated list {@code [from, to)} has {@code token} (lower-case ASCII), in any case. */
    private static boolean hasToken(final ByteBuf buf, final int from, final int to, final String token)
    {
        int start = from;
        while (start < to)
        {
            final int comma = buf.indexOf(start, to, (byte)',');
            final int end = comma < 0 ? to : comma;
            final int tokenStart = trimStart(buf, start, end);
            if (trimEnd(buf, tokenStart, end) - tokenStart == token.length() && asciiIgnoreCase(buf, tokenStart, token))
            {
                return true;
            }
            start = end + 1;
        }
        return false;
    }

    /** @return where the last element of the comma-separated list {@code [from, to)} starts, or -1 if it is empty. */
    private static int lastTokenStart(final ByteBuf buf, final int from, final int to)
    {
        int start = from;
        for (int comma = buf.indexOf(start, to, (byte)','); comma >= 0; comma = buf.indexOf(start, to, (byte)','))
        {
            start = comma + 1;
        }
        final int tokenStart = trimStart(buf, start, to);
        return tokenStart < to ? tokenStart : -1;
    }
}
