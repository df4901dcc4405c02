package dev.tapedeck.cli.inspect;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


import dev.tapedeck.load.LoadReport;
import dev.tapedeck.load.LoadReportSamples;
import dev.tapedeck.testing.CliRun;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck inspect report} in-process on report files: the table, the HTML page, and one-line errors (exit 2)
 * naming the file for what is not a load report.
 */
class ReportCommandTest
{
    @TempDir
    Path dir;

    private static CliRun run(final String... args)
    {
        return CliRun.of(args);
    }

    private Path sweepReport() throws Exception
    {
        final Path json = dir.resolve("sweep.json");
        LoadReport.write(LoadReportSamples.sweep(), json);
        return json;
    }

    @Test
    void shouldPrintTheSummaryTableOfASavedReport() throws Exception
    {
        final CliRun result = run("inspect", "report", sweepReport().toString());
        assertEquals(0, result.exitCode(), result.err());
        final String[] lines = result.out().strip().split("\n");
        assertTrue(lines[0].startsWith("point") && lines[0].contains("TTFT p50/p99 ms"), lines[0]);
        assertTrue(lines[1].startsWith("concurrency=1 "), lines[1]);
        assertTrue(lines[2].startsWith("concurrency=8 ") && lines[2].contains("400"), lines[2]);
        assertTrue(lines[3].startsWith("concurrency=64 "), lines[3]);
        assertTrue(lines[4].contains("http_503"), "errors of concurrency=64: " + lines[4]);
        assertEquals("pareto frontier (output tokens/s vs p99 TTFT): [\"concurrency=1\",\"concurrency=8\"]",
            lines[5]);
        assertFalse(Files.exists(dir.resolve("sweep.html")));
    }

    @Test
    void shouldWriteTheHtmlReport() throws Exception
    {
        final Path html = dir.resolve("pages/sweep.html");
        final CliRun result = run("inspect", "report", sweepReport().toString(), "--html", html.toString());
        assertEquals(0, result.exitCode(), result.err());
        assertEquals("html report: " + html, result.out().strip());
        final String page = Files.readString(html, StandardCharsets.UTF_8);
        assertTrue(page.startsWith("<!DOCTYPE html>"));
        assertEquals(13, page.split("<svg ", -1).length - 1, "13 charts");
        assertTrue(page.contains("aria-label=\"Pareto frontier"));
        assertTrue(page.strip().endsWith("</html>"));
    }

    @Test
    void shouldRejectAFileThatIsNotALoadReportNamingTheFile() throws Exception
    {
        final Path other = dir.resolve("other.json");
        Files.writeString(other, "{\"schema\": \"guidellm-report/1\", \"points\": []}");
        final Path html = dir.resolve("other.html");
        final CliRun wrong = run("inspect", "report", other.toString(), "--html", html.toString());
        assertEquals(2, wrong.exitCode());
        assertEquals("tapedeck report: error: " + other + ": not a tapedeck load report (no schema " +
            LoadReport.SCHEMA + ")", wrong.err().strip());
        assertFalse(Files.exists(html), "nothing written for a bad input");

        final Path noSchema = dir.resolve("array.json");
        Files.writeString(noSchema, "[1, 2, 3]");
        final CliRun array = run("inspect", "report", noSchema.toString());
        assertEquals(2, array.exitCode());
        assertTrue(array.err().contains(noSchema + ": not a tapedeck load report"), array.err());
        assertEquals("", array.out());
    }

    @Test
    void shouldRejectBrokenJsonAndMissingFilesInOneLine() throws Exception
    {
        final Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\n  \"schema\": \"tapedeck-load-report/1\",\n  oops\n}");
        final CliRun json = run("inspect", "report", broken.toString());
        assertEquals(2, json.exitCode());
        assertTrue(json.err().startsWith("tapedeck report: error: " + broken + ":3: not valid JSON: "), json.err());
        assertEquals(1, json.err().strip().split("\n").length, json.err());

        final Path missing = dir.resolve("missing.json");
        final CliRun none = run("inspect", "report", missing.toString());
        assertEquals(2, none.exitCode());
        assertEquals("tapedeck report: error: " + missing + ": no such file", none.err().strip());
    }

    @Test
    void shouldBeListedUnderInspectWithHelp()
    {
        final CliRun help = run("inspect", "report", "--help");
        assertEquals(0, help.exitCode());
        assertTrue(help.out().startsWith("Usage: tapedeck inspect report"), help.out());
        assertTrue(help.out().contains("--html"));
        assertTrue(run("inspect", "--help").out().contains("report"));
    }
}
