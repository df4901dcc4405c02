package dev.tapedeck.load.client;

import java.io.IOException;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;

/**
 * The client side of one keep-alive connection: runs one exchange at a time, reads its response (SSE events line by
 * line for streams, the whole JSON body otherwise), times every token-bearing event, and returns the connection to
 * its lane when the response ended cleanly. Anything else (an error status, a malformed event, a reset, a stall past
 * the timeout) ends the exchange with an error kind and closes the connection.
 * <p>
 * The prefill hop of a two-hop exchange is read as one JSON body: when it carries {@code kv_transfer_params}, the
 * exchange leaves this connection (which returns to its lane) for the decode lane of the same event loop; an error
 * on that hop ends the exchange with the kind prefixed {@code prefill_} ({@code prefill_http_500},
 * {@code prefill_no_kv_transfer_params}).
 * <p>
 * The request goes out as bytes (a head encoded once per path, then the body); the response is read by a
 * {@link ResponseParser}, which hands over the status, the connection's reuse, and the body's bytes.
 * <p>
 * Confined to the connection's event loop.
 */
final class ExchangeHandler extends SimpleChannelInboundHandler<ByteBuf> implements ResponseParser.Sink
{
    private static final int MAX_LINE_BYTES = 8 * 1024 * 1024;
    private static final int MAX_BODY_BYTES = 64 * 1024 * 1024;
    /** Bodies up to this size are copied behind the request head and sent as one buffer. */
    private static final int ONE_BUFFER_BODY_BYTES = 16 * 1024;

    private final Lane lane;
    private ChannelHandlerContext ctx;
    private ResponseParser parser;
    private Exchange exchange;
    /** A body that is not a stream, gathered until its end. */
    private ByteBuf pending;
    /** A stream's SSE lines, whole or split over reads. */
    private LineGatherer sseLines;
    private final LineGatherer.Sink sseLineSink = this::onLine;
    /** When the read being handled arrived: the time of every SSE line in it. */
    private long readNs;
    private int status;
    private boolean keepAlive;
    private boolean sse;
    /** When the connection was last parked idle ({@link Lane#release}). */
    long idleSinceNs;

    ExchangeHandler(final Lane lane)
    {
        this.lane = lane;
    }

    @Override
    public void handlerAdded(final ChannelHandlerContext context)
    {
        ctx = context;
        parser = new ResponseParser(this, context.alloc());
        pending = context.alloc().heapBuffer(1024);
        sseLines = new LineGatherer(context.alloc(), 1024);
    }

    @Override
    public void handlerRemoved(final ChannelHandlerContext context)
    {
        parser.release();
        pending.release();
        sseLines.release();
    }

    /**
     * Send an exchange on this (idle, active) connection.
     *
     * @param writtenNs now ({@link System#nanoTime()}): when the request is written.
     */
    void start(final Exchange next, final long writtenNs)
    {
        exchange = next;
        status = 0;
        sse = false;
        pending.clear();
        sseLines.clear();
        next.writtenNs = writtenNs;
        next.handler = this;
        lane.timeouts().add(next);
        if (!next.twoHop || next.prefilling)
        {
            next.listener.onWritten(next, writtenNs); // a decode hop is the same request, already started
        }
        final ByteBuf body = next.toSend;
        next.toSend = null; // Netty's now: released once written, or when the write fails
        // the request as bytes (an encoder would build a request object and a header map per request); a failed
        // write reaches exceptionCaught
        final int bodyBytes = body.readableBytes();
        final boolean stream = next.stream && !next.prefilling;
        if (bodyBytes <= ONE_BUFFER_BODY_BYTES)
        {
            // one buffer, one send: a small body is cheaper to copy behind the head than to write as a second buffer
            final ByteBuf request = lane.head(next.path, stream, bodyBytes, bodyBytes, ctx.alloc()).writeBytes(body);
            body.release();
            ctx.writeAndFlush(request, ctx.voidPromise());
        }
        else
        {
            ctx.write(lane.head(next.path, stream, bodyBytes, 0, ctx.alloc()), ctx.voidPromise());
            ctx.writeAndFlush(body, ctx.voidPromise());
        }
    }

    boolean isIdle()
    {
        return null == exchange && ctx.channel().isActive();
    }

    /**
     * Close the connection; a running exchange ends as {@code incomplete}.
     */
    void close()
    {
        if (null != exchange)
        {
            fail("incomplete");
        }
        ctx.close();
    }

    @Override
    protected void channelRead0(final ChannelHandlerContext context, final ByteBuf bytes)
    {
        parser.read(bytes);
        if (null == exchange && !parser.atResponseStart())
        {
            unasked(); // bytes after the response ended, of no response this connection waits for
        }
    }

