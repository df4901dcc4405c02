package dev.tapedeck.cli.inspect;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.trace.TraceValidator;

/**
 * {@code tapedeck inspect validate FILE}: every problem of a trace, one {@code file:line: message} per line; exit code
 * 0 when the trace is valid, 1 when it is not.
 */
@CommandLine.Command(
    name = "validate",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = {
        "Check every line of a trace and report every problem as file:line: message (JSON, field types, the " +
            "record rules), then a count. Exit code 0 when valid, 1 when not.",
        "Example: tapedeck inspect validate capture.jsonl"})
public final class ValidateCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Parameters(index = "0", paramLabel = "FILE", description = "The trace (JSONL, gzip or plain).")
    Path file;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final TraceValidator.Result result = TraceValidator.validate(file,
            problem -> out.println(file + ":" + problem.line() + ": " + problem.message()));
        for (final String warning : result.warnings())
        {
            out.println("warning: " + warning);
        }
        final String records = result.records() + (1 == result.records() ? " record" : " records");
        if (result.valid())
        {
            out.println(file + ": valid, " + records + (result.hasMeta() ? " and a meta line" : ", no meta line"));
        }
        else
        {
            out.println(file + ": " + result.problems() + (1 == result.problems() ? " problem" : " problems") +
                " on " + result.linesWithProblems() + (1 == result.linesWithProblems() ? " line" : " lines") +
                " (" + records + ")");
        }
        out.flush();
        return result.valid() ? 0 : 1;
    }
}
