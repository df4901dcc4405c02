package dev.tapedeck.system;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tapedeck.cli.Main;

/**
 * {@code tapedeck demo} end to end in-process: simulated instances on free loopback ports, the bundled Mooncake trace
 * replayed through {@code load}, a report written. Shortened with fast knob timing and short outputs.
 */
@Timeout(180)
class DemoIT
{
    @TempDir
    Path dir;

    @Test
    void shouldReplayTheBundledTraceAgainstInProcessInstancesAndWriteTheReport() throws Exception
    {
        final Path report = dir.resolve("demo.json");
        final CommandLine cli = Main.commandLine();
        final StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err));
        final int code = cli.execute("demo", "--instances", "2", "--time-scale", "0.05", "--max-seconds", "2",
            "--drain-timeout", "60s", "--report", report.toString(), "--html", dir.resolve("demo.html").toString(),
            "--quiet", "--serve-arg=--latency-model=knob", "--serve-arg=--time-to-first-token=2ms",
            "--serve-arg=--inter-token-latency=1ms", "--load-arg=--output-tokens=8");
        assertEquals(0, code, err.toString());
        final JsonNode json = new ObjectMapper().readTree(report.toFile());
        assertEquals("tapedeck-load-report/1", json.path("schema").asText());
        assertEquals("tokens", json.path("options").path("prompt-format").asText(), "token-id prompts by default");
        final JsonNode urls = json.path("target").path("url");
        assertEquals(2, urls.size(), "both instances were loaded: " + urls);
        final JsonNode point = json.path("points").get(0);
        assertTrue(point.path("plan").asText().startsWith("mooncake"), point.path("plan").asText());
        final JsonNode requests = point.path("requests");
        assertTrue(requests.path("sent").asLong() > 10, requests.toString());
        assertEquals(requests.path("sent").asLong(), requests.path("completed").asLong(), point.toString());
        assertEquals(0, requests.path("failed").asLong());
        assertTrue(requests.path("peak_in_flight").asLong() >= 1);
        assertEquals(8 * requests.path("completed").asLong(), point.path("tokens").path("output_total").asLong());
        assertTrue(Files.size(report) > 1000);
        final String html = Files.readString(dir.resolve("demo.html"));
        assertTrue(html.contains("<svg") && html.contains("mooncake"), "the HTML report has its charts");
    }

    @Test
    void shouldSendTextPromptsOrChatWhenAskedThroughLoadArgs() throws Exception
    {
        for (final String loadArg : new String[] {"--load-arg=--prompt-format=text", "--load-arg=--endpoint=chat"})
        {
            final Path report = dir.resolve("demo-" + loadArg.hashCode() + ".json");
            final StringWriter err = new StringWriter();
            final CommandLine cli = Main.commandLine();
            cli.setErr(new PrintWriter(err));
            final int code = cli.execute("demo", "--instances", "1", "--time-scale", "0.05", "--max-seconds", "1",
                "--drain-timeout", "60s", "--report", report.toString(), "--html",
                dir.resolve("demo-" + loadArg.hashCode() + ".html").toString(), "--quiet",
                "--serve-arg=--latency-model=knob", "--serve-arg=--time-to-first-token=2ms",
                "--serve-arg=--inter-token-latency=1ms", "--load-arg=--output-tokens=4", loadArg);
            assertEquals(0, code, loadArg + ": " + err);
            final JsonNode json = new ObjectMapper().readTree(report.toFile());
            assertEquals("text", json.path("options").path("prompt-format").asText(), loadArg);
            final JsonNode requests = json.path("points").get(0).path("requests");
            assertTrue(requests.path("completed").asLong() > 0, loadArg + ": " + requests);
            assertEquals(0, requests.path("failed").asLong(), loadArg + ": " + requests);
        }
        final JsonNode chat = new ObjectMapper().readTree(
            dir.resolve("demo-" + "--load-arg=--endpoint=chat".hashCode() + ".json").toFile());
        assertEquals("/v1/chat/completions", chat.path("target").path("endpoint").asText());
    }
}
