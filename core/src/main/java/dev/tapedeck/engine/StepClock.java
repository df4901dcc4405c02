package dev.tapedeck.engine;

import java.util.concurrent.TimeUnit;

import org.agrona.DeadlineTimerWheel;

/**
 * The engine's timers on an Agrona {@link DeadlineTimerWheel}: the end of the running step and per-request holds.
 * Driven by the owning thread through {@link #poll}; the driver arms its own wake-up at {@link #earliestDeadlineNs()}.
 * <p>
 * Timers fire at or after their deadline, never before: a poll compares exact deadlines; the ticks (1.05 ms) only
 * decide how many spokes one poll walks.
 * <b>Not thread safe.</b>
 */
final class StepClock implements DeadlineTimerWheel.TimerConsumer
{
    static final long NO_DEADLINE = Long.MAX_VALUE;
    private static final long TICK_RESOLUTION_NS = 1L << 20;
    private static final int TICKS_PER_WHEEL = 256;
    private static final int EXPIRY_LIMIT = Integer.MAX_VALUE;

    private final DeadlineTimerWheel wheel;
    private long earliestDeadlineNs = NO_DEADLINE;
    private long scanEarliestNs;

    StepClock(final long startNs)
    {
        wheel = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, startNs, TICK_RESOLUTION_NS, TICKS_PER_WHEEL);
    }

    long schedule(final long deadlineNs, final long nowNs)
    {
        if (0 == wheel.timerCount())
        {
            // An idle wheel may lag far behind; restarting it avoids polling through every tick of the idle period.
            wheel.resetStartTime(Math.min(nowNs, deadlineNs));
        }
        earliestDeadlineNs = Math.min(earliestDeadlineNs, deadlineNs);
        return wheel.scheduleTimer(deadlineNs);
    }

    void cancel(final long timerId)
    {
        if (wheel.cancelTimer(timerId))
        {
            recomputeEarliest();
        }
    }

    int poll(final long nowNs, final DeadlineTimerWheel.TimerHandler handler)
    {
        if (nowNs < earliestDeadlineNs)
        {
            return 0;
        }
        int expired = 0;
        long tickEndBefore;
        do
        {
            // a poll scans the current tick and moves to the next only once now is past it: keep going while it
            // moves, so the tick that contains now is scanned too
            tickEndBefore = wheel.currentTickTime();
            expired += wheel.poll(nowNs, handler, EXPIRY_LIMIT);
        }
        while (wheel.timerCount() > 0 && wheel.currentTickTime() != tickEndBefore);
        recomputeEarliest();
        return expired;
    }

    long earliestDeadlineNs()
    {
        return earliestDeadlineNs;
    }

    int timerCount()
    {
        return (int)wheel.timerCount();
    }

    @Override
    public void accept(final long deadline, final long timerId)
    {
        scanEarliestNs = Math.min(scanEarliestNs, deadline);
    }

    private void recomputeEarliest()
    {
        if (0 == wheel.timerCount())
        {
            earliestDeadlineNs = NO_DEADLINE;
            return;
        }
        scanEarliestNs = NO_DEADLINE;
        wheel.forEach(this);
        earliestDeadlineNs = scanEarliestNs;
    }
}
