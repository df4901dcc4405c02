package dev.tapedeck.engine;

import java.util.Arrays;

/**
 * The bounded waiting queue: a binary min-heap over an array, ordered by the time a request reaches the queue then
 * its arrival (FCFS) or by {@code (priority, arrival)} (PRIORITY). A preempted request keeps both, so it goes back
 * to the front, as in vLLM. The array starts small and doubles up to the capacity fixed at start-up (so a hundred
 * idle replicas do not each hold a full-size queue); it never shrinks, so a warmed-up queue allocates nothing.
 * <b>Not thread safe.</b>
 */
final class WaitingQueue
{
    private static final int INITIAL_LENGTH = 64;

    private final int capacity;
    private final boolean byPriority;
    private Request[] heap;
    private int size;

    WaitingQueue(final int capacity, final SchedulingPolicy policy)
    {
        this.capacity = Math.max(capacity, 1);
        heap = new Request[Math.min(this.capacity, INITIAL_LENGTH)];
        byPriority = SchedulingPolicy.PRIORITY == policy;
    }

    int size()
    {
        return size;
    }

    int capacity()
    {
        return capacity;
    }

    /**
     * @return true when a waiting request holds KV blocks (it was loaded from a connector and waits to compute).
     */
    boolean anyHoldsBlocks()
    {
        for (int i = 0; i < size; i++)
        {
            if (heap[i].numBlocks > 0)
            {
                return true;
            }
        }
        return false;
    }

    boolean isEmpty()
    {
        return 0 == size;
    }

    /**
     * The array is sized for the admission limit plus one running set, so requests put back by preemption always fit.
     */
    void add(final Request request)
    {
        if (size == heap.length)
        {
            if (size == capacity)
            {
                throw new IllegalStateException("waiting queue full");
            }
            heap = Arrays.copyOf(heap, (int)Math.min((long)heap.length * 2, capacity));
        }
        heap[size] = request;
        siftUp(size);
        size++;
    }

    Request peek()
    {
        return 0 == size ? null : heap[0];
    }

    Request poll()
    {
        if (0 == size)
        {
            return null;
        }
        final Request head = heap[0];
        removeAt(0);
        return head;
    }

    boolean remove(final Request request)
    {
        for (int i = 0; i < size; i++)
        {
            if (heap[i] == request)
            {
                removeAt(i);
                return true;
            }
        }
        return false;
    }

    Request get(final int index)
    {
        return heap[index];
    }

    private void removeAt(final int index)
    {
        size--;
        final Request last = heap[size];
        heap[size] = null;
        if (index < size)
        {
            heap[index] = last;
            siftDown(index);
            siftUp(index);
        }
    }

    private void siftUp(final int start)
    {
        int child = start;
        final Request item = heap[child];
        while (child > 0)
        {
            final int parent = (child - 1) >>> 1;
            if (!before(item, heap[parent]))
            {
                break;
            }
            heap[child] = heap[parent];
            child = parent;
        }
        heap[child] = item;
    }

    private void siftDown(final int start)
    {
        int parent = start;
        final Request item = heap[parent];
        final int half = size >>> 1;
        while (parent < half)
        {
            int child = 2 * parent + 1;
            final int right = child + 1;
            if (right < size && before(heap[right], heap[child]))
            {
                child = right;
            }
            if (!before(heap[child], item))
            {
                break;
            }
            heap[parent] = heap[child];
            parent = child;
        }
        heap[parent] = item;
    }

    private boolean before(final Request a, final Request b)
    {
        if (byPriority)
        {
            return a.priority() != b.priority() ? a.priority() < b.priority() : a.arrivalSequence < b.arrivalSequence;
        }
        // FCFS: in the order requests reach the queue (their frontend delays may differ), then of their arrival
        return a.queuedNs != b.queuedNs ? a.queuedNs < b.queuedNs : a.arrivalSequence < b.arrivalSequence;
    }
}
