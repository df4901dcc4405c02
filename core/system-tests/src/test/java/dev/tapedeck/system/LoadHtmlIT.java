package dev.tapedeck.system;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

import dev.tapedeck.load.HtmlReport;
import dev.tapedeck.load.LoadReport;
import dev.tapedeck.cli.Main;
import dev.tapedeck.fault.FaultMix;
import dev.tapedeck.fault.FaultSchedule;
import dev.tapedeck.fault.FaultSettings;
import dev.tapedeck.http.TestServer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck load --sweep ... --report R --html H --scrape-metrics} against a real {@code serve} on loopback: both
 * reports are written, and the page has the charts of the run, server gauges included.
 */
@Timeout(120)
class LoadHtmlIT
{
    @TempDir
    Path dir;

    @Test
    void shouldWriteTheHtmlReportNextToTheJsonReport() throws Exception
    {
        final Path json = dir.resolve("sweep.json");
        final Path html = dir.resolve("sweep.html");
        try (TestServer server = TestServer.start())
        {
            final String url = "http://127.0.0.1:" + server.ports.get(0);
            final CommandLine cli = Main.commandLine();
            final StringWriter err = new StringWriter();
            cli.setErr(new PrintWriter(err));
            final int code = cli.execute("load", "--url", url, "--model", TestServer.MODEL, "--sweep",
                "concurrency=1,4", "--max-requests", "12", "--duration", "20s", "--prompt-tokens", "32",
                "--output-tokens", "6", "--scrape-metrics", url + "/metrics", "--report", json.toString(), "--html",
                html.toString(), "--quiet");
            assertEquals(0, code, err.toString());
        }
        final String page = Files.readString(html, StandardCharsets.UTF_8);
        assertTrue(Files.size(json) > 0);
        assertEquals(HtmlReport.render(LoadReport.read(json)), page, "the page is the rendering of the JSON report");
        assertTrue(page.contains("aria-label=\"Pareto frontier"));
        assertTrue(page.contains("<td>concurrency=1</td>") && page.contains("<td>concurrency=4</td>"));
        assertTrue(page.contains("running (server)"), "the scraped gauges are drawn");
        assertFalse(page.contains("No timeline."));
        assertTrue(page.contains(TestServer.MODEL));
    }

    @Test
    void shouldShowTheFaultsTheServerInjectedInTheReport() throws Exception
    {
        final Path json = dir.resolve("faults.json");
        final Path html = dir.resolve("faults.html");
        try (TestServer server = new TestServer(TestServer.context().faults(new FaultSettings(
            FaultMix.of(50, "rate_limit"), false, FaultSchedule.NONE))))
        {
            final String url = "http://127.0.0.1:" + server.ports.get(0);
            final CommandLine cli = Main.commandLine();
            final StringWriter err = new StringWriter();
            cli.setErr(new PrintWriter(err));
            final int code = cli.execute("load", "--url", url, "--model", TestServer.MODEL, "--concurrency", "2",
                "--max-requests", "40", "--duration", "20s", "--prompt-tokens", "16", "--output-tokens", "4",
                "--scrape-metrics", url + "/metrics", "--report", json.toString(), "--html", html.toString(),
                "--max-failure-rate", "1");
            assertEquals(0, code, err.toString());
            final com.fasterxml.jackson.databind.JsonNode point = LoadReport.read(json).path("points").path(0);
            final long rateLimited = point.path("errors").path("http_429").asLong();
            assertTrue(rateLimited > 0 && rateLimited < 40, point.toString());
            assertEquals(rateLimited, point.path("faults_injected").path("rate_limit").asLong(),
                "every 429 the client saw is a fault the server counted: " + point);
            final java.io.ByteArrayOutputStream table = new java.io.ByteArrayOutputStream();
            dev.tapedeck.load.ResultTable.print(LoadReport.read(json), new java.io.PrintStream(table, true,
                StandardCharsets.UTF_8));
            assertTrue(table.toString(StandardCharsets.UTF_8).contains("faults injected by the server: rate_limit " +
                rateLimited), table.toString(StandardCharsets.UTF_8));
            assertTrue(Files.readString(html, StandardCharsets.UTF_8).contains("faults injected by the server"));
        }
    }
}
