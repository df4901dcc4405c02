package dev.tapedeck.time;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeadlineTimersTest
{
    private final List<Long> fired = new ArrayList<>();
    private long lastPollNs;

    private int poll(final DeadlineTimers clock, final long nowNs)
    {
        lastPollNs = nowNs;
        return clock.poll(nowNs, (unit, now, timerId) ->
        {
            fired.add(timerId);
            return true;
        });
    }

    @Test
    void shouldFireExactlyAtTheDeadlineAndNeverBefore()
    {
        final long start = 5_000_000_000L;
        final DeadlineTimers clock = new DeadlineTimers(start);
        final long id = clock.schedule(start + 10_000_123L, start);
        assertEquals(start + 10_000_123L, clock.earliestDeadlineNs());
        assertEquals(0, poll(clock, start + 10_000_122L));
        assertTrue(fired.isEmpty());
        assertEquals(1, poll(clock, start + 10_000_123L));
        assertEquals(List.of(id), fired);
        assertEquals(DeadlineTimers.NO_DEADLINE, clock.earliestDeadlineNs());
    }

    @Test
    void shouldFireSeveralTimersInOneTickOnlyWhenEachIsDue()
    {
        final long start = 0;
        final DeadlineTimers clock = new DeadlineTimers(start);
        final long a = clock.schedule(100_000, start);
        final long b = clock.schedule(200_000, start);
        assertEquals(1, poll(clock, 150_000));
        assertEquals(List.of(a), fired);
        assertEquals(200_000, clock.earliestDeadlineNs());
        assertEquals(1, poll(clock, 250_000));
        assertEquals(List.of(a, b), fired);
    }

    @Test
    void shouldCatchUpAfterALongIdlePeriodWithoutFiringEarly()
    {
        final DeadlineTimers clock = new DeadlineTimers(0);
        final long id = clock.schedule(1_000_000, 0);
        assertEquals(1, poll(clock, 1_000_000));
        // a long idle period, then a timer far in the future of the old start
        final long later = 3_600_000_000_000L;
        final long next = clock.schedule(later + 30_000_000L, later);
        assertEquals(0, poll(clock, later + 29_999_999L));
        assertEquals(1, poll(clock, later + 30_000_000L));
        assertEquals(List.of(id, next), fired);
        assertEquals(later + 30_000_000L, lastPollNs);
    }

    @Test
    void shouldForgetACancelledTimer()
    {
        final DeadlineTimers clock = new DeadlineTimers(0);
        final long a = clock.schedule(1_000, 0);
        final long b = clock.schedule(5_000_000, 0);
        clock.cancel(a);
        assertEquals(5_000_000, clock.earliestDeadlineNs());
        assertEquals(0, poll(clock, 4_000_000));
        assertEquals(1, poll(clock, 6_000_000));
        assertEquals(List.of(b), fired);
        assertEquals(0, clock.timerCount());
    }

    /**
     * Against a brute-force model: random schedules (ids get reused by the wheel), cancels and polls; the earliest
     * deadline is always exact and nothing fires early or is lost.
     */
    @Test
    void shouldKeepTheEarliestDeadlineExactThroughRandomSchedulesCancelsAndPolls()
    {
        final java.util.Random random = new java.util.Random(7);
        final DeadlineTimers clock = new DeadlineTimers(0);
        final java.util.Map<Long, Long> live = new java.util.HashMap<>();
        long nowNs = 0;
        for (int i = 0; i < 20_000; i++)
        {
            final int action = random.nextInt(10);
            if (action < 5)
            {
                final long deadlineNs = nowNs + 1 + random.nextInt(200_000_000);
                live.put(clock.schedule(deadlineNs, nowNs), deadlineNs);
            }
            else if (action < 6 && !live.isEmpty())
            {
                final Long id = live.keySet().iterator().next();
                clock.cancel(id);
                live.remove(id);
            }
            else
            {
                nowNs += random.nextInt(30_000_000);
                final long at = nowNs;
                clock.poll(nowNs, (unit, now, timerId) ->
                {
                    final Long deadlineNs = live.remove(timerId);
                    assertTrue(null != deadlineNs && deadlineNs <= at, "fired early or unknown: " + timerId);
                    return true;
                });
                for (final long deadlineNs : live.values())
                {
                    assertTrue(deadlineNs > nowNs, "a due timer did not fire");
                }
            }
            final long expected = live.values().stream().mapToLong(Long::longValue).min()
                .orElse(DeadlineTimers.NO_DEADLINE);
            assertEquals(expected, clock.earliestDeadlineNs(), "step " + i);
            assertEquals(live.size(), clock.timerCount());
        }
    }
}
