package dev.tapedeck.kv;

import java.util.Arrays;

/**
 * An ordered set of block ids in {@code [0, capacity)}: a doubly linked list kept in two {@code int[]}s, with O(1)
 * append at the tail, removal anywhere, and the head; {@link #grow} makes room for more ids. The block pool's free
 * queue (least recently freed first) and the host tier's LRU order (least recently used first) are each one.
 * Allocates only at construction and when it grows.
 * <p>
 * <b>Not thread safe</b>: owned by its block pool or tier.
 */
final class IndexList
{
    /** No id: the list is empty, or an id is the last. */
    static final int NONE = -1;

    private int[] previous;
    private int[] next;
    private int head = NONE;
    private int tail = NONE;
    private int size;

    /**
     * @param capacity ids in {@code [0, capacity)}.
     */
    IndexList(final int capacity)
    {
        previous = new int[capacity];
        next = new int[capacity];
    }

    /**
     * Make room for ids below {@code capacity} (never shrinks); the list keeps its order.
     *
     * @param capacity the new number of ids.
     */
    void grow(final int capacity)
    {
        if (capacity > next.length)
        {
            previous = Arrays.copyOf(previous, capacity);
            next = Arrays.copyOf(next, capacity);
        }
    }

    /**
     * @return the first id, or {@link #NONE}.
     */
    int head()
    {
        return head;
    }

    /**
     * @param id an id in the list.
     * @return the id after it, or {@link #NONE}.
     */
    int next(final int id)
    {
        return next[id];
    }

    /**
     * @return ids in the list.
     */
    int size()
    {
        return size;
    }

    /**
     * @param id an id not in the list: it becomes the last.
     */
    void append(final int id)
    {
        previous[id] = tail;
        next[id] = NONE;
        if (NONE == tail)
        {
            head = id;
        }
        else
        {
            next[tail] = id;
        }
        tail = id;
        size++;
    }

    /**
     * @param id an id in the list: it leaves it.
     */
    void remove(final int id)
    {
        final int before = previous[id];
        final int after = next[id];
        if (NONE == before)
        {
            head = after;
        }
        else
        {
            next[before] = after;
        }
        if (NONE == after)
        {
            tail = before;
        }
        else
        {
            previous[after] = before;
        }
        previous[id] = NONE;
        next[id] = NONE;
        size--;
    }

    /** Empty the list. */
    void clear()
    {
        head = NONE;
        tail = NONE;
        size = 0;
    }
}
