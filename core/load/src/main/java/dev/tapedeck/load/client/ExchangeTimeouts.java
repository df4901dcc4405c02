package dev.tapedeck.load.client;

import java.util.concurrent.TimeUnit;

import io.netty.channel.EventLoop;

/**
 * The request timeout of a lane's running exchanges. Every exchange gets the same timeout from its write, so their
 * deadlines come in the order they started: a list in that order (linked through the exchanges, so adding and
 * removing allocate nothing) and one loop timer at the oldest deadline replace a scheduled task per exchange.
 * <p>
 * Confined to the lane's event loop.
 */
final class ExchangeTimeouts
{
    private final EventLoop loop;
    private final long timeoutNs;
    private final Runnable onTimer = this::expire;
    private Exchange oldest;
    private Exchange newest;
    private boolean armed;

    ExchangeTimeouts(final EventLoop loop, final long timeoutNs)
    {
        this.loop = loop;
        this.timeoutNs = timeoutNs;
    }

    /**
     * Start timing a written exchange (its {@code writtenNs} set, its handler running it).
     */
    void add(final Exchange exchange)
    {
        exchange.olderRunning = newest;
        exchange.newerRunning = null;
        if (null == newest)
        {
            oldest = exchange;
        }
        else
        {
            newest.newerRunning = exchange;
        }
        newest = exchange;
        if (!armed)
        {
            arm(exchange.writtenNs + timeoutNs);
        }
    }

    /**
     * Stop timing an exchange (it ended); no-op for one not timed.
     */
    void remove(final Exchange exchange)
    {
        final Exchange older = exchange.olderRunning;
        final Exchange newer = exchange.newerRunning;
        if (null == older && oldest != exchange)
        {
            return;
        }
        if (null == older)
        {
            oldest = newer;
        }
        else
        {
            older.newerRunning = newer;
        }
        if (null == newer)
        {
            newest = older;
        }
        else
        {
            newer.olderRunning = older;
        }
        exchange.olderRunning = null;
        exchange.newerRunning = null;
    }

    private void expire()
    {
        armed = false;
        final long nowNs = System.nanoTime();
        while (null != oldest && oldest.writtenNs + timeoutNs - nowNs <= 0)
        {
            final Exchange expired = oldest;
            remove(expired);
            expired.handler.onTimeout(expired);
        }
        if (null != oldest)
        {
            arm(oldest.writtenNs + timeoutNs);
        }
    }

    private void arm(final long deadlineNs)
    {
        armed = true;
        loop.schedule(onTimer, Math.max(0, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
}
