package dev.tapedeck.system;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck load} against servers that misbehave: the run always ends (the JUnit timeouts fail a hang), writes
 * its report, counts every request under the right error kind, lets no exception escape, and exits 1 when no request
 * succeeded (0 when some did).
 */
@Timeout(30)
class BrokenServerIT
{
    @TempDir
    Path dir;

    /**
     * Run the CLI closed loop (2 in flight, 6 requests) against a port and return the report's single point.
     */
    private JsonNode load(final int port, final String... extra) throws Exception
    {
        final Path report = dir.resolve("report.json");
        final List<String> args = new ArrayList<>(List.of("--url", "http://127.0.0.1:" + port, "--model", "m",
            "--prompt-tokens", "16", "--output-tokens", "4", "--report", report.toString(), "--quiet"));
        args.addAll(List.of(extra));
        final LoadHarness.Cli cli = LoadHarness.load(args.toArray(String[]::new));
        assertTrue(cli.err().isEmpty(), "nothing escaped: " + cli.err());
        final JsonNode point = LoadHarness.readReport(report).path("points").path(0);
        assertEquals(0 == point.path("requests").path("completed").asLong() ? 1 : 0, cli.exitCode(),
            "exit 1 when nothing succeeded, 0 otherwise: " + point.path("requests"));
        return point;
    }

    private static Map<String, Long> errors(final JsonNode point)
    {
        final Map<String, Long> errors = new TreeMap<>();
        point.path("errors").properties().forEach(e -> errors.put(e.getKey(), e.getValue().asLong()));
        return errors;
    }

    private static void assertOnly(final JsonNode point, final String kind, final long count)
    {
        assertEquals(Map.of(kind, count), errors(point), point.toString());
        assertEquals(count, point.path("requests").path("failed").asLong());
        assertEquals(0, point.path("requests").path("completed").asLong());
        assertEquals(0.0, point.path("goodput").path("fraction").asDouble());
    }

    private static String[] closedLoop()
    {
        return new String[] {"--concurrency", "2", "--max-requests", "6", "--request-timeout", "2s",
            "--drain-timeout", "5s"};
    }

    @Test
    void shouldCountARefusedConnectionAsConnectFailed() throws Exception
    {
        assertOnly(load(BrokenServer.closedPort(), closedLoop()), "connect_failed", 6);
    }

    @Test
    void shouldCountAResetMidStream() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.RESET_MID_STREAM, 0))
        {
            assertOnly(load(server.port(), closedLoop()), "connection_reset", 6);
            assertEquals(6, server.requests());
        }
    }

    @Test
    void shouldCountInvalidSseAsMalformed() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.INVALID_SSE, 0))
        {
            assertOnly(load(server.port(), closedLoop()), "malformed_sse", 6);
        }
    }

    @Test
    void shouldCountAResponseThatCannotBeFramedAsMalformedHttp() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.MALFORMED_HTTP, 0))
        {
            assertOnly(load(server.port(), closedLoop()), "malformed_http", 6);
        }
    }

    /**
     * Bytes after a complete response, read while no exchange runs on the connection (a line that is not HTTP, or
     * the start of a response no request asked for): the connection is closed, not parked for the next request,
     * which would wait for an answer no parser reads or read the leftover as the start of its own.
     */
    @Test
    void shouldNotReuseAConnectionThatReceivedBytesWhileIdle() throws Exception
    {
        for (final BrokenServer.Behaviour behaviour : new BrokenServer.Behaviour[] {
            BrokenServer.Behaviour.GARBAGE_AFTER_STREAM, BrokenServer.Behaviour.PARTIAL_AFTER_STREAM})
        {
            try (BrokenServer server = new BrokenServer(behaviour, 1))
            {
                final JsonNode point = load(server.port(), "--concurrency", "1", "--max-requests", "4",
                    "--request-timeout", "2s", "--ignore-eos");
                assertEquals(Map.of(), errors(point), behaviour + ", requests: " + point.path("requests"));
                assertEquals(4, point.path("requests").path("completed").asLong(), behaviour.toString());
            }
        }
    }

    @Test
    void shouldTimeOutAStalledStream() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.STALL, 0))
        {
            final long startNs = System.nanoTime();
            assertOnly(load(server.port(), "--concurrency", "2", "--max-requests", "4", "--request-timeout",
                "300ms", "--drain-timeout", "10s"), "timeout", 4);
            assertTrue(System.nanoTime() - startNs < 8_000_000_000L, "two rounds of 300 ms timeouts");
        }
    }

    @Test
    void shouldCutOffStalledStreamsAtTheDrainTimeout() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.STALL, 0))
        {
            assertOnly(load(server.port(), "--rate", "20", "--arrivals", "constant", "--duration", "200ms",
                "--request-timeout", "1m",
                "--drain-timeout", "300ms"), "incomplete", 4);
        }
    }

    @Test
    void shouldCountErrorStatuses() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.HTTP_500, 0))
        {
            final JsonNode point = load(server.port(), closedLoop());
            assertOnly(point, "http_500", 6);
            assertEquals("broken on purpose", point.path("error_messages").path("http_500").asText(),
                "the report says what the server said: " + point);
        }
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.HTTP_429, 0))
        {
            assertOnly(load(server.port(), closedLoop()), "http_429", 6);
        }
    }

    @Test
    void shouldTimeOutASlowDrip() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.SLOW_DRIP, 50))
        {
            final JsonNode point = load(server.port(), "--concurrency", "2", "--max-requests", "4",
                "--request-timeout", "400ms", "--drain-timeout", "10s");
            assertOnly(point, "timeout", 4);
        }
    }

    @Test
    void shouldKeepClosedLoopConcurrency() throws Exception
    {
        try (BrokenServer server = new BrokenServer(BrokenServer.Behaviour.STREAM, 5))
        {
            final JsonNode point = load(server.port(), "--concurrency", "3", "--max-requests", "30",
                "--ignore-eos");
            assertEquals(Map.of(), errors(point));
            assertEquals(30, point.path("requests").path("completed").asLong());
            assertEquals(30, server.requests(), "no request sent beyond --max-requests");
            assertEquals(3, server.maxInFlight(), "the server held at most (and at some point exactly) 3 at once");
            assertEquals(30 * BrokenServer.TOKENS, point.path("tokens").path("output_total").asLong());
            assertEquals(30 * (BrokenServer.TOKENS - 1), point.path("latency_ms").path("itl").path("count").asLong());
        }
    }
}
