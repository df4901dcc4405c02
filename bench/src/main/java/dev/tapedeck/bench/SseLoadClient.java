package dev.tapedeck.bench;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

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
 * completions request after another until the run ends. Counts completed streams (ending with {@code [DONE]}) and
 * errors (status, early close, missing [DONE]) over the run, and, inside the measurement window, on its own clock,
 * what a user of the server sees: token events received, time to the first token, and each later token's lateness.
 * A token's lateness is its arrival less the arrival the stream's own best-kept schedule gives it: token i (i >= 1)
 * of a stream is due at {@code p + i * ITL}, where {@code p} is the earliest of {@code arrival(j) - j * ITL} over
 * its tokens 1..i, so a server that keeps the inter-token latency shows 0 whatever phase its steps have, and a token
 * written a step late shows one ITL. The first token is timed apart (TTFT: a server joins it to its step cadence as
 * it likes). An event is counted as one token: a server that merges what a slow reader missed into one event
 * (tapedeck does, as vLLM does) shows fewer events and later ones. The token count adds, when a stream completes in
 * the window, the tokens its events did not count (it asked for a known number, {@code ignore_eos}): merged tokens
 * are counted at the end of their stream, not lost. One event-loop thread;
 * the window's figures are read on it.
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
    private final long itlNs;
    private volatile boolean stopping;
    private boolean measuring;
    private long eventsInWindow;
    private long tokensInWindow;
    private final int maxTokens;
    private final Histogram latenessNs = new Histogram(1_000L, 60_000_000_000L, 3);
    private final Histogram ttftNs = new Histogram(1_000L, 60_000_000_000L, 3);
    private long completed;
    private long errors;
    /** Errors by kind (connect failed, status NNN, no [DONE], closed mid-stream, and the exception that closed it). */
    private final java.util.Map<String, Long> errorKinds = new java.util.TreeMap<>();
    private long open;
    private CountDownLatch drained;

    /**
     * @param host server host.
     * @param port server port.
     * @param maxTokens tokens per request.
     * @param itlNs the inter-token latency the server is asked to keep.
     */
    public SseLoadClient(final String host, final int port, final int maxTokens, final long itlNs)
    {
        this.host = host;
        this.port = port;
        this.itlNs = itlNs;
        this.maxTokens = maxTokens;
        this.body = "{\"model\":\"Qwen/Qwen3-8B\",\"prompt\":\"Hello, scale.\",\"stream\":true,\"max_tokens\":" +
            maxTokens + ",\"ignore_eos\":true}";
    }

    /**
     * Results of a run.
     *
     * @param completed streams that ended with [DONE], over the run.
     * @param errors failed connections and streams, over the run.
     * @param openAtEnd connections still open after the drain.
     * @param errorKinds errors by kind.
     * @param windowNs the measurement window on the client's clock.
     * @param eventsInWindow token events received in the window.
     * @param tokensInWindow tokens received in the window (events, plus the tokens merged into them, counted when
     *     their stream completed).
     * @param latenessNs lateness of the tokens received in the window (each stream's second and later).
     * @param ttftNs request sent to first token, for first tokens received in the window.
     */
    public record Result(long completed, long errors, long openAtEnd, java.util.Map<String, Long> errorKinds,
        long windowNs, long eventsInWindow,
        long tokensInWindow, Histogram latenessNs, Histogram ttftNs)
    {
        /**
         * @return token events per second received in the window.
         */
        public double eventsPerSecond()
        {
            return eventsInWindow * 1e9 / windowNs;
        }

        /**
         * @return tokens per second received in the window, merged ones included.
         */
        public double tokensPerSecond()
        {
            return tokensInWindow * 1e9 / windowNs;
        }
    }

    /**
     * Open {@code streams} connections (in batches), keep them streaming for warm-up plus measurement, then let the
     * running requests finish (up to {@code drainNs}).
     *
     * @param streams concurrent streams.
     * @param warmupNs streaming time before the measurement window.
     * @param measureNs the measurement window.
     * @param drainNs how long to wait for the last requests.
     * @return counts over the whole run, and what was received in the window.
     * @throws InterruptedException if interrupted.
     */
    public Result run(final int streams, final long warmupNs, final long measureNs, final long drainNs)
        throws InterruptedException
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
                            group.execute(() -> error("connect failed: " + f.cause().getClass().getSimpleName()));
                        }
                        connected.countDown();
                    });
                }
                connected.await(30, TimeUnit.SECONDS);
            }
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmupNs));
            final long windowStartNs = group.submit(() ->
            {
                measuring = true;
                return System.nanoTime();
            }).get();
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(measureNs));
            final long windowNs = group.submit(() ->
            {
                measuring = false;
                return System.nanoTime();
            }).get() - windowStartNs;
            stopping = true;
            final long end = System.nanoTime() + drainNs;
            while (System.nanoTime() < end && group.submit(() -> open).get() > 0)
            {
                Thread.sleep(20);
            }
            return group.submit(() -> new Result(completed, errors, open, new java.util.TreeMap<>(errorKinds), windowNs,
                eventsInWindow, tokensInWindow,
                latenessNs.copy(), ttftNs.copy())).get();
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

    private void error(final String kind)
    {
        errors++;
        errorKinds.merge(kind, 1L, Long::sum);
    }

    private final class StreamHandler extends SimpleChannelInboundHandler<HttpObject>
    {
        private boolean inFlight;
        private int status;
        private String closedBy;
        private long sentNs;
        private int tokenIndex;
        private long bestPhaseNs;
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
            sentNs = System.nanoTime();
            tokenIndex = 0;
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
                status = ((HttpResponse)msg).status().code();
                ok = 200 == status;
            }
            if (msg instanceof HttpContent)
            {
                scan(((HttpContent)msg).content(), System.nanoTime());
                if (msg instanceof LastHttpContent)
                {
                    inFlight = false;
                    if (ok && sawDone)
                    {
                        completed++;
                        if (measuring)
                        {
                            tokensInWindow += Math.max(0, maxTokens - tokenIndex); // merged into fewer events
                        }
                    }
                    else
                    {
                        error(ok ? "no [DONE]" : "status " + status);
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
         * Find blank-line event ends (a token each, until [DONE]) and look for [DONE], across content boundaries.
         */
        private void scan(final ByteBuf content, final long nowNs)
        {
            for (int i = content.readerIndex(), end = content.writerIndex(); i < end; i++)
            {
                final byte b = content.getByte(i);
                if ('\n' == b)
                {
                    if (previousNewline)
                    {
                        if (!sawDone)
                        {
                            token(nowNs);
                        }
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

        private void token(final long nowNs)
        {
            final long phaseNs = nowNs - tokenIndex * itlNs;
            if (1 == tokenIndex || phaseNs < bestPhaseNs)
            {
                bestPhaseNs = phaseNs;
            }
            if (measuring)
            {
                eventsInWindow++;
                tokensInWindow++;
                if (0 == tokenIndex)
                {
                    ttftNs.recordValue(Math.min(Math.max(nowNs - sentNs, 0), 60_000_000_000L));
                }
                else
                {
                    latenessNs.recordValue(Math.min(phaseNs - bestPhaseNs, 60_000_000_000L));
                }
            }
            tokenIndex++;
        }

        @Override
        public void channelInactive(final ChannelHandlerContext ctx)
        {
            open--;
            if (inFlight)
            {
                error("closed mid-stream" + (null == closedBy ? "" : " (" + closedBy + ")"));
            }
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
        {
            closedBy = cause.getClass().getSimpleName();
            ctx.close();
        }
    }
}
