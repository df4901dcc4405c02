package dev.tapedeck.load.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The lane's heap of exchanges handed over before their time: due ones come out earliest first, the others stay.
 */
class DueExchangesTest
{
    private static Exchange at(final long intendedNs)
    {
        return new Exchange(0, intendedNs, "/v1/completions", Unpooled.EMPTY_BUFFER, true, 1, null);
    }

    @Test
    void shouldGiveDueExchangesEarliestFirstAndKeepTheRest()
    {
        final DueExchanges due = new DueExchanges();
        assertEquals(DueExchanges.NONE, due.earliestNs());
        final Random random = new Random(5);
        final List<Long> times = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) // grows past its first array; times around a negative nanoTime work too
        {
            final long t = -500_000 + random.nextInt(1_000_000);
            times.add(t);
            due.add(at(t));
        }
        times.sort(Long::compare);
        assertEquals(times.get(0), due.earliestNs());
        int taken = 0;
        Exchange e;
        while (null != (e = due.pollDue(0)))
        {
            assertEquals(times.get(taken++), e.intendedNs);
        }
        assertEquals(times.stream().filter(t -> t <= 0).count(), taken, "exactly the exchanges due at 0");
        assertEquals(1_000 - taken, due.size());
        assertEquals(times.get(taken), due.earliestNs());
        while (null != (e = due.poll()))
        {
            assertEquals(times.get(taken++), e.intendedNs);
        }
        assertEquals(1_000, taken);
        assertNull(due.pollDue(Long.MAX_VALUE));
    }

    @Test
    void shouldGiveAnExchangeAddedLateButDueEarlierFirst()
    {
        final DueExchanges due = new DueExchanges();
        final Exchange later = at(2_000);
        final Exchange turn = at(1_000); // a session turn or closed-loop send handed after a later open-loop send
        due.add(later);
        due.add(turn);
        assertNull(due.pollDue(999));
        assertSame(turn, due.pollDue(1_500));
        assertNull(due.pollDue(1_500));
        assertSame(later, due.pollDue(2_000));
    }
}
