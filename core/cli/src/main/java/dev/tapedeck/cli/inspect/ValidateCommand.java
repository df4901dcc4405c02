package dev.tapedeck.cli.inspect;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.trace.TraceValidator;

/**
 * {@code tapedeck inspect validate FILE [--as latency-source|workload]}: every problem of a trace, one
 * {@code file:line: message} per line, and whether it is valid as a latency source, only as a workload, or neither;
 * exit code 0 when it is valid for {@code --as}, 1 when not. Runs on the calling thread.
 */
@CommandLine.Command(
    name = "validate",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = {
        "Check every line of a trace and report every problem as file:line: message (JSON, field types, the " +
            "record rules), then a count. A trace is valid as a latency source (vcr's rules: ttft_ms, and gaps for " +
            "multi-token records) or only as a workload (arrival, prompt and output lengths: what load and simulate " +
            "replay); the last line says which. Exit code 0 when valid for --as and clean, 1 when not (a cut last " +
            "line or a gzip stream without its trailer is tolerated by a replay but is not a clean file).",
        "Example: tapedeck inspect validate capture.jsonl",
        "         tapedeck inspect validate requests.jsonl --as workload"})
public final class ValidateCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Parameters(index = "0", paramLabel = "FILE", description = "The trace (JSONL, gzip or plain).")
    Path file;

    @CommandLine.Option(names = "--as", defaultValue = "latency-source", paramLabel = "latency-source|workload",
        description = "What the trace must be valid as for exit code 0 (default: ${DEFAULT-VALUE}, vcr's rules). " +
            "workload accepts records without ttft_ms, output_tokens or gaps.")
    String as;

    @Override
    public Integer call() throws Exception
    {
        final boolean asWorkload = switch (as)
        {
            case "workload" -> true;
            case "latency-source" -> false;
            default -> throw new IllegalArgumentException("--as must be latency-source or workload, not '" + as + "'");
        };
        final PrintWriter out = spec.commandLine().getOut();
        final TraceValidator.Result result = TraceValidator.validate(file,
            problem -> out.println(file + ":" + problem.line() + ": " + problem.message()));
        for (final String warning : result.warnings())
        {
            out.println("warning: " + warning);
        }
        final String records = result.records() + (1 == result.records() ? " record" : " records");
        if (result.valid() && !result.warnings().isEmpty())
        {
            // a replay tolerates a cut last line or a missing gzip trailer; a file meant to be complete is not clean
            out.println(file + ": not a clean file (" + result.warnings().size() + (1 == result.warnings().size() ?
                " warning" : " warnings") + " above); " + records + " read before it");
            out.flush();
            return 1;
        }
        if (result.valid())
        {
            out.println(file + ": valid, " + records + (result.hasMeta() ? " and a meta line" : ", no meta line"));
        }
        else
        {
            out.println(file + ": " + result.problems() + (1 == result.problems() ? " problem" : " problems") +
                " on " + result.linesWithProblems() + (1 == result.linesWithProblems() ? " line" : " lines") +
                " (" + records + "); " + (result.validAsWorkload() ? "valid as a workload (load, simulate), not as " +
                "a latency source" : "valid neither as a workload nor as a latency source"));
        }
        out.flush();
        return (asWorkload ? result.validAsWorkload() : result.valid()) ? 0 : 1;
    }
}
