package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import org.agrona.concurrent.NanoClock;

/**
 * One HTTP connection's limits ({@link ConnectionLimits}): the server's connection cap, the read timeout of a request
 * and the keep-alive timeout of an idle connection. Two handlers share its state: {@link #bytes()} before the HTTP
 * codec sees raw bytes arrive (a request has begun, even one whose head never completes) and {@link #exchanges()}
 * after it sees requests end (inbound {@link LastHttpContent}) and responses end (outbound). While a request is being
 * answered (a stream may run for minutes) no timeout applies, and a connection is not idle while its last response's
 * bytes still wait in Netty's buffer for the socket (a client that takes none of them for the longer of the two
 * timeouts is closed). A connection over the cap gets {@code 503} and is closed;
 * a request not read in time gets {@code 408} and the connection is closed; an idle connection is closed.
 * <p>
 * One instance per connection; every method runs on the connection's event loop. The count of open connections is
 * shared by the server's connections ({@link Census}); the timeouts of an instance's connections are checked together,
 * by one periodic task on the instance's loop ({@link Sweep}).
 */
final class ConnectionGuard
{
    private static final System.Logger LOG = System.getLogger(ConnectionGuard.class.getName());
    private static final long NOT_PENDING = Long.MIN_VALUE;

    private final ConnectionLimits limits;
    private final Census census;
    private final Sweep sweep;
    /** This guard's place in its sweep, or -1 when it is not in one. */
    private int sweepIndex = -1;
    private final ChannelInboundHandlerAdapter bytes = new Bytes();
    private final ChannelDuplexHandler exchanges = new Exchanges();
    private ChannelHandlerContext headCtx;
    private boolean counted;
    private boolean reading;
    private long readStartNs;
    private long idleSinceNs;
    /** Since when the last response's bytes have waited in Netty's buffer, or {@link #NOT_PENDING}. */
    private long outputPendingSinceNs = NOT_PENDING;
    private long requestsRead;
    private long responsesDone;

    /**
     * @param limits the connection's limits.
     * @param census the server's open connections.
     * @param sweep the periodic check of the instance's connections ({@link Sweep}).
     */
    ConnectionGuard(final ConnectionLimits limits, final Census census, final Sweep sweep)
    {
        this.limits = limits;
        this.census = census;
        this.sweep = sweep;
    }

    /**
     * @return the handler to install before the HTTP codec.
     */
    ChannelInboundHandlerAdapter bytes()
    {
        return bytes;
    }

    /**
     * @return the handler to install right after the HTTP codec.
     */
    ChannelDuplexHandler exchanges()
    {
        return exchanges;
    }

    private boolean busy()
    {
        return responsesDone < requestsRead;
    }

    private long nowNs()
    {
        return headCtx.executor().ticker().nanoTime();
    }

    private void opened(final ChannelHandlerContext ctx)
    {
        if (null != headCtx)
        {
            return;
        }
        headCtx = ctx;
        if (!census.admit(limits.maxConnections()))
        {
            refuse(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "ServiceUnavailableError", "too many open " +
                "connections (--max-connections " + limits.maxConnections() + "); retry later");
            census.refused();
            return;
        }
        counted = true;
        idleSinceNs = nowNs();
        if (sweep.checksTimeouts())
        {
            sweep.add(this);
        }
    }

    private static long positiveOrMax(final long ns)
    {
        return ns > 0 ? ns : Long.MAX_VALUE;
    }

    private void closed()
    {
        sweep.remove(this);
        if (counted)
        {
            counted = false;
            census.leave();
        }
    }

    private void check(final long nowNs)
    {
        if (busy() || !headCtx.channel().isActive())
        {
            return;
        }
        if (reading)
        {
            if (limits.readTimeoutNs() > 0 && nowNs - readStartNs >= limits.readTimeoutNs())
            {
                refuse(headCtx, HttpResponseStatus.REQUEST_TIMEOUT, "RequestTimeoutError", "the request was not " +
                    "received within " + TimeUnit.NANOSECONDS.toMillis(limits.readTimeoutNs()) +
                    " ms (--http-read-timeout)");
            }
        }
        else if (limits.keepAliveTimeoutNs() > 0)
        {
            if (hasPendingOutput())
            {
                // the last response's bytes still wait in Netty's buffer for the socket (a slow reader, an overloaded
                // client): the client has not seen the response end, so it cannot have sent its next request yet; the
                // connection is idle from the first check that finds them gone (closing now would reset that next
                // request), unless the client takes nothing for the longer of the two timeouts: then it is gone
                if (NOT_PENDING == outputPendingSinceNs)
                {
                    outputPendingSinceNs = nowNs;
                }
                else if (nowNs - outputPendingSinceNs >= Math.max(limits.keepAliveTimeoutNs(), limits.readTimeoutNs()))
                {
                    headCtx.close();
                    return;
                }
                idleSinceNs = nowNs;
            }
            else
            {
                outputPendingSinceNs = NOT_PENDING;
                if (nowNs - idleSinceNs >= limits.keepAliveTimeoutNs())
                {
                    headCtx.close();
                }
            }
        }
    }

