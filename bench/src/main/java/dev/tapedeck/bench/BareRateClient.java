package dev.tapedeck.bench;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.LastHttpContent;

import dev.tapedeck.net.Transport;

/**
 * The ceiling for {@code tapedeck load}'s open loop: the least a Netty client does to send streaming completions at
 * a constant rate, with nothing a load generator adds (no plan, no per-request records, no histograms, no reports).
 * One event loop; a task on it sends every request that is due, on an idle keep-alive connection (or a new one when
 * none is idle), then schedules itself for the next one. A request's dispatch lateness is the time it was handed to
 * its connection minus its intended time, kept in a {@code long[]} and sorted at the end. Requests are one encoded
 * buffer written as it is; responses are decoded by Netty's {@link HttpResponseDecoder} and only their status and end
 * are looked at.
 * <p>
 * Usage: {@code java -cp bench/target/benchmarks.jar dev.tapedeck.bench.BareRateClient --url http://127.0.0.1:8000
 * --rate 5000 --duration 30 --warmup 5 [--output-tokens 4]}; prints one line. Exit 1 when no request completed.
 */
public final class BareRateClient
{
    private final String host;
    private final int port;
    private final ByteBuf request;
    private final ArrayDeque<Channel> idle = new ArrayDeque<>();
    private final long[] latenessNs;
    private int measured;
    private long completed;
    private long failed;
    private long inFlight;

    private BareRateClient(final String host, final int port, final int outputTokens, final int capacity)
    {
        this.host = host;
        this.port = port;
        final String body = "{\"model\":\"Qwen/Qwen3-8B\",\"prompt\":\"" + "hello ".repeat(32) +
            "\",\"stream\":true,\"max_tokens\":" + outputTokens + ",\"ignore_eos\":true}";
        final String head = "POST /v1/completions HTTP/1.1\r\nHost: " + host + ":" + port +
            "\r\nContent-Type: application/json\r\nContent-Length: " +
            body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n";
        this.request = Unpooled.unreleasableBuffer(Unpooled.directBuffer().writeBytes(
            (head + body).getBytes(StandardCharsets.UTF_8)));
        this.latenessNs = new long[capacity];
    }

    /**
     * @param args see the class description.
     * @throws Exception when the run cannot start.
     */
    public static void main(final String[] args) throws Exception
    {
        final URI url = URI.create(ScaleBench.arg(args, "--url", "http://127.0.0.1:8000"));
        final int rate = Integer.parseInt(ScaleBench.arg(args, "--rate", "5000"));
        final int durationS = Integer.parseInt(ScaleBench.arg(args, "--duration", "30"));
        final int warmupS = Integer.parseInt(ScaleBench.arg(args, "--warmup", "5"));
        final int outputTokens = Integer.parseInt(ScaleBench.arg(args, "--output-tokens", "4"));
        final BareRateClient client = new BareRateClient(url.getHost(), url.getPort(), outputTokens,
            Math.multiplyExact(rate, durationS) + 16);
        System.exit(client.run(rate, warmupS, durationS) ? 0 : 1);
    }

