package dev.tapedeck.load;

/**
 * {@code --users N --users-ramp D} of load and simulate: a workload's sessions replayed by N concurrent users
 * ({@link dev.tapedeck.workload.Workload#withUsers}), their first requests spread over the ramp.
 * <p>
 * Immutable; thread safe.
 *
 * @param count concurrent users; 0 replays the workload as it is.
 * @param rampNs over how long the users' first requests are spread.
 */
public record UsersReplay(int count, long rampNs)
{
    /** The default ramp: 60 s. */
    public static final long DEFAULT_RAMP_NS = 60_000_000_000L;
    /** The workload as it is. */
    public static final UsersReplay NONE = new UsersReplay(0, DEFAULT_RAMP_NS);

    /**
     * @throws IllegalArgumentException for a negative count or ramp, in the words of the flags.
     */
    public UsersReplay
    {
        if (count < 0 || rampNs < 0)
        {
            throw new IllegalArgumentException("--users must be >= 0 and --users-ramp must not be negative, got " +
                count + " and " + rampNs + " ns");
        }
    }

    /**
     * @param count concurrent users.
     * @return that many users over the default ramp.
     */
    public static UsersReplay of(final int count)
    {
        return new UsersReplay(count, DEFAULT_RAMP_NS);
    }

    /**
     * @param sweepParameter the swept level's name, or null.
     * @throws IllegalArgumentException when users are given beside a sweep of users.
     */
    public void checkAgainstSweep(final String sweepParameter)
    {
        if (count > 0 && "users".equalsIgnoreCase(sweepParameter))
        {
            throw new IllegalArgumentException("--users and --sweep users=... do not go together");
        }
    }
}
