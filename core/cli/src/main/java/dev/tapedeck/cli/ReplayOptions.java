package dev.tapedeck.cli;

import picocli.CommandLine;

import dev.tapedeck.load.WorkloadReplay;

/**
 * How {@code load} and {@code simulate} replay a workload: {@code --users} and {@code --users-ramp} (its sessions
 * replayed by concurrent users, as kv-cache-tester runs its traces) and AIPerf's {@code --fixed-schedule} flags (its
 * time stamps on the source's clock, a window of them). Filled by picocli on one thread.
 */
final class ReplayOptions
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

    @CommandLine.Option(names = "--fixed-schedule",
        description = "AIPerf's fixed schedule: the workload's time stamps on the source's own clock, from its time " +
            "0 (a first request at 60,000 ms is sent after 60 s), not from its first request (the default, and " +
            "--fixed-schedule-auto-offset).")
    boolean fixedSchedule;

    @CommandLine.Option(names = "--fixed-schedule-auto-offset",
        description = "AIPerf's flag: time the schedule from its first request (tapedeck's default; with " +
            "--fixed-schedule it undoes the absolute clock).")
    boolean autoOffset;

    @CommandLine.Option(names = "--fixed-schedule-start-offset", paramLabel = "MS",
        description = "AIPerf's flag: replay only requests at or after this time of the source's clock (ms), timed " +
            "from it.")
    Long startOffsetMs;

    @CommandLine.Option(names = "--fixed-schedule-end-offset", paramLabel = "MS",
        description = "AIPerf's flag: replay only requests at or before this time of the source's clock (ms).")
    Long endOffsetMs;

    /**
     * @return the replay the flags describe.
     * @throws IllegalArgumentException for negative values, a start after the end, or a start offset with the auto
     *     offset (AIPerf refuses the pair too).
     */
    WorkloadReplay replay()
    {
        if (autoOffset && null != startOffsetMs)
        {
            throw new IllegalArgumentException("--fixed-schedule-start-offset and --fixed-schedule-auto-offset do " +
                "not go together: the start offset is the schedule's zero");
        }
        final boolean absolute = !autoOffset && (fixedSchedule || null != startOffsetMs || null != endOffsetMs);
        return new WorkloadReplay(count, rampNs, absolute, startOffsetMs, endOffsetMs);
    }
}
