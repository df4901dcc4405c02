package dev.tapedeck.load.client;

import java.util.Arrays;

/**
 * Exchanges handed to a lane ahead of their send time, ordered by intended send time: a binary min-heap on an array
 * that grows when full and otherwise allocates nothing. Confined to the lane's event loop.
 */
final class DueExchanges
{
    /** {@link #earliestNs()} when empty. */
    static final long NONE = Long.MAX_VALUE;

    private Exchange[] heap = new Exchange[64];
    private int size;

    void add(final Exchange exchange)
    {
        if (size == heap.length)
        {
            heap = Arrays.copyOf(heap, size * 2);
        }
        int i = size++;
        final long keyNs = exchange.intendedNs;
        while (i > 0)
        {
            final int parent = (i - 1) >>> 1;
            if (heap[parent].intendedNs - keyNs <= 0)
            {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = exchange;
    }

    /**
     * @return the intended send time of the earliest exchange, or {@link #NONE}.
     */
    long earliestNs()
    {
        return 0 == size ? NONE : heap[0].intendedNs;
    }

    /**
     * @param nowNs the current time.
     * @return the earliest exchange if it is due at {@code nowNs} (removed), else null.
     */
    Exchange pollDue(final long nowNs)
    {
        if (0 == size || heap[0].intendedNs - nowNs > 0)
        {
            return null;
        }
        return removeFirst();
    }

    /**
     * @return the earliest exchange (removed), or null when empty.
     */
    Exchange poll()
    {
        return 0 == size ? null : removeFirst();
    }

    int size()
    {
        return size;
    }

    private Exchange removeFirst()
    {
        final Exchange first = heap[0];
        final Exchange last = heap[--size];
        heap[size] = null;
        if (size > 0)
        {
            int i = 0;
            final long keyNs = last.intendedNs;
            while (true)
            {
                int child = 2 * i + 1;
                if (child >= size)
                {
                    break;
                }
                if (child + 1 < size && heap[child + 1].intendedNs - heap[child].intendedNs < 0)
                {
                    child++;
                }
                if (keyNs - heap[child].intendedNs <= 0)
                {
                    break;
                }
                heap[i] = heap[child];
                i = child;
            }
            heap[i] = last;
        }
        return first;
    }
}
