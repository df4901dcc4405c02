package dev.tapedeck.bench;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;

import dev.tapedeck.net.Transport;

/**
 * A closed-loop streaming client for the scale benchmark: N keep-alive connections, each sending one streaming
 * completions request after another until the run ends. Counts SSE events, completed streams (ending with
 * {@code [DONE]}) and errors (status, early close, missing [DONE]). One event-loop thread.
 * <p>
 * Not the product's load generator ({@code tapedeck load}); a fixed, minimal driver so that the same client measures
 * tapedeck and the bare-Netty ceiling.
 */
public final class SseLoadClient
{
    private static final byte[] DONE = "data: [DONE]".getBytes(StandardCharsets.US_ASCII);

    private final String host;
    private final int port;
    private final String body;
    private volatile boolean stopping;
    private long events;
    private long completed;
    private long errors;
    private long open;
    private CountDownLatch drained;

    /**
     * @param host server host.
     * @param port server port.
     * @param maxTokens tokens per request.
     */
    public SseLoadClient(final String host, final int port, final int maxTokens)
    {
        this.host = host;
        this.port = port;
        this.body = "{\"model\":\"Qwen/Qwen3-8B\",\"prompt\":\"Hello, scale.\",\"stream\":true,\"max_tokens\":" +
            maxTokens + ",\"ignore_eos\":true}";
    }

    /** Callbacks around the measurement window. */
    public interface Window
    {
        /** The window starts. */
        void onStart();

        /**
         * The window ends.
         *
         * @param eventsInWindow SSE events the client received during the window.
         */
        void onEnd(long eventsInWindow);
    }

    /** Results of a run. */
    public record Result(long events, long completed, long errors, long openAtEnd)
    {
    }

    /**
     * Open {@code streams} connections (in batches), keep them streaming for warm-up plus measurement, then let the
     * running requests finish (up to {@code drainNs}).
     *
     * @param streams concurrent streams.
     * @param warmupNs streaming time before the measurement window.
     * @param measureNs the measurement window.
     * @param drainNs how long to wait for the last requests.
     * @param window told when the window starts and ends.
     * @return counts over the whole run.
     * @throws InterruptedException if interrupted.
     */
    public Result run(final int streams, final long warmupNs, final long measureNs, final long drainNs,
        final Window window) throws InterruptedException
    {
        final Transport transport = Transport.select("epoll".equals(System.getProperty("client.transport")) ?
            "epoll" : "auto");
        final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, transport.ioHandlerFactory());
        drained = new CountDownLatch(1);
        try
        {
            final Bootstrap bootstrap = new Bootstrap().group(group)
                .channel(transport.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                .handler(new ChannelInitializer<SocketChannel>()
                {
                    @Override
                    protected void initChannel(final SocketChannel channel)
                    {
                        channel.pipeline().addLast(new HttpClientCodec(4096, 16 * 1024, 1 << 20),
                            new StreamHandler());
                    }
                });
            final InetSocketAddress address = new InetSocketAddress(host, port);
            for (int opened = 0; opened < streams; opened += 500)
            {
                final int batch = Math.min(500, streams - opened);
                final CountDownLatch connected = new CountDownLatch(batch);
                for (int i = 0; i < batch; i++)
                {
                    bootstrap.connect(address).addListener(f ->
                    {
                        if (!f.isSuccess())
                        {
                            group.execute(() -> errors++);
                        }
                        connected.countDown();
                    });
                }
                connected.await(30, TimeUnit.SECONDS);
            }
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmupNs));
            final long eventsAtStart = group.submit(() -> events).get();
            window.onStart();
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(measureNs));
            window.onEnd(group.submit(() -> events).get() - eventsAtStart);
            stopping = true;
            final long end = System.nanoTime() + drainNs;
            while (System.nanoTime() < end && group.submit(() -> open).get() > 0)
            {
                Thread.sleep(20);
            }
            return group.submit(() -> new Result(events, completed, errors, open)).get();
        }
        catch (final java.util.concurrent.ExecutionException ex)
        {
            throw new IllegalStateException(ex.getCause());
        }
        finally
        {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private final class StreamHandler extends SimpleChannelInboundHandler<HttpObject>
    {
        private boolean inFlight;
        private boolean sawDone;
        private boolean ok;
        private boolean previousNewline;
        private int doneMatched;

        @Override
        public void channelActive(final ChannelHandlerContext ctx)
        {
            open++;
            send(ctx.channel());
        }

        private void send(final Channel channel)
        {
            final ByteBuf content = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
            final FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                "/v1/completions", content);
            request.headers().set(HttpHeaderNames.HOST, host);
            request.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
            request.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
            inFlight = true;
            sawDone = false;
            previousNewline = false;
            doneMatched = 0;
            channel.writeAndFlush(request);
        }

        @Override
        protected void channelRead0(final ChannelHandlerContext ctx, final HttpObject msg)
        {
            if (msg instanceof HttpResponse)
            {
                ok = 200 == ((HttpResponse)msg).status().code();
            }
            if (msg instanceof HttpContent)
            {
                scan(((HttpContent)msg).content());
                if (msg instanceof LastHttpContent)
                {
                    inFlight = false;
                    if (ok && sawDone)
                    {
                        completed++;
                    }
                    else
                    {
                        errors++;
                    }
                    if (stopping)
                    {
                        ctx.close();
                    }
                    else
                    {
                        send(ctx.channel());
                    }
                }
            }
        }

        /**
         * Count blank-line event ends and look for [DONE], across content boundaries.
         */
        private void scan(final ByteBuf content)
        {
            for (int i = content.readerIndex(), end = content.writerIndex(); i < end; i++)
            {
                final byte b = content.getByte(i);
                if ('\n' == b)
                {
                    if (previousNewline)
                    {
                        events++;
                        previousNewline = false;
                        continue;
                    }
                    previousNewline = true;
                }
                else
                {
                    previousNewline = false;
                }
                if (!sawDone)
                {
                    doneMatched = b == DONE[doneMatched] ? doneMatched + 1 : (b == DONE[0] ? 1 : 0);
                    sawDone = doneMatched == DONE.length;
                }
            }
        }

        @Override
        public void channelInactive(final ChannelHandlerContext ctx)
        {
            open--;
            if (inFlight)
            {
                errors++;
            }
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
        {
            ctx.close();
        }
    }
}
