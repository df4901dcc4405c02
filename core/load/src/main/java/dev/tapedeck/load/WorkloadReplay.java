package dev.tapedeck.load;

import dev.tapedeck.workload.Workload;

/**
 * How load and simulate replay a workload: by {@code --users N} concurrent users over {@code --users-ramp}
 * ({@link Workload#withUsers}), and on AIPerf's fixed schedule ({@code --fixed-schedule}, its auto offset and its
 * start and end offsets: {@link Workload#fixedSchedule}).
 * <p>
 * Immutable; thread safe.
 *
 * @param users concurrent users; 0 replays the workload's requests as they are.
 * @param rampNs over how long the users' first requests are spread.
 * @param absoluteSchedule time the requests from the source's time 0 ({@code --fixed-schedule} without
 *     {@code --fixed-schedule-auto-offset}) rather than from the first request.
 * @param scheduleStartMs the earliest source time replayed and the schedule's zero, or null.
 * @param scheduleEndMs the latest source time replayed, or null.
 */
public record WorkloadReplay(int users, long rampNs, boolean absoluteSchedule, Long scheduleStartMs,
    Long scheduleEndMs)
{
    /** The default ramp: 60 s. */
    public static final long DEFAULT_RAMP_NS = 60_000_000_000L;
    /** The workload as it is. */
    public static final WorkloadReplay NONE = new WorkloadReplay(0, DEFAULT_RAMP_NS, false, null, null);

    /**
     * @throws IllegalArgumentException for a negative count, ramp or offset, or a start after the end, in the words
     *     of the flags.
     */
    public WorkloadReplay
    {
        if (users < 0 || rampNs < 0)
        {
            throw new IllegalArgumentException("--users must be >= 0 and --users-ramp must not be negative, got " +
                users + " and " + rampNs + " ns");
        }
        if (null != scheduleStartMs && scheduleStartMs < 0 || null != scheduleEndMs && scheduleEndMs < 0)
        {
            throw new IllegalArgumentException("--fixed-schedule-start-offset and --fixed-schedule-end-offset must " +
                "not be negative");
        }
        Workload.checkScheduleWindow(null == scheduleStartMs ? null : scheduleStartMs.doubleValue(),
            null == scheduleEndMs ? null : scheduleEndMs.doubleValue());
    }

    /**
     * @param users concurrent users.
     * @return that many users over the default ramp, on the workload's own schedule.
     */
    public static WorkloadReplay ofUsers(final int users)
    {
        return new WorkloadReplay(users, DEFAULT_RAMP_NS, false, null, null);
    }

    /**
     * @param sweepParameter the swept level's name, or null.
     * @throws IllegalArgumentException when users are given beside a sweep of users.
     */
    public void checkAgainstSweep(final String sweepParameter)
    {
        if (users > 0 && "users".equalsIgnoreCase(sweepParameter))
        {
            throw new IllegalArgumentException("--users and --sweep users=... do not go together");
        }
    }

    /**
     * @return true when a fixed schedule other than the default (first request at 0, everything) applies.
     */
    public boolean fixedSchedule()
    {
        return absoluteSchedule || null != scheduleStartMs || null != scheduleEndMs;
    }

    /**
     * @param workload the workload as loaded.
     * @param levelUsers the users of this run (a sweep's level, else {@link #users()}); 0 for none.
     * @param firstUser the number of the first user (a sweep's earlier levels' users come first).
     * @return the requests to replay: the fixed schedule's window first, then the users' copies of its sessions.
     */
    public Workload apply(final Workload workload, final int levelUsers, final int firstUser)
    {
        final Workload scheduled = fixedSchedule() ? workload.fixedSchedule(absoluteSchedule,
            null == scheduleStartMs ? null : scheduleStartMs.doubleValue(),
            null == scheduleEndMs ? null : scheduleEndMs.doubleValue()) : workload;
        return levelUsers > 0 ? scheduled.withUsers(levelUsers, rampNs / 1e6, firstUser) : scheduled;
    }
}
