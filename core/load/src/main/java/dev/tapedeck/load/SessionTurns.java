package dev.tapedeck.load;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The turn order of a plan's sessions, as {@code load} sends them and {@code simulate} issues them: a session's turns
 * go one at a time, each no earlier than its own offset and the previous turn's end plus its think time; a later turn
 * that comes due while its session is busy is held until that turn ends. Requests outside sessions are never held.
 * <p>
 * <b>Not thread safe</b>: owned by the one thread that schedules (the dispatcher, the simulation).
 */
public final class SessionTurns
{
    /** {@link #offer} returns this for a turn held until its session's current turn ends. */
    public static final long HELD = Long.MIN_VALUE;

    private final boolean[] busy;
    private final long[] lastEndNs;
    private final List<ArrayDeque<PlannedRequest>> waiting;

    /**
     * @param sessions the plan's sessions.
     */
    public SessionTurns(final int sessions)
    {
        busy = new boolean[sessions];
        lastEndNs = new long[sessions];
        waiting = new ArrayList<>(Collections.nCopies(sessions, (ArrayDeque<PlannedRequest>)null));
    }

    /**
     * A plan entry came due.
     *
     * @param request the entry.
     * @param startNs the run's start (offsets count from it).
     * @return when it may go, or {@link #HELD} when its session is busy (it goes after {@link #ended}).
     */
    public long offer(final PlannedRequest request, final long startNs)
    {
        final int s = request.session();
        if (s < 0)
        {
            return startNs + request.offsetNs();
        }
        if (busy[s])
        {
            if (null == waiting.get(s))
            {
                waiting.set(s, new ArrayDeque<>());
            }
            waiting.get(s).add(request);
            return HELD;
        }
        busy[s] = true;
        return Math.max(startNs + request.offsetNs(), request.turn() > 0 ? lastEndNs[s] + request.thinkNs() :
            Long.MIN_VALUE + 1);
    }

    /**
     * A request ended (answered or failed).
     *
     * @param request the request.
     * @param endNs when.
     * @param startNs the run's start.
     * @param schedule told of the session's next held turn and when it may go, if there is one.
     */
    public void ended(final PlannedRequest request, final long endNs, final long startNs, final Schedule schedule)
    {
        final int s = request.session();
        if (s < 0)
        {
            return;
        }
        lastEndNs[s] = endNs;
        final ArrayDeque<PlannedRequest> held = waiting.get(s);
        final PlannedRequest next = null == held ? null : held.poll();
        if (null == next)
        {
            busy[s] = false;
            return;
        }
        schedule.at(Math.max(startNs + next.offsetNs(), endNs + next.thinkNs()), next);
    }

    /**
     * @return true when a turn is held.
     */
    public boolean anyHeld()
    {
        for (final ArrayDeque<PlannedRequest> held : waiting)
        {
            if (null != held && !held.isEmpty())
            {
                return true;
            }
        }
        return false;
    }

    /** Where a released turn goes. */
    public interface Schedule
    {
        /**
         * @param dueNs when it may go.
         * @param request the turn.
         */
        void at(long dueNs, PlannedRequest request);
    }
}
