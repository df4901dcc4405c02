package dev.tapedeck.load.client;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslContext;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.concurrent.ScheduledFuture;
import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import dev.tapedeck.net.JsonBytes;

/**
 * One client event loop and its keep-alive connections: exchanges submitted to the lane run on idle connections
 * (most recently used first) or on new ones, each at its intended send time (or at once when that has passed).
 * <p>
 * Sends overtake reads: {@link #submit} puts the exchange on a lock-free queue and wakes the loop with one task only
 * when no wake-up is pending; besides that task, the read path ({@link #startDue}, called after every channel's read)
 * takes the queue and starts what is due, so a send waits behind at most one connection's read, not behind a whole
 * burst of readable connections (Netty runs its tasks only after every ready channel was read). Exchanges handed
 * over before their time wait in a heap on the loop and a loop timer (or an earlier read) starts them.
 * <p>
 * Closed loops keep spares in the client: when an exchange marked {@link Exchange#replaceWhenDone} ends, the loop
 * takes one and starts it in its place at the end of the same read, with no thread in between.
 * <p>
 * A prefill/decode client pairs a prefill lane with a decode lane on the same loop ({@link #pairWith}): exchanges
 * start on the prefill lane (the {@link #entry()}) and move to the decode lane when the prefill answered.
 * <p>
 * Everything but {@link #submit} runs on the lane's event loop.
 */
final class Lane
{
    private static final int HANDED_CAPACITY = 1 << 16;
    private static final int CRLF_CRLF = 0x0D0A0D0A;
    /**
     * A connection idle for longer is closed instead of reused: vLLM's server (uvicorn) closes one idle for 5 s, and a
     * request sent just as it does so would fail with the connection (HTTP/1.1's keep-alive race); httpx, the
     * OpenAI SDK's client, stops reusing at 5 s too.
     */
    static final long IDLE_EXPIRY_NS = 4_000_000_000L;

    private final ManyToOneConcurrentArrayQueue<Exchange> handed =
        new ManyToOneConcurrentArrayQueue<>(HANDED_CAPACITY);
    private final ManyToManyConcurrentArrayQueue<Exchange> spares;
    private final AtomicBoolean signalled = new AtomicBoolean();
    private final Runnable onSignal = this::onSignal;
    private final Runnable onDueTimer = this::onDueTimer;
    private final DueExchanges due = new DueExchanges();
    private final ExchangeTimeouts timeouts;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final InetSocketAddress address;
    private final String hostHeader;
    private final String pathPrefix;
    private final Map<String, String> headers;
    private final ArrayDeque<ExchangeHandler> idle = new ArrayDeque<>();
    private final java.util.Set<ExchangeHandler> open = new java.util.HashSet<>();
    private int connections;
    private boolean closing;
    private byte[] scratch = new byte[4096];
    private ScheduledFuture<?> dueTimer;
    private long dueTimerNs;
    private byte[] headPrefix;
    private String headPath;
    private boolean headStream;
    private Lane decodeLane;
    private Lane entryLane = this;

    Lane(final EventLoop loop, final Bootstrap template, final ServerUrl server, final SslContext tls,
        final Map<String, String> headers, final long timeoutNs, final ManyToManyConcurrentArrayQueue<Exchange> spares)
    {
        this.spares = spares;
        this.loop = loop;
        this.timeouts = new ExchangeTimeouts(loop, timeoutNs);
        this.address = new InetSocketAddress(server.host(), server.port());
        this.hostHeader = server.hostHeader();
        this.pathPrefix = server.pathPrefix();
        this.headers = headers;
        try
        {
            headPrefix("/", true); // a header name or value HTTP does not allow fails here, not on every request
        }
        catch (final IllegalArgumentException e)
        {
            throw new IllegalArgumentException("--header: " + e.getMessage(), e);
        }
        this.bootstrap = template.clone(loop).handler(new ChannelInitializer<SocketChannel>()
        {
            @Override
            protected void initChannel(final SocketChannel channel)
            {
                if (null != tls)
                {
                    channel.pipeline().addLast(tls.newHandler(channel.alloc(), server.host(), server.port()));
                }
                channel.pipeline().addLast(new ExchangeHandler(Lane.this));
            }
        });
    }