    private boolean hasPendingOutput()
    {
        final ChannelOutboundBuffer pending = headCtx.channel().unsafe().outboundBuffer();
        return null != pending && pending.totalPendingWriteBytes() > 0;
    }

    /** Answer with a complete response written below the codec, then close: nothing else is in flight. */
    private static void refuse(final ChannelHandlerContext ctx, final HttpResponseStatus status, final String type,
        final String message)
    {
        final byte[] body = ControlResponses.errorJson(status, type, message, null).getBytes(StandardCharsets.UTF_8);
        final ByteBuf response = Unpooled.buffer(160 + body.length);
        response.writeCharSequence("HTTP/1.1 " + status + "\r\ncontent-type: application/json\r\n" +
            "content-length: " + body.length + "\r\nconnection: close\r\n\r\n", StandardCharsets.US_ASCII);
        response.writeBytes(body);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    private final class Bytes extends ChannelInboundHandlerAdapter
    {
        @Override
        public void handlerAdded(final ChannelHandlerContext ctx)
        {
            if (ctx.channel().isActive())
            {
                opened(ctx); // added to a connection already open (an embedded channel)
            }
        }

        @Override
        public void channelActive(final ChannelHandlerContext ctx)
        {
            opened(ctx);
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(final ChannelHandlerContext ctx, final Object msg)
        {
            if (!reading && msg instanceof ByteBuf && ((ByteBuf)msg).isReadable())
            {
                reading = true;
                readStartNs = nowNs();
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void channelInactive(final ChannelHandlerContext ctx)
        {
            closed();
            ctx.fireChannelInactive();
        }
    }

    private final class Exchanges extends ChannelDuplexHandler
    {
        @Override
        public void channelRead(final ChannelHandlerContext ctx, final Object msg)
        {
            if (msg instanceof LastHttpContent)
            {
                reading = false;
                requestsRead++;
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void write(final ChannelHandlerContext ctx, final Object msg, final ChannelPromise promise)
        {
            if (msg instanceof LastHttpContent)
            {
                responsesDone++; // may run ahead of requestsRead: a 413 is sent before its body is read
                if (!busy())
                {
                    idleSinceNs = nowNs();
                }
            }
            ctx.write(msg, promise);
        }
    }

    /**
     * The timeouts of one instance's connections, checked by one periodic task on the instance's event loop: one
     * wake-up per period for all of them, where a task per connection woke an idle loop once per connection and period
     * (1,000 wake-ups a second at 1,000 connections, each a system call and a context switch between a step's
     * writes). The period is a tenth of the shorter timeout, from 10 ms to 250 ms, so a timeout fires at most one
     * period late; the task runs only while the instance has a connection.
     * <p>
     * Confined to the instance's event loop.
     */
    static final class Sweep
    {
        private static final long MIN_PERIOD_NS = TimeUnit.MILLISECONDS.toNanos(10);
        private static final long MAX_PERIOD_NS = TimeUnit.MILLISECONDS.toNanos(250);

        private final EventLoop loop;
        private final long periodNs;
        private final Runnable checkAll = this::checkAll;
        private ConnectionGuard[] guards = new ConnectionGuard[16];
        private int count;
        private ScheduledFuture<?> task;

        /**
         * @param loop the instance's event loop.
         * @param limits the instance's connection limits.
         */
        Sweep(final EventLoop loop, final ConnectionLimits limits)
        {
            this.loop = loop;
            final long timeoutNs = Math.min(positiveOrMax(limits.keepAliveTimeoutNs()),
                positiveOrMax(limits.readTimeoutNs()));
            periodNs = Long.MAX_VALUE == timeoutNs ? 0 :
                Math.max(MIN_PERIOD_NS, Math.min(timeoutNs / 10, MAX_PERIOD_NS));
        }

        /** @return true when the limits have a timeout to check. */
        boolean checksTimeouts()
        {
            return periodNs > 0;
        }

        /** @return the connections being checked. */
        int size()
        {
            return count;
        }

        /** @return true while the periodic task is scheduled (while a connection is being checked). */
        boolean scheduled()
        {
            return null != task;
        }

        /** @return the time between checks, in nanoseconds (0 when there is no timeout). */
        long periodNs()
        {
            return periodNs;
        }

        void add(final ConnectionGuard guard)
        {
            if (guard.sweepIndex >= 0)
            {
                return;
            }
            if (count == guards.length)
            {
                guards = java.util.Arrays.copyOf(guards, count * 2);
            }
            guard.sweepIndex = count;
            guards[count++] = guard;
            if (null == task)
            {
                task = loop.scheduleAtFixedRate(checkAll, periodNs, periodNs, TimeUnit.NANOSECONDS);
            }
        }

        void remove(final ConnectionGuard guard)
        {
            final int index = guard.sweepIndex;
            if (index < 0)
            {
                return;
            }
            final ConnectionGuard last = guards[--count];
            guards[index] = last;
            last.sweepIndex = index;
            guards[count] = null;
            guard.sweepIndex = -1;
            if (0 == count && null != task)
            {
                task.cancel(false);
                task = null;
            }
        }

        private void checkAll()
        {
            final long nowNs = loop.ticker().nanoTime(); // the connections' clock: they live on this loop
            // from the end, so that a guard leaving during the pass could only swap in one already seen (Netty tells
            // of a close later, so none leaves today; the order keeps the pass right if one did)
            for (int i = count - 1; i >= 0; i--)
            {
                if (i < count)
                {
                    guards[i].check(nowNs);
                }
            }
        }
    }

    /**
     * The open connections of one server, and the log lines of refused connections and failed accepts (each at most
     * once per 10 s, with a count). Thread safe.
     */
    static final class Census
    {
        private final AtomicInteger open = new AtomicInteger();
        private final EveryTenSeconds refusedLog;
        private final NanoClock clock;

        /**
         * @param clock the serve context's clock (log intervals).
         */
        Census(final NanoClock clock)
        {
            this.clock = clock;
            refusedLog = new EveryTenSeconds(clock);
        }

        boolean admit(final int max)
        {
            if (open.incrementAndGet() > max && max > 0)
            {
                open.decrementAndGet();
                return false;
            }
            return true;
        }

        void leave()
        {
            open.decrementAndGet();
        }

        void refused()
        {
            final long count = refusedLog.countAndTakeIfDue();
            if (count > 0)
            {
                LOG.log(System.Logger.Level.WARNING, "refused {0} connection(s) over --max-connections since the " +
                    "last such line (at most one per 10 s)", count);
            }
        }

        /**
         * @return a handler for a server channel, after Netty's acceptor: a failed accept (out of file descriptors)
         *     is logged in one line at most once per 10 s with a count, instead of a stack trace each time.
         */
        ChannelInboundHandlerAdapter acceptErrors()
        {
            final EveryTenSeconds failures = new EveryTenSeconds(clock);
            return new ChannelInboundHandlerAdapter()
            {
                @Override
                public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
                {
                    final long count = failures.countAndTakeIfDue();
                    if (count > 0)
                    {
                        LOG.log(System.Logger.Level.WARNING, "accepting connections on {0} failed {1} time(s) " +
                            "since the last such line (at most one per 10 s): {2}", ctx.channel().localAddress(),
                            count, cause);
                    }
                }
            };
        }
    }

    /**
     * Counts events and lets one through at most every 10 s of the clock, with how many happened since the last one
     * (the first one always). Thread safe.
     */
    private static final class EveryTenSeconds
    {
        private static final long INTERVAL_NS = TimeUnit.SECONDS.toNanos(10);

        private final NanoClock clock;
        private final AtomicLong count = new AtomicLong();
        private final AtomicLong lastNs;

        EveryTenSeconds(final NanoClock clock)
        {
            this.clock = clock;
            lastNs = new AtomicLong(clock.nanoTime() - INTERVAL_NS);
        }

        /**
         * Count one event.
         *
         * @return the events counted since the last one let through, this one included, when this one is let through;
         *     else 0.
         */
        long countAndTakeIfDue()
        {
            count.incrementAndGet();
            final long nowNs = clock.nanoTime();
            final long last = lastNs.get();
            return nowNs - last >= INTERVAL_NS && lastNs.compareAndSet(last, nowNs) ? count.getAndSet(0) : 0;
        }
    }
}
