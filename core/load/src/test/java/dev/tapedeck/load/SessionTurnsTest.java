package dev.tapedeck.load;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The turn order of sessions: independent requests go at their offsets; a session's later turn that comes due while
 * the session is busy is held, then released when the turn before it ends, no earlier than that end plus its think
 * time nor than its own offset.
 */
class SessionTurnsTest
{
    private static PlannedRequest request(final int index, final long offsetNs, final int session, final int turn,
        final long thinkNs)
    {
        return new PlannedRequest(index, offsetNs, 10, 5, null, session, turn, thinkNs);
    }

    @Test
    void aLaterTurnWaitsForThePreviousTurnAndItsThinkTime()
    {
        final SessionTurns turns = new SessionTurns(1);
        final List<long[]> released = new ArrayList<>();
        final SessionTurns.Schedule schedule = (dueNs, r) -> released.add(new long[] {dueNs, r.index()});
        final long startNs = 1_000;
        assertEquals(startNs + 100, turns.offer(request(0, 100, -1, 0, 0), startNs), "independent: at its offset");
        final PlannedRequest first = request(1, 200, 0, 0, 0);
        final PlannedRequest second = request(2, 300, 0, 1, 50);
        final PlannedRequest third = request(3, 10_000, 0, 2, 5);
        assertEquals(startNs + 200, turns.offer(first, startNs));
        assertEquals(SessionTurns.HELD, turns.offer(second, startNs), "the session is busy");
        assertEquals(SessionTurns.HELD, turns.offer(third, startNs));
        assertTrue(turns.anyHeld());

        turns.ended(first, 5_000, startNs, schedule);
        assertEquals(1, released.size());
        assertEquals(5_050, released.get(0)[0], "the end plus the think time, after the offset");
        assertEquals(2, released.get(0)[1]);

        turns.ended(second, 6_000, startNs, schedule);
        assertEquals(startNs + 10_000, released.get(1)[0], "its own offset, later than the end plus think");
        turns.ended(third, 12_000, startNs, schedule);
        assertFalse(turns.anyHeld());
        assertEquals(2, released.size(), "nothing left to release");
        assertEquals(startNs + 20_000, turns.offer(request(4, 20_000, 0, 3, 7), startNs),
            "a free session's next turn goes at its offset, the end plus think being earlier");
    }
}