    /**
     * The server sent what no request asked for: the connection is out of step, and no exchange may use it.
     */
    private void unasked()
    {
        parser.stop();
        ctx.close();
    }

    @Override
    public void onHead(final int status, final boolean keepAlive, final boolean eventStream)
    {
        if (null == exchange)
        {
            unasked(); // a response while no exchange runs
            return;
        }
        this.status = status;
        this.keepAlive = keepAlive;
        sse = eventStream && !exchange.prefilling;
    }

    @Override
    public void onMalformed()
    {
        if (null != exchange)
        {
            fail("malformed_http");
        }
        else
        {
            unasked(); // garbage on an idle connection
        }
    }

    @Override
    public void onEnd()
    {
        if (null != exchange)
        {
            onResponseEnd();
        }
    }

    @Override
    public void onBody(final ByteBuf bytes, final int from, final int to)
    {
        if (null == exchange)
        {
            return;
        }
        if (200 != status || !sse)
        {
            if (pending.readableBytes() + to - from > MAX_BODY_BYTES)
            {
                fail("body_too_large");
                return;
            }
            pending.writeBytes(bytes, from, to - from);
            return;
        }
        readNs = System.nanoTime();
        for (int index = from; index < to && null != exchange; )
        {
            index = sseLines.next(bytes, index, to, MAX_LINE_BYTES, sseLineSink);
            if (LineGatherer.TOO_LONG == index)
            {
                fail("malformed_sse");
                return;
            }
        }
    }

    /** One SSE line, {@code [from, toExclusive)} without its {@code \n}, read at {@link #readNs}. */
    private void onLine(final ByteBuf buf, final int from, final int toExclusive)
    {
        final long nowNs = readNs;
        int to = toExclusive;
        if (to > from && '\r' == buf.getByte(to - 1))
        {
            to--;
        }
        if (to == from || ':' == buf.getByte(from))
        {
            return; // event separator or comment
        }
        if (to - from < 5 || !startsWith(buf, from, "data:"))
        {
            return; // event:, id:, retry: fields carry nothing we time
        }
        int start = from + 5;
        if (start < to && ' ' == buf.getByte(start))
        {
            start++;
        }
        if (exchange.done)
        {
            fail("malformed_sse"); // data after [DONE]
            return;
        }
        if (to - start == 6 && startsWith(buf, start, "[DONE]"))
        {
            exchange.done = true;
            return;
        }
        if (start >= to || '{' != buf.getByte(start) || '}' != buf.getByte(to - 1))
        {
            fail("malformed_sse");
            return;
        }
        final int length = to - start;
        final byte[] event = lane.scratch(length);
        buf.getBytes(start, event, 0, length);
        final boolean usageSeenBefore = exchange.usageCompletionTokens >= 0;
        final long completionBefore = usageSeenBefore ? exchange.usageCompletionTokens : 0;
        final int found = ResponseScanner.scan(event, 0, length, exchange);
        if (0 != (found & ResponseScanner.ERROR))
        {
            fail("stream_error");
            return;
        }
        if (0 != (found & ResponseScanner.ABORT))
        {
            exchange.aborted = true;
        }
        if (0 != (found & ResponseScanner.USAGE))
        {
            // continuous usage stats give the cumulative count with every chunk: the difference is this chunk's
            // tokens (none for the role chunk and the final usage chunk), no need to look for text; a first usage
            // after text chunks without one is the include_usage summary, not new tokens
            final long tokens = exchange.usageCompletionTokens - completionBefore;
            if (tokens > 0 && (usageSeenBefore || 0 == exchange.tokensSeen))
            {
                exchange.onTokenChunk(nowNs, tokens);
            }
        }
        else if (0 != (found & ResponseScanner.TEXT))
        {
            exchange.onTokenChunk(nowNs, 1);
        }
    }

    private void onResponseEnd()
    {
        final Exchange ended = exchange;
        if (200 != status)
        {
            ended.errorMessage = ErrorBodies.message(pending);
            fail("http_" + status);
            return;
        }
        if (sse)
        {
            if (sseLines.holdsPart())
            {
                readNs = System.nanoTime();
                sseLines.endPart(sseLineSink); // the stream's last line, with no newline
                if (null == exchange)
                {
                    return;
                }
            }
            if (!ended.done)
            {
                fail("incomplete");
                return;
            }
            if (ended.aborted)
            {
                finish("server_abort", keepAlive);
                return;
            }
        }
        else
        {
            final int length = pending.readableBytes();
            final byte[] body = lane.scratch(length);
            pending.getBytes(pending.readerIndex(), body, 0, length);
            // a prefill hop's usage is not the request's: the decode hop's answer gives it
            final int found = length < 2 || '{' != body[0] ? ResponseScanner.ERROR :
                ResponseScanner.scan(body, 0, length, ended.prefilling ? null : ended);
            if (0 != (found & ResponseScanner.ERROR))
            {
                fail("malformed_json");
                return;
            }
            if (ended.prefilling)
            {
                onPrefilled(ended, body, length, 0 != (found & ResponseScanner.ABORT));
                return;
            }
            if (0 != (found & ResponseScanner.ABORT))
            {
                finish("server_abort", keepAlive);
                return;
            }
            ended.firstTokenNs = System.nanoTime();
            ended.tokenChunks = 1;
            ended.tokensSeen = Math.max(0, ended.usageCompletionTokens);
        }
        finish(null, keepAlive);
    }

