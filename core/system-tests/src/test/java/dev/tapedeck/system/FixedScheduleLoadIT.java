package dev.tapedeck.system;

import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.http.TestServer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code load} with AIPerf's fixed-schedule flags over real sockets: an AIPerf {@code mooncake_trace} file (a session
 * whose second turn is timed by its delay, a clock starting at 2 s) replayed in a window of offsets against an
 * in-process server; the report holds just the window's requests and the flags that chose them. And the pair AIPerf
 * refuses, refused in one line.
 */
@Timeout(60)
class FixedScheduleLoadIT
{
    @TempDir
    Path dir;

    @Test
    void shouldSendOnlyTheWindowOfTheSourcesClock() throws Exception
    {
        final Path trace = dir.resolve("aiperf.jsonl");
        Files.writeString(trace,
            "{\"timestamp\": 2000, \"input_length\": 100, \"output_length\": 4, \"hash_ids\": [1]}\n" +
            "{\"timestamp\": 2100, \"session_id\": \"s\", \"input_length\": 600, \"output_length\": 4, " +
                "\"hash_ids\": [2, 3]}\n" +
            "{\"session_id\": \"s\", \"delay\": 50, \"input_length\": 700, \"output_length\": 4, " +
                "\"hash_ids\": [2, 3]}\n" +
            "{\"timestamp\": 2300, \"input_length\": 100, \"output_length\": 4, \"hash_ids\": [4]}\n" +
            "{\"timestamp\": 9000, \"input_length\": 100, \"output_length\": 4, \"hash_ids\": [5]}\n");
        try (TestServer server = new TestServer(LoadHarness.serveContext(1 << 20)))
        {
            final Path report = dir.resolve("window.json");
            final LoadHarness.Cli cli = LoadHarness.load("--url", "http://127.0.0.1:" + server.ports.get(0),
                "--workload", trace.toString(), "--fixed-schedule", "--fixed-schedule-start-offset", "2050",
                "--fixed-schedule-end-offset", "2300", "--ignore-eos", "--report", report.toString(), "--quiet");
            assertEquals(0, cli.exitCode(), cli.err());
            final JsonNode json = LoadHarness.readReport(report);
            final JsonNode requests = json.path("points").path(0).path("requests");
            assertEquals(3, requests.path("completed").asLong(), "2100, its delayed turn and 2300: " + requests);
            assertEquals(0, requests.path("failed").asLong(), requests.toString());
            assertEquals(2050, json.path("options").path("fixed-schedule-start-offset").asLong(), json.toString());
            assertTrue(json.path("options").path("fixed-schedule").asBoolean(), json.path("options").toString());
        }
        final LoadHarness.Cli both = LoadHarness.load("--url", "http://127.0.0.1:9", "--workload", trace.toString(),
            "--fixed-schedule-auto-offset", "--fixed-schedule-start-offset", "2050");
        assertEquals(2, both.exitCode());
        assertTrue(both.err().contains("--fixed-schedule-start-offset and --fixed-schedule-auto-offset do not go " +
            "together"), both.err());
    }
}
