package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.TraceFormatException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * AIPerf's {@code mooncake_trace} as its fixed schedule replays it: sessions whose later turns are timed by
 * {@code delay} after the previous answer, the source's own clock (a trace starting at 1 s), and the start and end
 * offsets that window it.
 */
class FixedScheduleTest
{
    @TempDir
    Path dir;

    private Workload trace() throws IOException
    {
        final Path file = dir.resolve("aiperf.jsonl");
        Files.writeString(file,
            "{\"timestamp\": 1000, \"input_length\": 600, \"output_length\": 8, \"hash_ids\": [1, 2]}\n" +
            "{\"timestamp\": 1200, \"session_id\": \"s\", \"input_length\": 512, \"output_length\": 4, " +
                "\"hash_ids\": [7]}\n" +
            "{\"session_id\": \"s\", \"delay\": 250, \"input_length\": 1024, \"output_length\": 4, " +
                "\"hash_ids\": [7, 8]}\n" +
            "{\"timestamp\": 1500, \"input_length\": 100, \"output_length\": 2, \"hash_ids\": [3]}\n" +
            "{\"timestamp\": 5000, \"input_length\": 100, \"output_length\": 2, \"hash_ids\": [4]}\n");
        return Workloads.load(file, WorkloadFormat.MOONCAKE);
    }

    @Test
    void shouldTimeLaterTurnsByTheirDelayAndKeepTheSourcesClock() throws IOException
    {
        final Workload workload = trace();

        assertEquals(1000.0, workload.originMs(), "shifted to start at 0, the shift kept");
        final List<WorkloadRequest> r = workload.requests();
        assertEquals(5, r.size());
        assertEquals(0.0, r.get(0).arrivalMs());
        assertEquals(200.0, r.get(1).arrivalMs());
        assertEquals("s", r.get(2).session());
        assertEquals(1, r.get(2).turn());
        assertEquals(200.0, r.get(2).arrivalMs(), "no timestamp: no earlier than the previous turn");
        assertEquals(250.0, r.get(2).thinkMs(), "delay: after the previous answer");
        assertTrue(Double.isNaN(r.get(1).thinkMs()));
        assertTrue(workload.notes().stream().noneMatch(n -> n.contains("delay")), workload.notes().toString());
    }

    @Test
    void shouldReplayOnTheAbsoluteClockOrAWindowOfIt() throws IOException
    {
        final Workload workload = trace();

        final Workload absolute = workload.fixedSchedule(true, null, null);
        assertEquals(1000.0, absolute.requests().get(0).arrivalMs(), "AIPerf waits for the first time stamp");
        assertEquals(5000.0, absolute.requests().get(4).arrivalMs());
        assertEquals(0.0, absolute.originMs());

        final Workload window = workload.fixedSchedule(true, 1100.0, 1500.0);
        assertEquals(3, window.requests().size(), "1200, its delayed turn and 1500: both ends inclusive");
        assertEquals(100.0, window.requests().get(0).arrivalMs(), "timed from the start offset");
        assertEquals(400.0, window.requests().get(2).arrivalMs());
        assertEquals(250.0, window.requests().get(1).thinkMs());
        assertTrue(window.notes().contains("fixed schedule: 3 of 5 requests, timed from 1100 ms of the source's " +
            "clock"), window.notes().toString());

        final Workload autoOffset = workload.fixedSchedule(false, null, 1200.0);
        assertEquals(3, autoOffset.requests().size());
        assertEquals(0.0, autoOffset.requests().get(0).arrivalMs(), "from the first request kept");
        assertEquals(200.0, autoOffset.requests().get(1).arrivalMs());

        final Workload endOnly = workload.fixedSchedule(true, null, 1200.0);
        assertEquals(1000.0, endOnly.requests().get(0).arrivalMs());
    }

    @Test
    void shouldKeepTheSourcesClockInAConvertedFile() throws IOException
    {
        final Path converted = dir.resolve("converted.workload.jsonl");
        WorkloadWriter.write(converted, trace());
        assertTrue(Files.readString(converted).startsWith("{\"meta\":{\"kind\":\"workload\",\"version\":1," +
            "\"source\":\"mooncake\",\"block_size\":512,\"origin_ms\":1000.0,"), Files.readString(converted));

        final Workload copy = Workloads.load(converted);
        assertEquals(1000.0, copy.originMs());
        final Workload window = copy.fixedSchedule(true, 1100.0, 1500.0);
        assertEquals(3, window.requests().size());
        assertEquals(100.0, window.requests().get(0).arrivalMs(), "the same window as from the source");

        Files.writeString(converted, "{\"meta\":{\"kind\":\"workload\",\"origin_ms\":\"soon\"}}\n");
        final TraceFormatException bad = assertThrows(TraceFormatException.class, () -> Workloads.load(converted));
        assertTrue(bad.getMessage().contains("meta.origin_ms"), bad.getMessage());
    }

    @Test
    void shouldRefuseAnEmptyWindowAndBadDelays() throws IOException
    {
        final Workload workload = trace();
        final IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
            () -> workload.fixedSchedule(true, 6000.0, null));
        assertEquals("no request of the workload falls between 6000 ms and its end (its requests are at 1000 to " +
            "5000 ms)", empty.getMessage());
        assertThrows(IllegalArgumentException.class, () -> workload.fixedSchedule(true, 2000.0, 1000.0));

        final Path first = dir.resolve("first.jsonl");
        Files.writeString(first, "{\"timestamp\": 0, \"input_length\": 10, \"hash_ids\": [1]}\n" +
            "{\"session_id\": \"x\", \"delay\": 5, \"input_length\": 10, \"hash_ids\": [1]}\n");
        final TraceFormatException missing = assertThrows(TraceFormatException.class,
            () -> Workloads.load(first, WorkloadFormat.MOONCAKE));
        assertTrue(missing.getMessage().contains("first.jsonl:2: missing \"timestamp\""), missing.getMessage());

        final Path negative = dir.resolve("negative.jsonl");
        Files.writeString(negative, "{\"timestamp\": 0, \"session_id\": \"x\", \"input_length\": 10}\n" +
            "{\"session_id\": \"x\", \"delay\": -5, \"input_length\": 10}\n");
        final TraceFormatException bad = assertThrows(TraceFormatException.class,
            () -> Workloads.load(negative, WorkloadFormat.MOONCAKE));
        assertTrue(bad.getMessage().contains("negative.jsonl:2: \"delay\" must not be negative"), bad.getMessage());
    }
}
