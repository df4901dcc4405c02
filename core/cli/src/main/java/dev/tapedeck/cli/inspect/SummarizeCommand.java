package dev.tapedeck.cli.inspect;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.trace.tools.TraceSummary;
import dev.tapedeck.trace.tools.TraceSummaryFormat;

/**
 * {@code tapedeck inspect summarize FILE}: the trace per exact concurrency (docs/inspect.md).
 */
@CommandLine.Command(
    name = "summarize",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Summarise a trace per exact concurrency: count, prompt and output token ranges, TTFT and per-token ITL " +
            "p50/p90/p99 (ms, nearest rank), finish reasons; plus the meta line and reader warnings.",
        "Example: tapedeck inspect summarize capture.jsonl.gz --json"})
public final class SummarizeCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Parameters(index = "0", paramLabel = "FILE", description = "The trace (JSONL, gzip or plain).")
    Path file;

    @CommandLine.Option(names = "--json", description = "Print JSON instead of the table.")
    boolean json;

    @Override
    public Integer call() throws Exception
    {
        final TraceSummary summary = TraceSummary.of(file);
        if (json)
        {
            TraceSummaryFormat.writeJson(summary, spec.commandLine().getOut());
        }
        else
        {
            spec.commandLine().getOut().print(TraceSummaryFormat.text(summary));
        }
        spec.commandLine().getOut().flush();
        return 0;
    }
}