    /**
     * Make this the prefill lane of {@code decode}, a lane of the same event loop (before any exchange runs).
     *
     * @param decode where exchanges go once the prefill answered.
     */
    void pairWith(final Lane decode)
    {
        decodeLane = decode;
        decode.entryLane = this;
    }

    /**
     * @return the decode lane of a prefill lane (null otherwise).
     */
    Lane decodeLane()
    {
        return decodeLane;
    }

    /**
     * @return the lane where exchanges of this loop start: this one, or the prefill lane of a decode lane.
     */
    Lane entry()
    {
        return entryLane;
    }

    /**
     * Run an exchange on this lane at its intended send time (any thread).
     */
    void submit(final Exchange exchange)
    {
        if (!handed.offer(exchange))
        {
            loop.execute(() -> // the queue is full: the loop's own task queue takes the overflow
            {
                due.add(exchange);
                startDue();
            });
            return;
        }
        signal();
    }

    private void signal()
    {
        // a full fence after the offer: either the pending wake-up task sees the exchange or we post a new one
        if (!signalled.getAndSet(true))
        {
            loop.execute(onSignal);
        }
    }

    /**
     * An exchange marked {@link Exchange#replaceWhenDone} ended: take a spare to run in its place (the loop).
     *
     * @return the spare, or null when there is none (or the lane is closing).
     */
    Exchange takeSpare()
    {
        return closing ? null : spares.poll();
    }

    /**
     * Start an exchange as soon as the loop is free: at the end of the current read, or from a task (the loop).
     */
    void startSoon(final Exchange exchange)
    {
        due.add(exchange);
        signal();
    }

    private void onSignal()
    {
        signalled.set(false);
        startDue();
    }

    private void onDueTimer()
    {
        dueTimer = null;
        startDue();
    }

