package dev.tapedeck.system;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * A deliberately misbehaving OpenAI-style server on 127.0.0.1 (ephemeral port) for the load client's failure tests,
 * plus one well-behaved mode that counts the requests it holds at once. Every request gets the configured behaviour.
 * <p>
 * Thread safe: one event loop serves every connection; the counters are atomic.
 */
final class BrokenServer implements AutoCloseable
{
    /** What the server does with each request. */
    enum Behaviour
    {
        /** A valid stream of {@link #TOKENS} chunks, one every {@code delayMs}, then [DONE]. */
        STREAM,
        /** Headers and three valid chunks, then the connection is closed. */
        RESET_MID_STREAM,
        /** Headers, then {@code data:} lines that are not JSON. */
        INVALID_SSE,
        /** Headers, then nothing, ever. */
        STALL,
        /** HTTP 500 with an OpenAI error body. */
        HTTP_500,
        /** HTTP 429 with an OpenAI error body. */
        HTTP_429,
        /** A valid chunk every {@code delayMs}, never ending. */
        SLOW_DRIP,
        /** A response head whose {@code Content-Length} is not a number. */
        MALFORMED_HTTP,
        /** A valid {@link #STREAM}, its end followed in the same write by a line that is not HTTP. */
        GARBAGE_AFTER_STREAM,
        /** A valid {@link #STREAM}, its end followed in the same write by the start of a status line, never ended. */
        PARTIAL_AFTER_STREAM
    }

    /** Chunks of a {@link Behaviour#STREAM} response. */
    static final int TOKENS = 4;

    private final Behaviour behaviour;
    private final long delayMs;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel channel;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();

    /**
     * @param behaviour what to do with every request.
     * @param delayMs gap between chunks of {@code STREAM} and {@code SLOW_DRIP}.
     * @throws InterruptedException if interrupted while binding.
     */
    BrokenServer(final Behaviour behaviour, final long delayMs) throws InterruptedException
    {
        this.behaviour = behaviour;
        this.delayMs = delayMs;
        channel = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
            .childHandler(new ChannelInitializer<SocketChannel>()
            {
                @Override
                protected void initChannel(final SocketChannel ch)
                {
                    ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(16 << 20), new Handler());
                }
            })
            .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    /**
     * @return a port on 127.0.0.1 where nothing listens (bound, then closed).
     * @throws IOException if no port can be bound.
     */
    static int closedPort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }

    int port()
    {
        return ((InetSocketAddress)channel.localAddress()).getPort();
    }

    int requests()
    {
        return requests.get();
    }

    int maxInFlight()
    {
        return maxInFlight.get();
    }

    @Override
    public void close()
    {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static String chunk(final int index)
    {
        return "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0," +
            "\"text\":\" w" + index + "\",\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":10," +
            "\"completion_tokens\":" + (index + 1) + "}}\n\n";
    }

    /** Serves one connection. */
    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest>
    {
        private boolean holding;

        @Override
        protected void channelRead0(final ChannelHandlerContext ctx, final FullHttpRequest request)
        {
            requests.incrementAndGet();
            holding = true;
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            switch (behaviour)
            {
                case HTTP_500 -> error(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, "InternalServerError");
                case HTTP_429 -> error(ctx, HttpResponseStatus.TOO_MANY_REQUESTS, "TooManyRequests");
                case STALL -> ctx.writeAndFlush(sseHeaders());
                case INVALID_SSE ->
                {
                    ctx.write(sseHeaders());
                    ctx.writeAndFlush(content("data: this is not json\n\ndata: {\"half\":\n\n"));
                }
                case RESET_MID_STREAM ->
                {
                    ctx.write(sseHeaders());
                    for (int i = 0; i < 3; i++)
                    {
                        ctx.write(content(chunk(i)));
                    }
                    ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
                }
                case MALFORMED_HTTP -> writeRaw(ctx, "HTTP/1.1 200 OK\r\nContent-Length: twelve\r\n\r\n{}");
                case STREAM, SLOW_DRIP, GARBAGE_AFTER_STREAM, PARTIAL_AFTER_STREAM ->
                {
                    ctx.writeAndFlush(sseHeaders());
                    drip(ctx, 0);
                }
                default -> throw new IllegalStateException(behaviour.toString());
            }
        }

        private void drip(final ChannelHandlerContext ctx, final int index)
        {
            ctx.executor().schedule(() ->
            {
                if (!ctx.channel().isActive())
                {
                    return;
                }
                ctx.writeAndFlush(content(chunk(index)));
                if (Behaviour.SLOW_DRIP != behaviour && index + 1 == TOKENS)
                {
                    done();
                    ctx.writeAndFlush(content("data: [DONE]\n\n"));
                    if (Behaviour.GARBAGE_AFTER_STREAM == behaviour || Behaviour.PARTIAL_AFTER_STREAM == behaviour)
                    {
                        // the last chunk and what follows in one buffer: one write, one read
                        writeRaw(ctx, "0\r\n\r\n" +
                            (Behaviour.GARBAGE_AFTER_STREAM == behaviour ? "garbage\r\n\r\n" : "HTTP/1.1 2"));
                    }
                    else
                    {
                        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                    }
                }
                else
                {
                    drip(ctx, index + 1);
                }
            }, delayMs, TimeUnit.MILLISECONDS);
        }

        /** Write {@code text} as it is, below the codec (which would not send it). */
        private void writeRaw(final ChannelHandlerContext ctx, final String text)
        {
            ctx.pipeline().context(HttpServerCodec.class)
                .writeAndFlush(Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII));
        }

        private void error(final ChannelHandlerContext ctx, final HttpResponseStatus status, final String type)
        {
            final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer("{\"error\":{\"message\":\"broken on purpose\",\"type\":\"" + type +
                    "\",\"param\":null,\"code\":" + status.code() + "}}", StandardCharsets.UTF_8));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
            done();
            ctx.writeAndFlush(response);
        }

        private void done()
        {
            if (holding)
            {
                holding = false;
                inFlight.decrementAndGet();
            }
        }

        @Override
        public void channelInactive(final ChannelHandlerContext ctx)
        {
            done();
            ctx.fireChannelInactive();
        }

        private HttpResponse sseHeaders()
        {
            final HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
                .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            return response;
        }

        private DefaultHttpContent content(final String text)
        {
            return new DefaultHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
        }
    }
}
