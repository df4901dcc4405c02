package dev.tapedeck.load.client;

import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * Exchanges handed to a lane ahead of their send time, ordered by intended send time (a {@link PriorityQueue}, which
 * allocates nothing per add or poll once grown). Confined to the lane's event loop.
 */
final class DueExchanges
{
    /** {@link #earliestNs()} when empty. */
    static final long NONE = Long.MAX_VALUE;

    /** By intended send time, compared as {@code System.nanoTime()} values are (by difference). */
    private static final Comparator<Exchange> BY_INTENDED_NS = (a, b) -> Long.signum(a.intendedNs - b.intendedNs);

    private final PriorityQueue<Exchange> queue = new PriorityQueue<>(64, BY_INTENDED_NS);

    void add(final Exchange exchange)
    {
        queue.add(exchange);
    }

    /**
     * @return the intended send time of the earliest exchange, or {@link #NONE}.
     */
    long earliestNs()
    {
        final Exchange first = queue.peek();
        return null == first ? NONE : first.intendedNs;
    }

    /**
     * @param nowNs the current time.
     * @return the earliest exchange if it is due at {@code nowNs} (removed), else null.
     */
    Exchange pollDue(final long nowNs)
    {
        final Exchange first = queue.peek();
        return null == first || first.intendedNs - nowNs > 0 ? null : queue.poll();
    }

    /**
     * @return the earliest exchange (removed), or null when empty.
     */
    Exchange poll()
    {
        return queue.poll();
    }

    int size()
    {
        return queue.size();
    }
}
