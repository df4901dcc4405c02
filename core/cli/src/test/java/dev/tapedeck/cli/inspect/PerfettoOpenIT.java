package dev.tapedeck.cli.inspect;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

import dev.tapedeck.cli.Main;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code inspect perfetto --open}: the exported JSON is served on 127.0.0.1 with CORS for the Perfetto UI, fetched
 * over real HTTP, and the server stops (port released) when the command is interrupted.
 */
class PerfettoOpenIT
{
    private static final Pattern LINK = Pattern.compile(
        "open https://ui\\.perfetto\\.dev/#!/\\?url=(http://127\\.0\\.0\\.1:(\\d+)/trace\\.json)\n");

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    @Timeout(60)
    void shouldServeTheExportUntilInterrupted() throws Exception
    {
        final Path out = dir.resolve("trace.json");
        final AwaitableWriter output = new AwaitableWriter();
        final CommandLine cli = Main.commandLine();
        cli.setOut(new PrintWriter(output, true));
        cli.setErr(new PrintWriter(new StringWriter(), true));
        final AtomicInteger exitCode = new AtomicInteger(-1);
        final Thread command = new Thread(() -> exitCode.set(cli.execute("inspect", "perfetto",
            TraceTestData.path("vllm-vcr-fixtures/batch_context_trace.jsonl").toString(), "-o", out.toString(),
            "--open", "--port", "0")), "perfetto-open");
        command.start();

        final Matcher link = output.await(LINK);
        assertTrue(output.text().contains("note: ui.perfetto.dev only fetches from 127.0.0.1:9001"), output.text());
        final HttpResponse<byte[]> response = http.send(HttpRequest.newBuilder(URI.create(link.group(1)))
            .header("Origin", "https://ui.perfetto.dev").GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, response.statusCode());
        assertEquals("*", response.headers().firstValue("Access-Control-Allow-Origin").orElse(""));
        assertEquals("application/json", response.headers().firstValue("Content-Type").orElse(""));
        assertArrayEquals(Files.readAllBytes(out), response.body());
        final JsonNode document = new ObjectMapper().readTree(response.body());
        assertEquals(75, document.get("traceEvents").size());

        command.interrupt();
        command.join();
        assertEquals(0, exitCode.get());
        final URI stopped = URI.create(link.group(1));
        assertThrows(ConnectException.class, () -> http.send(HttpRequest.newBuilder(stopped).GET().build(),
            HttpResponse.BodyHandlers.discarding()));
    }

    @Test
    @Timeout(30)
    void shouldAnswerPreflightsAndOnlyServeTheTracePath() throws Exception
    {
        final Path file = dir.resolve("t.json");
        Files.writeString(file, "{\"traceEvents\":[]}");
        final TraceFileServer server = TraceFileServer.start(file, 0);
        try
        {
            assertTrue(server.port() > 0);
            assertEquals("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:" + server.port() + "/trace.json",
                server.perfettoUrl());
            final HttpResponse<Void> preflight = http.send(HttpRequest.newBuilder(URI.create(server.traceUrl()))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Access-Control-Request-Method", "GET")
                .header("Access-Control-Request-Private-Network", "true").build(),
                HttpResponse.BodyHandlers.discarding());
            assertEquals(204, preflight.statusCode());
            assertEquals("*", preflight.headers().firstValue("Access-Control-Allow-Origin").orElse(""));
            assertEquals("true", preflight.headers().firstValue("Access-Control-Allow-Private-Network").orElse(""));
            final URI other = URI.create("http://127.0.0.1:" + server.port() + "/etc/passwd");
            assertEquals(404, http.send(HttpRequest.newBuilder(other).GET().build(),
                HttpResponse.BodyHandlers.discarding()).statusCode());
            assertEquals(405, http.send(HttpRequest.newBuilder(URI.create(server.traceUrl()))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode());
            assertEquals("{\"traceEvents\":[]}", http.send(HttpRequest.newBuilder(URI.create(server.traceUrl()))
                .GET().build(), HttpResponse.BodyHandlers.ofString()).body());
            server.close();
            server.awaitClosed();
            assertThrows(ConnectException.class, () -> http.send(HttpRequest.newBuilder(
                URI.create(server.traceUrl())).GET().build(), HttpResponse.BodyHandlers.discarding()));
        }
        finally
        {
            server.close();
        }
        assertThrows(java.nio.file.NoSuchFileException.class,
            () -> TraceFileServer.start(dir.resolve("missing.json"), 0));
    }

    /**
     * Collects what a command prints and lets a test wait for a line.
     */
    private static final class AwaitableWriter extends Writer
    {
        private final StringBuilder text = new StringBuilder();

        @Override
        public synchronized void write(final char[] buffer, final int offset, final int length)
        {
            text.append(buffer, offset, length);
            notifyAll();
        }

        @Override
        public void flush()
        {
        }

        @Override
        public void close()
        {
        }

        synchronized String text()
        {
            return text.toString();
        }

        synchronized Matcher await(final Pattern pattern) throws InterruptedException
        {
            while (true)
            {
                final Matcher matcher = pattern.matcher(text);
                if (matcher.find())
                {
                    return matcher;
                }
                wait();
            }
        }
    }
}
