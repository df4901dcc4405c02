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

    @CommandLine.Option(names = "--compare", paramLabel = "OTHER",
        description = "Another report (a simulate prediction next to a load measurement, two builds, two configs): " +
            "both tables, then the first points' latencies and throughput side by side with the relative difference " +
            "of OTHER to REPORT.")
    Path compare;

    private static final String[][] COMPARED = {
        {"TTFT p50 ms", "/latency_ms/ttft/p50"}, {"TTFT p90 ms", "/latency_ms/ttft/p90"},
        {"TTFT p99 ms", "/latency_ms/ttft/p99"}, {"TTFT mean ms", "/latency_ms/ttft/mean"},
        {"ITL p50 ms", "/latency_ms/itl/p50"}, {"ITL p99 ms", "/latency_ms/itl/p99"},
        {"ITL mean ms", "/latency_ms/itl/mean"}, {"E2E p50 ms", "/latency_ms/e2e/p50"},
        {"E2E p99 ms", "/latency_ms/e2e/p99"}, {"E2E mean ms", "/latency_ms/e2e/mean"},
        {"requests/s", "/throughput/requests_per_s"}, {"output tokens/s", "/throughput/output_tokens_per_s"},
        {"completed", "/requests/completed"}, {"failed", "/requests/failed"},
    };

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
            final ObjectNode other = null == compare ? null : read(compare);
            final ByteArrayOutputStream table = new ByteArrayOutputStream();
            try (PrintStream stream = new PrintStream(table, true, StandardCharsets.UTF_8))
            {
                if (null != other)
                {
                    stream.println(file);
                }
                ResultTable.print(report, stream);
                if (null != other)
                {
                    stream.println();
                    stream.println(compare);
                    ResultTable.print(other, stream);
                    printComparison(report, other, stream);
                }
            }
            spec.commandLine().getOut().print(table.toString(StandardCharsets.UTF_8));
        }
        spec.commandLine().getOut().flush();
        return 0;
    }

    private void printComparison(final ObjectNode report, final ObjectNode other, final PrintStream out)
    {
        final com.fasterxml.jackson.databind.JsonNode a = report.path("points").path(0);
        final com.fasterxml.jackson.databind.JsonNode b = other.path("points").path(0);
        out.println();
        out.println(String.format(java.util.Locale.ROOT, "%-16s %14s %14s %10s", "first points",
            file.getFileName(), compare.getFileName(), "difference"));
        for (final String[] metric : COMPARED)
        {
            final com.fasterxml.jackson.databind.JsonNode x = a.at(metric[1]);
            final com.fasterxml.jackson.databind.JsonNode y = b.at(metric[1]);
            if (x.isMissingNode() || y.isMissingNode())
            {
                continue;
            }
            final double difference = 0 == x.asDouble() ? Double.NaN : (y.asDouble() - x.asDouble()) / x.asDouble();
            out.println(String.format(java.util.Locale.ROOT, "%-16s %14.2f %14.2f %9s", metric[0], x.asDouble(),
                y.asDouble(), Double.isNaN(difference) ? "" : String.format(java.util.Locale.ROOT, "%+.1f%%",
                    100 * difference)));
        }
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