    /**
     * The prefill hop answered: on to the decode lane with its {@code kv_transfer_params}, or fail without them.
     */
    private void onPrefilled(final Exchange ended, final byte[] body, final int length, final boolean aborted)
    {
        if (aborted)
        {
            finish(ended.hopKind("server_abort"), keepAlive);
            return;
        }
        final long params = ResponseScanner.kvTransferParams(body, 0, length);
        final Lane decode = lane.decodeLane();
        if (null == decode)
        {
            finish(ended.hopKind("client_error"), keepAlive); // a two-hop exchange handed to a one-hop client
            return;
        }
        if (params < 0)
        {
            finish(ended.hopKind("no_kv_transfer_params"), keepAlive);
            return;
        }
        final long prefilledNs = System.nanoTime();
        ended.onPrefilled(body, (int)(params >>> 32), (int)params, prefilledNs, ctx.alloc());
        exchange = null;
        lane.timeouts().remove(ended);
        pending.clear();
        sseLines.clear();
        if (keepAlive && ctx.channel().isActive())
        {
            lane.release(this, prefilledNs);
        }
        else
        {
            parser.stop();
            ctx.close();
        }
        decode.startSoon(ended);
    }

    /**
     * The exchange ran past the request timeout (from {@link ExchangeTimeouts}).
     */
    void onTimeout(final Exchange timedOut)
    {
        if (timedOut == exchange)
        {
            fail("timeout");
        }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext context)
    {
        context.fireChannelReadComplete();
        lane.startDue(); // sends due while the loop works through a burst of reads go now, not after the burst
    }

    @Override
    public void channelActive(final ChannelHandlerContext context)
    {
        lane.onOpened(this);
        context.fireChannelActive();
    }

    @Override
    public void channelInactive(final ChannelHandlerContext context)
    {
        parser.closed(); // a body that runs until the close has ended
        if (null != exchange)
        {
            fail(0 == status ? "connection_closed" : "connection_reset");
        }
        lane.onClosed(this);
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext context, final Throwable cause)
    {
        if (null != exchange)
        {
            fail(errorKind(cause));
        }
        context.close();
    }

    private void fail(final String kind)
    {
        finish(exchange.hopKind(kind), false);
    }

    private void finish(final String errorKind, final boolean reuse)
    {
        final Exchange ended = exchange;
        exchange = null;
        lane.timeouts().remove(ended);
        pending.clear();
        sseLines.clear();
        ended.finished = true;
        ended.release(); // what a failed two-hop exchange never sent
        final long endNs = System.nanoTime();
        final Lane entry = lane.entry();
        final Exchange replacement = ended.replaceWhenDone ? entry.takeSpare() : null;
        ended.replacement = replacement;
        if (null != replacement)
        {
            // closed loop: the next request is due now and goes at the end of this read, on this connection if it
            // stays open (on the prefill lane of this loop when the request has two hops)
            replacement.intendedNs = endNs;
            entry.startSoon(replacement);
        }
        ended.listener.onFinished(ended, endNs, errorKind);
        if (reuse && ctx.channel().isActive())
        {
            lane.release(this, endNs);
        }
        else
        {
            parser.stop(); // nothing more is read from a connection that is closing
            ctx.close();
        }
    }

    private static String errorKind(final Throwable cause)
    {
        if (cause instanceof IOException && null != cause.getMessage() &&
            cause.getMessage().toLowerCase(java.util.Locale.ROOT).contains("reset"))
        {
            return "connection_reset";
        }
        return cause instanceof IOException ? "connection_error" : "client_error";
    }

    private static boolean startsWith(final ByteBuf buf, final int from, final String ascii)
    {
        if (buf.writerIndex() - from < ascii.length())
        {
            return false;
        }
        for (int i = 0; i < ascii.length(); i++)
        {
            if (ascii.charAt(i) != buf.getByte(from + i))
            {
                return false;
            }
        }
        return true;
    }
}
