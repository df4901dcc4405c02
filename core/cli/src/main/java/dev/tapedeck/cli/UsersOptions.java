package dev.tapedeck.cli;

import picocli.CommandLine;

import dev.tapedeck.load.UsersReplay;

/**
 * {@code --users} and {@code --users-ramp}, shared by {@code load} and {@code simulate}: a workload's sessions
 * replayed by concurrent users, as kv-cache-tester runs its traces.
 */
final class UsersOptions
{
    @CommandLine.Option(names = "--users", defaultValue = "0", paramLabel = "N",
        description = "N concurrent users replaying the workload's sessions (user u replays session u mod S with " +
            "blocks of its own), as kv-cache-tester runs its traces; 0 replays the workload as it is (default: " +
            "${DEFAULT-VALUE}).")
    int count;

    @CommandLine.Option(names = "--users-ramp", defaultValue = "60s", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "Over how long the users' first requests are spread (default: ${DEFAULT-VALUE}).")
    long rampNs;

    /**
     * @return the replay the flags describe.
     * @throws IllegalArgumentException for a negative count or ramp.
     */
    UsersReplay replay()
    {
        return new UsersReplay(count, rampNs);
    }
}
