package dev.tapedeck.time;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.agrona.DeadlineTimerWheel;
import org.agrona.collections.Long2LongHashMap;

/**
 * Deadline timers on an Agrona {@link DeadlineTimerWheel}: the engine uses them for the end of the running step and
 * per-request holds, the load generator's dispatcher for its send times.
 * Driven by the owning thread through {@link #poll}; the driver arms its own wake-up at {@link #earliestDeadlineNs()}.
 * <p>
 * Timers fire at or after their deadline, never before: a poll compares exact deadlines; the ticks (4.2 ms) only
 * decide how many spokes one poll walks. The earliest deadline comes from a small binary heap beside the wheel (the
 * wheel can only answer it by visiting every slot); heap entries of fired or cancelled timers are dropped lazily
 * when they reach the top.
 * <b>Not thread safe.</b>
 */
public final class DeadlineTimers implements DeadlineTimerWheel.TimerHandler
{
    /** {@link #earliestDeadlineNs()} when no timer is scheduled. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;
    private static final long TICK_RESOLUTION_NS = 1L << 22;
    private static final int TICKS_PER_WHEEL = 512;
    private static final int EXPIRY_LIMIT = Integer.MAX_VALUE;
    private static final long NOT_LIVE = Long.MIN_VALUE;

    private final DeadlineTimerWheel wheel;
    private final Long2LongHashMap deadlineByLiveTimerId = new Long2LongHashMap(NOT_LIVE);
    private long[] heapDeadlines = new long[64];
    private long[] heapTimerIds = new long[64];
    private int heapSize;
    private DeadlineTimerWheel.TimerHandler handler;

    /**
     * @param startNs the clock's start ({@link System#nanoTime()} or virtual), with the engine's tick and wheel size.
     */
    public DeadlineTimers(final long startNs)
    {
        this(startNs, TICK_RESOLUTION_NS, TICKS_PER_WHEEL);
    }

    /**
     * @param startNs the clock's start ({@link System#nanoTime()} or virtual).
     * @param tickResolutionNs wheel tick, a power of two.
     * @param ticksPerWheel spokes, a power of two.
     */
    public DeadlineTimers(final long startNs, final long tickResolutionNs, final int ticksPerWheel)
    {
        wheel = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, startNs, tickResolutionNs, ticksPerWheel);
    }

    /**
     * Schedule a timer.
     *
     * @param deadlineNs when it is due.
     * @param nowNs the current time.
     * @return its id.
     */
    public long schedule(final long deadlineNs, final long nowNs)
    {
        if (0 == wheel.timerCount())
        {
            // An idle wheel may lag far behind; restarting it avoids polling through every tick of the idle period.
            wheel.resetStartTime(Math.min(nowNs, deadlineNs));
        }
        final long timerId = wheel.scheduleTimer(deadlineNs);
        deadlineByLiveTimerId.put(timerId, deadlineNs);
        heapPush(deadlineNs, timerId);
        return timerId;
    }

    /**
     * Cancel a timer (no-op if it fired).
     *
     * @param timerId its id.
     */
    public void cancel(final long timerId)
    {
        if (wheel.cancelTimer(timerId))
        {
            deadlineByLiveTimerId.remove(timerId);
            dropStaleTop();
        }
    }

    /**
     * Fire every timer due at {@code nowNs}.
     *
     * @param nowNs the current time.
     * @param timerHandler told about each expiry.
     * @return timers fired.
     */
    public int poll(final long nowNs, final DeadlineTimerWheel.TimerHandler timerHandler)
    {
        if (nowNs < earliestDeadlineNs())
        {
            return 0;
        }
        handler = timerHandler;
        int expired = 0;
        long tickEndBefore;
        do
        {
            // a poll scans the current tick and moves to the next only once now is past it: keep going while it
            // moves, so the tick that contains now is scanned too
            tickEndBefore = wheel.currentTickTime();
            expired += wheel.poll(nowNs, this, EXPIRY_LIMIT);
        }
        while (wheel.timerCount() > 0 && wheel.currentTickTime() != tickEndBefore);
        handler = null;
        dropStaleTop();
        return expired;
    }

    /**
     * @param timerId a timer that has not fired yet, or is firing (inside its handler).
     * @return its deadline as scheduled.
     */
    public long deadlineNs(final long timerId)
    {
        return deadlineByLiveTimerId.get(timerId);
    }

    /**
     * @return the earliest pending deadline, or {@link #NO_DEADLINE}.
     */
    public long earliestDeadlineNs()
    {
        return 0 == heapSize ? NO_DEADLINE : heapDeadlines[0];
    }

    /**
     * @return pending timers.
     */
    public int timerCount()
    {
        return (int)wheel.timerCount();
    }

    /**
     * Wheel callback; not for callers.
     */
    @Override
    public boolean onTimerExpiry(final TimeUnit timeUnit, final long now, final long timerId)
    {
        final boolean consumed = handler.onTimerExpiry(timeUnit, now, timerId);
        if (consumed)
        {
            deadlineByLiveTimerId.remove(timerId);
        }
        return consumed;
    }

    /**
     * Pop heap entries whose timer fired or was cancelled (a wheel may reuse a timer id, so the deadline must match).
     */
    private void dropStaleTop()
    {
        while (heapSize > 0 && deadlineByLiveTimerId.get(heapTimerIds[0]) != heapDeadlines[0])
        {
            heapPop();
        }
    }

    private void heapPush(final long deadlineNs, final long timerId)
    {
        if (heapSize == heapDeadlines.length)
        {
            heapDeadlines = Arrays.copyOf(heapDeadlines, heapSize * 2);
            heapTimerIds = Arrays.copyOf(heapTimerIds, heapSize * 2);
        }
        int child = heapSize++;
        while (child > 0)
        {
            final int parent = (child - 1) >>> 1;
            if (heapDeadlines[parent] <= deadlineNs)
            {
                break;
            }
            heapDeadlines[child] = heapDeadlines[parent];
            heapTimerIds[child] = heapTimerIds[parent];
            child = parent;
        }
        heapDeadlines[child] = deadlineNs;
        heapTimerIds[child] = timerId;
    }

    private void heapPop()
    {
        final int last = --heapSize;
        final long deadlineNs = heapDeadlines[last];
        final long timerId = heapTimerIds[last];
        int parent = 0;
        while (true)
        {
            int child = 2 * parent + 1;
            if (child >= last)
            {
                break;
            }
            if (child + 1 < last && heapDeadlines[child + 1] < heapDeadlines[child])
            {
                child++;
            }
            if (deadlineNs <= heapDeadlines[child])
            {
                break;
            }
            heapDeadlines[parent] = heapDeadlines[child];
            heapTimerIds[parent] = heapTimerIds[child];
            parent = child;
        }
        heapDeadlines[parent] = deadlineNs;
        heapTimerIds[parent] = timerId;
    }
}
