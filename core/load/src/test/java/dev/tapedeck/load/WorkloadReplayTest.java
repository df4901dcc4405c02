package dev.tapedeck.load;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What load sends for a workload replayed on AIPerf's fixed schedule: the plan of a Mooncake-style file whose clock
 * starts at 1 s, on the absolute clock, in a window of offsets, and with users on top; and the flags' refusals.
 */
class WorkloadReplayTest
{
    @TempDir
    Path dir;

    private LoadContext context(final WorkloadReplay replay) throws Exception
    {
        final Path file = dir.resolve("trace.jsonl");
        Files.writeString(file,
            "{\"timestamp\": 1000, \"session_id\": \"a\", \"input_length\": 600, \"output_length\": 8, " +
                "\"hash_ids\": [1, 2]}\n" +
            "{\"session_id\": \"a\", \"delay\": 300, \"input_length\": 700, \"output_length\": 8, " +
                "\"hash_ids\": [1, 2]}\n" +
            "{\"timestamp\": 2000, \"input_length\": 100, \"output_length\": 2, \"hash_ids\": [3]}\n" +
            "{\"timestamp\": 4000, \"input_length\": 100, \"output_length\": 2, \"hash_ids\": [4]}\n");
        return new LoadContext().urls(List.of(URI.create("http://127.0.0.1:8000"))).workload(file)
            .format("mooncake").timeScale(0.5).replay(replay);
    }

    private static long[] offsetsMs(final LoadPlan plan)
    {
        return plan.requests().stream().mapToLong(r -> r.offsetNs() / 1_000_000).toArray();
    }

    @Test
    void shouldPlanTheWindowOnTheSourcesClockAtTheTimeScale() throws Exception
    {
        assertEquals(List.of(0L, 0L, 500L, 1500L), toList(offsetsMs(Load.basePlan(context(WorkloadReplay.NONE)))),
            "default: from the first request (AIPerf's auto offset)");
        final LoadPlan absolute = Load.basePlan(context(new WorkloadReplay(0, 0, true, null, null)));
        assertEquals(List.of(500L, 500L, 1000L, 2000L), toList(offsetsMs(absolute)), "--fixed-schedule: from 0");
        assertEquals(150_000_000L, absolute.requests().get(1).thinkNs(), "the delay at the time scale");
        final LoadPlan window = Load.basePlan(context(new WorkloadReplay(0, 0, true, 1500L, 4000L)));
        assertEquals(List.of(250L, 1250L), toList(offsetsMs(window)), "offsets 1500..4000: timed from 1500");
        final LoadPlan users = Load.basePlan(context(new WorkloadReplay(2, 1_000_000_000L, true, null, 1000L)));
        assertEquals(4, users.requests().size(), "the window's one session, replayed by 2 users");
    }

    @Test
    void shouldRefuseWhatAiperfRefuses() throws Exception
    {
        assertEquals("--fixed-schedule-start-offset (2000 ms) is after --fixed-schedule-end-offset (1000 ms)",
            assertThrows(IllegalArgumentException.class, () -> new WorkloadReplay(0, 0, true, 2000L, 1000L))
                .getMessage());
        assertThrows(IllegalArgumentException.class, () -> new WorkloadReplay(0, 0, true, -1L, null));
        final IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
            () -> Load.basePlan(context(new WorkloadReplay(0, 0, true, 9000L, null))));
        assertTrue(empty.getMessage().startsWith("no request of the workload falls between 9000 ms"),
            empty.getMessage());
        final LoadContext noWorkload = new LoadContext().urls(List.of(URI.create("http://127.0.0.1:8000")))
            .concurrency(1).maxRequests(1).replay(new WorkloadReplay(0, 0, true, null, null));
        final IllegalArgumentException rule = assertThrows(IllegalArgumentException.class, noWorkload::conclude);
        assertEquals("--fixed-schedule and its offsets replay a --workload's time stamps", rule.getMessage());
    }

    private static List<Long> toList(final long[] values)
    {
        return java.util.Arrays.stream(values).boxed().toList();
    }
}
