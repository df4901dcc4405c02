package dev.tapedeck.load;

/**
 * {@code --users N --users-ramp D}: a workload's sessions replayed by N concurrent users
 * ({@link dev.tapedeck.workload.Workload#withUsers}), their first requests spread over the ramp.
 * <p>
 * Immutable; thread safe.
 *
 * @param count concurrent users; 0 replays the workload as it is.
 * @param rampNs over how long the users' first requests are spread.
 */
public record UsersReplay(int count, long rampNs)
{
    /** The workload as it is. */
    public static final UsersReplay NONE = new UsersReplay(0, 60_000_000_000L);
}
