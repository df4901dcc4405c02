package dev.tapedeck.cli.inspect;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.load.HtmlReport;
import dev.tapedeck.load.LoadReport;
import dev.tapedeck.load.ResultTable;

/**
 * {@code tapedeck inspect report REPORT.json [--html OUT.html]}: the summary table of a saved {@code tapedeck load}
 * report, or its self-contained HTML page (docs/load-report.md). Runs on the calling thread.
 */
@CommandLine.Command(
    name = "report",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Print the summary table of a tapedeck load report (--report FILE of tapedeck load), or render it as a " +
            "self-contained HTML page with latency CDFs, timelines and, for a sweep, the Pareto frontier.",
        "Example: tapedeck inspect report sweep.json --html sweep.html"})
public final class ReportCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Parameters(index = "0", paramLabel = "REPORT", description = "A JSON report of tapedeck load.")
    Path file;

    @CommandLine.Option(names = "--html", paramLabel = "FILE",
        description = "Write the HTML report here instead of printing the table.")
    Path html;

    @Override
    public Integer call() throws IOException
    {
        final ObjectNode report = read(file);
        if (null != html)
        {
            HtmlReport.write(report, html);
            spec.commandLine().getOut().println("html report: " + html);
        }
        else
        {
            final ByteArrayOutputStream table = new ByteArrayOutputStream();
            try (PrintStream stream = new PrintStream(table, true, StandardCharsets.UTF_8))
            {
                ResultTable.print(report, stream);
            }
            spec.commandLine().getOut().print(table.toString(StandardCharsets.UTF_8));
        }
        spec.commandLine().getOut().flush();
        return 0;
    }

    /**
     * @param path a report file.
     * @return its content.
     * @throws IOException (one line naming the file) if it cannot be read, is not JSON or not a load report.
     */
    static ObjectNode read(final Path path) throws IOException
    {
        if (!Files.isRegularFile(path))
        {
            throw new IOException(path + ": no such file");
        }
        try
        {
            return LoadReport.read(path);
        }
        catch (final JsonProcessingException ex)
        {
            final JsonLocation location = ex.getLocation();
            final String line = null == location || location.getLineNr() < 1 ? "" : ":" + location.getLineNr();
            throw new IOException(path + line + ": not valid JSON: " + ex.getOriginalMessage().replace('\n', ' '),
                ex);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException(ex.getMessage(), ex);
        }
    }
}