    private boolean run(final int rate, final int warmupS, final int durationS) throws InterruptedException
    {
        final Transport transport = Transport.select("auto");
        final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, transport.ioHandlerFactory());
        try
        {
            final Bootstrap bootstrap = new Bootstrap().group(group).channel(transport.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                .handler(new ChannelInitializer<SocketChannel>()
                {
                    @Override
                    protected void initChannel(final SocketChannel channel)
                    {
                        channel.pipeline().addLast(new HttpResponseDecoder(), new ResponseHandler());
                    }
                });
            final EventLoop loop = group.next();
            preconnect(bootstrap, loop, Math.max(256, Math.min(8192, rate)));
            final long intervalNs = 1_000_000_000L / rate;
            final long startNs = System.nanoTime() + 10_000_000L;
            final long measureFromNs = startNs + TimeUnit.SECONDS.toNanos(warmupS);
            final long endNs = measureFromNs + TimeUnit.SECONDS.toNanos(durationS);
            final CountDownLatch sent = new CountDownLatch(1);
            loop.execute(new Dispatcher(bootstrap, loop, startNs, intervalNs, measureFromNs, endNs, sent));
            sent.await();
            final long drainEndNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < drainEndNs && loop.submit(() -> inFlight).get() > 0)
            {
                Thread.sleep(20);
            }
            final String line = loop.submit(() -> summary(rate)).get();
            System.out.println(line);
            return loop.submit(() -> completed).get() > 0;
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

    private void preconnect(final Bootstrap bootstrap, final EventLoop loop, final int connections)
        throws InterruptedException
    {
        final CountDownLatch connected = new CountDownLatch(connections);
        for (int i = 0; i < connections; i++)
        {
            bootstrap.connect(host, port).addListener(f ->
            {
                if (f.isSuccess())
                {
                    final Channel channel = ((io.netty.channel.ChannelFuture)f).channel();
                    loop.execute(() -> idle.push(channel));
                }
                connected.countDown();
            });
        }
        connected.await(30, TimeUnit.SECONDS);
    }

    private String summary(final int rate)
    {
        final long[] sorted = Arrays.copyOf(latenessNs, measured);
        Arrays.sort(sorted);
        return String.format("bare Netty open loop %,d req/s: completed %,d failed %,d | dispatch lateness "
            + "p50/p90/p99/p99.9 %s / %s / %s / %s ms", rate, completed, failed, ms(sorted, 0.50), ms(sorted, 0.90),
            ms(sorted, 0.99), ms(sorted, 0.999));
    }

    private static String ms(final long[] sorted, final double quantile)
    {
        if (0 == sorted.length)
        {
            return "-";
        }
        final int index = Math.min(sorted.length - 1, (int)Math.ceil(quantile * sorted.length) - 1);
        return String.format("%.3f", sorted[Math.max(0, index)] / 1e6);
    }

    private void send(final Channel channel, final long intendedNs, final boolean measure)
    {
        final long writtenNs = System.nanoTime();
        if (measure)
        {
            latenessNs[measured++] = Math.max(0, writtenNs - intendedNs);
        }
        channel.pipeline().get(ResponseHandler.class).busy = true;
        channel.writeAndFlush(request.duplicate());
    }

    /** Sends what is due, then schedules itself for the next request; counts down {@code sent} after the last. */
    private final class Dispatcher implements Runnable
    {
        private final Bootstrap bootstrap;
        private final EventLoop loop;
        private final long intervalNs;
        private final long measureFromNs;
        private final long endNs;
        private final CountDownLatch sent;
        private long nextNs;

        Dispatcher(final Bootstrap bootstrap, final EventLoop loop, final long startNs, final long intervalNs,
            final long measureFromNs, final long endNs, final CountDownLatch sent)
        {
            this.bootstrap = bootstrap;
            this.loop = loop;
            this.nextNs = startNs;
            this.intervalNs = intervalNs;
            this.measureFromNs = measureFromNs;
            this.endNs = endNs;
            this.sent = sent;
        }

        @Override
        public void run()
        {
            final long nowNs = System.nanoTime();
            while (nextNs <= nowNs && nextNs < endNs)
            {
                dispatch(nextNs, nextNs >= measureFromNs);
                nextNs += intervalNs;
            }
            if (nextNs >= endNs)
            {
                sent.countDown();
                return;
            }
            loop.schedule(this, nextNs - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        private void dispatch(final long intendedNs, final boolean measure)
        {
            inFlight++;
            final Channel channel = idle.poll();
            if (null != channel)
            {
                send(channel, intendedNs, measure);
                return;
            }
            bootstrap.connect(new InetSocketAddress(host, port)).addListener(f ->
            {
                if (f.isSuccess())
                {
                    send(((io.netty.channel.ChannelFuture)f).channel(), intendedNs, measure);
                }
                else
                {
                    failed++;
                    inFlight--;
                }
            });
        }
    }

    /** Counts a response when it ends and returns its connection to the idle stack. */
    private final class ResponseHandler extends SimpleChannelInboundHandler<HttpObject>
    {
        private boolean ok;
        private boolean busy;

        @Override
        protected void channelRead0(final ChannelHandlerContext ctx, final HttpObject msg)
        {
            if (msg instanceof HttpResponse)
            {
                ok = 200 == ((HttpResponse)msg).status().code();
            }
            if (msg instanceof LastHttpContent)
            {
                inFlight--;
                busy = false;
                if (ok)
                {
                    completed++;
                }
                else
                {
                    failed++;
                }
                idle.push(ctx.channel());
            }
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
        {
            ctx.close();
        }

        @Override
        public void channelInactive(final ChannelHandlerContext ctx)
        {
            idle.remove(ctx.channel());
            if (busy)
            {
                busy = false;
                inFlight--;
                failed++;
            }
        }
    }
}
