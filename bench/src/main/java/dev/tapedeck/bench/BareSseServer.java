package dev.tapedeck.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;

import org.HdrHistogram.Histogram;

import dev.tapedeck.net.Transport;

/**
 * The ceiling for the scale benchmark: a bare Netty server on one event loop that answers every streaming request
 * with the same bytes tapedeck sends (status line, headers, completion chunks of the same size, [DONE], chunked
 * framing) on the same schedule (first token after TTFT, then one token per stream every ITL, one flush per stream
 * per step), with no JSON parsing, tokenizer, engine or metrics. Reports tokens and write lateness at
 * {@code GET /tapedeck/stats} like tapedeck does.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.tapedeck.bench.BareSseServer PORT TTFT_MS ITL_MS MAX_TOKENS [TRANSPORT]}
 */
public final class BareSseServer
{
    private static final byte[] HEAD = ("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n" +
        "transfer-encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = ("data: {\"id\":\"cmpl-0123456789abcdef0123456789abcdef\",\"object\":" +
        "\"text_completion\",\"created\":1795261424,\"model\":\"Qwen/Qwen3-8B\",\"choices\":[{\"index\":0," +
        "\"text\":\" token\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null,\"prompt_token_ids\":" +
        "null,\"token_ids\":null}]}\n\n").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LAST = ("data: {\"id\":\"cmpl-0123456789abcdef0123456789abcdef\",\"object\":" +
        "\"text_completion\",\"created\":1795261424,\"model\":\"Qwen/Qwen3-8B\",\"choices\":[{\"index\":0," +
        "\"text\":\" token\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null," +
        "\"prompt_token_ids\":null,\"token_ids\":null}]}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final long ttftNs;
    private final long itlNs;
    private final int maxTokens;
    private final List<Stream> streams = new ArrayList<>();
    private final Histogram latenessNs = new Histogram(60_000_000_000L, 3);
    private long tokens;
    private EventLoop loop;
    private long nextStepNs;
    private final Runnable stepTask = this::step;

    private static final class Stream
    {
        final ChannelHandlerContext ctx;
        final long firstDueNs;
        int sent;

        Stream(final ChannelHandlerContext ctx, final long firstDueNs)
        {
            this.ctx = ctx;
            this.firstDueNs = firstDueNs;
        }
    }

    private BareSseServer(final long ttftNs, final long itlNs, final int maxTokens)
    {
        this.ttftNs = ttftNs;
        this.itlNs = itlNs;
        this.maxTokens = maxTokens;
    }

    /**
     * @param args PORT TTFT_MS ITL_MS MAX_TOKENS.
     * @throws Exception on bind failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final BareSseServer server = new BareSseServer(Long.parseLong(args[1]) * 1_000_000L,
            Long.parseLong(args[2]) * 1_000_000L, Integer.parseInt(args[3]));
        server.loop = listen("SSE", Integer.parseInt(args[0]), args.length > 4 ? args[4] : "auto",
            server.new Handler());
        server.loop.execute(() ->
        {
            server.nextStepNs = System.nanoTime() + server.itlNs;
            server.loop.schedule(server.stepTask, server.itlNs, TimeUnit.NANOSECONDS);
        });
    }

    /**
     * Start a bare server of the scale benchmarks: one event loop listening on 127.0.0.1, each connection's pipeline
     * the HTTP codec (named {@code http}), an aggregator of whole requests and {@code handler}.
     *
     * @param kind what the server answers, for its start-up line.
     * @param port port to bind.
     * @param transportName Netty transport ({@link Transport#select}).
     * @param handler the last handler of every connection (shared by them all: {@link ChannelHandler.Sharable}).
     * @return the server's event loop.
     * @throws InterruptedException when interrupted while binding.
     */
    static EventLoop listen(final String kind, final int port, final String transportName,
        final ChannelHandler handler) throws InterruptedException
    {
        final Transport transport = Transport.select(transportName);
        final EventLoop loop = new MultiThreadIoEventLoopGroup(1, transport.ioHandlerFactory()).next();
        new ServerBootstrap().group(loop, loop)
            .channel(transport.serverChannel())
            .option(ChannelOption.SO_BACKLOG, 4096)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>()
            {
                @Override
                protected void initChannel(final SocketChannel channel)
                {
                    channel.pipeline().addLast("http", new HttpServerCodec())
                        .addLast(new HttpObjectAggregator(1 << 20))
                        .addLast(handler);
                }
            })
            .bind("127.0.0.1", port).sync();
        System.out.println("bare " + kind + " server on 127.0.0.1:" + port + " (" + transport.cliName() + ")");
        return loop;
    }

    private void step()
    {
        final long dueNs = nextStepNs;
        nextStepNs += itlNs;
        int written = 0;
        for (int i = 0; i < streams.size(); i++)
        {
            final Stream stream = streams.get(i);
            if (stream.firstDueNs > dueNs)
            {
                continue;
            }
            final boolean last = ++stream.sent == maxTokens;
            final byte[] event = last ? LAST : EVENT;
            final ByteBuf frame = stream.ctx.alloc().buffer(event.length + 16);
            frame.writeCharSequence(Integer.toHexString(event.length), StandardCharsets.US_ASCII);
            frame.writeByte('\r').writeByte('\n').writeBytes(event).writeByte('\r').writeByte('\n');
            if (last)
            {
                frame.writeBytes(END);
            }
            final ChannelHandlerContext wire = stream.ctx.pipeline().context("http");
            wire.writeAndFlush(frame, wire.voidPromise());
            latenessNs.recordValue(Math.min(Math.max(System.nanoTime() - dueNs, 0), 60_000_000_000L));
            written++;
            if (last)
            {
                streams.set(i, streams.get(streams.size() - 1));
                streams.remove(streams.size() - 1);
                i--;
            }
        }
        tokens += written;
        loop.schedule(stepTask, Math.max(0, nextStepNs - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Starts a stream per request; keeps nothing of its own, so one serves every connection. */
    @ChannelHandler.Sharable
    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest>
    {
        @Override
        protected void channelRead0(final ChannelHandlerContext ctx, final FullHttpRequest request)
        {
            if (request.uri().startsWith("/tapedeck/stats"))
            {
                final String json = "{\"tokens\":" + tokens + ",\"emission_lateness_us\":{\"count\":" +
                    latenessNs.getTotalCount() + ",\"p50\":" + latenessNs.getValueAtPercentile(50) / 1000 +
                    ",\"p90\":" + latenessNs.getValueAtPercentile(90) / 1000 +
                    ",\"p99\":" + latenessNs.getValueAtPercentile(99) / 1000 +
                    ",\"p999\":" + latenessNs.getValueAtPercentile(99.9) / 1000 +
                    ",\"max\":" + latenessNs.getMaxValue() / 1000 + "}}";
                if (request.uri().contains("reset"))
                {
                    latenessNs.reset();
                }
                final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.OK, Unpooled.copiedBuffer(json, StandardCharsets.UTF_8));
                response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
                ctx.writeAndFlush(response);
                return;
            }
            if (request.uri().startsWith("/health"))
            {
                final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.OK);
                response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
                ctx.writeAndFlush(response);
                return;
            }
            final ChannelHandlerContext wire = ctx.pipeline().context("http");
            wire.writeAndFlush(Unpooled.wrappedBuffer(HEAD), wire.voidPromise());
            streams.add(new Stream(ctx, System.nanoTime() + ttftNs));
        }
    }
}