    /**
     * Take the exchanges handed over, start those that are due, and arm a loop timer for the next (the lane's loop;
     * also called from the read path, so it returns at once when nothing waits).
     */
    void startDue()
    {
        if (0 == due.size() && null == handed.peek())
        {
            return;
        }
        Exchange exchange;
        while (null != (exchange = handed.poll()))
        {
            due.add(exchange);
        }
        if (closing)
        {
            while (null != (exchange = due.poll()))
            {
                start(exchange);
            }
            return;
        }
        while (null != (exchange = due.pollDue(System.nanoTime())))
        {
            start(exchange);
        }
        final long nextNs = due.earliestNs();
        if (DueExchanges.NONE != nextNs && (null == dueTimer || nextNs - dueTimerNs < 0))
        {
            if (null != dueTimer)
            {
                dueTimer.cancel(false);
            }
            dueTimerNs = nextNs;
            dueTimer = loop.schedule(onDueTimer, Math.max(0, nextNs - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    private void start(final Exchange exchange)
    {
        if (closing)
        {
            exchange.release();
            exchange.listener.onFinished(exchange, System.nanoTime(), exchange.hopKind("incomplete"));
            return;
        }
        ExchangeHandler handler;
        final long nowNs = System.nanoTime();
        while (null != (handler = idle.pollFirst()))
        {
            if (!handler.isIdle())
            {
                continue;
            }
            if (nowNs - handler.idleSinceNs > IDLE_EXPIRY_NS)
            {
                // the server may be closing it right now (keep-alive race): a request sent on it could meet the close
                handler.close();
                continue;
            }
            handler.start(exchange, nowNs);
            return;
        }
        connect(opened -> opened.start(exchange, System.nanoTime()), () ->
        {
            exchange.release();
            exchange.listener.onFinished(exchange, System.nanoTime(), exchange.hopKind("connect_failed"));
        });
    }

    /**
     * Open one connection (on the lane's loop), counted in {@link #connections()} while it lives.
     *
     * @param onOpened given the new connection's handler.
     * @param onFailed run when the connection could not be opened.
     */
    private void connect(final Consumer<ExchangeHandler> onOpened, final Runnable onFailed)
    {
        connections++;
        bootstrap.connect(address).addListener((ChannelFutureListener)f ->
        {
            if (f.isSuccess())
            {
                onOpened.accept(f.channel().pipeline().get(ExchangeHandler.class));
            }
            else
            {
                connections--;
                onFailed.run();
            }
        });
    }

    /**
     * Open connections until the lane has {@code target}, parking them idle (any thread).
     *
     * @param target connections wanted on this lane.
     * @param opened counted down once per connection attempt, successful or not.
     */
    void preconnect(final int target, final java.util.concurrent.CountDownLatch opened)
    {
        loop.execute(() ->
        {
            final int missing = closing ? 0 : Math.max(0, target - connections);
            for (int i = 0; i < target; i++)
            {
                if (i >= missing)
                {
                    opened.countDown();
                    continue;
                }
                connect(handler ->
                {
                    release(handler, System.nanoTime());
                    opened.countDown();
                }, opened::countDown);
            }
        });
    }

    /**
     * The request line and headers of a request, up to and including the blank line, in a buffer of
     * {@code allocator}: the fixed part is encoded once per path and kind, then only the content length is written.
     *
     * @param roomBytes room to leave after the head (for a body written into the same buffer).
     */
    ByteBuf head(final String path, final boolean stream, final int bodyBytes, final int roomBytes,
        final ByteBufAllocator allocator)
    {
        if (!path.equals(headPath) || stream != headStream)
        {
            headPrefix = headPrefix(path, stream);
            headPath = path;
            headStream = stream;
        }
        final ByteBuf head = allocator.buffer(headPrefix.length + 24 + roomBytes);
        head.writeBytes(headPrefix);
        JsonBytes.writeLong(head, bodyBytes);
        head.writeInt(CRLF_CRLF);
        return head;
    }

    private byte[] headPrefix(final String path, final boolean stream)
    {
        final HttpHeaders h = DefaultHttpHeadersFactory.headersFactory().newHeaders();
        h.set(HttpHeaderNames.HOST, hostHeader);
        h.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        if (stream)
        {
            h.set(HttpHeaderNames.ACCEPT, "text/event-stream");
        }
        headers.forEach(h::set);
        h.remove(HttpHeaderNames.CONTENT_LENGTH);
        final StringBuilder text = new StringBuilder(256).append("POST ").append(pathPrefix).append(path)
            .append(" HTTP/1.1\r\n");
        h.forEach(e -> text.append(e.getKey()).append(": ").append(e.getValue()).append("\r\n"));
        return text.append(HttpHeaderNames.CONTENT_LENGTH).append(": ").toString()
            .getBytes(StandardCharsets.ISO_8859_1);
    }

    /**
     * Park an idle connection for the next exchange (the most recently used is taken first).
     *
     * @param nowNs now ({@link System#nanoTime()}): when it became idle.
     */
    void release(final ExchangeHandler handler, final long nowNs)
    {
        if (closing)
        {
            return;
        }
        handler.idleSinceNs = nowNs;
        idle.addFirst(handler);
    }

    void onOpened(final ExchangeHandler handler)
    {
        open.add(handler);
    }

    void onClosed(final ExchangeHandler handler)
    {
        connections--;
        idle.remove(handler);
        open.remove(handler);
    }

    /**
     * @return open connections (read on the lane's loop).
     */
    int connections()
    {
        return connections;
    }

    /**
     * Close every connection; running exchanges and those waiting for their time end as {@code incomplete}.
     *
     * @param reopen true to take exchanges again afterwards (a drain-timeout abort between two runs of one client),
     *     false to stay closed (the client is closing).
     */
    void closeAll(final boolean reopen)
    {
        loop.execute(() ->
        {
            closing = true;
            startDue(); // exchanges waiting for their time end as incomplete
            idle.clear();
            for (final ExchangeHandler handler : java.util.List.copyOf(open))
            {
                handler.close();
            }
            closing = !reopen;
        });
    }

    /**
     * A byte array of at least {@code size} bytes for reading one event or body (the lane's loop only; reused).
     */
    byte[] scratch(final int size)
    {
        if (scratch.length < size)
        {
            scratch = new byte[Math.max(size, scratch.length * 2)];
        }
        return scratch;
    }

    EventLoop loop()
    {
        return loop;
    }

    ExchangeTimeouts timeouts()
    {
        return timeouts;
    }
}
