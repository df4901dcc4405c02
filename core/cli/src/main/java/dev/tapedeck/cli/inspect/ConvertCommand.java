package dev.tapedeck.cli.inspect;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.workload.TraceConversion;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadFormat;
import dev.tapedeck.workload.WorkloadWriter;
import dev.tapedeck.workload.Workloads;

/**
 * {@code tapedeck inspect convert}: a request trace of any supported format to a tapedeck workload file, or a source
 * with measured results (guidellm report, vllm bench detailed result) to a vllm-vcr trace. Prints one summary line.
 * Runs on the calling thread.
 */
@CommandLine.Command(
    name = "convert",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Convert a request trace to a tapedeck workload file, or a guidellm report / vllm bench result to a vllm-vcr " +
            "trace. Formats, units and block sizes: docs/workloads.md.",
        "Example: tapedeck inspect convert conversation_trace.jsonl -o mooncake.workload.jsonl.gz",
        "         tapedeck inspect convert benchmarks.json --from guidellm -o guidellm.trace.jsonl"})
public final class ConvertCommand implements Callable<Integer>
{
    @CommandLine.Parameters(index = "0", paramLabel = "FILE",
        description = "The source file (gzip is recognised), or a directory of kv-cache-tester conversations.")
    Path input;

    @CommandLine.Option(names = {"--from", "--format"}, defaultValue = "auto", paramLabel = "FORMAT",
        description = "The source's format (--format, as load and simulate name it, works too): auto, tapedeck, " +
            "trace, mooncake, azure, kvcache-tester, guidellm, guidellm-replay, " +
            "vllm-bench, aiperf-multi-turn or burstgpt (default: ${DEFAULT-VALUE}: told from the content).")
    String from;

    @CommandLine.Option(names = {"-o", "--output"}, required = true, paramLabel = "OUT",
        description = "The file to write; gzip when its name ends with .gz.")
    Path output;

    @CommandLine.Option(names = "--to", paramLabel = "trace|workload",
        description = "What to write (default: trace for guidellm and vllm-bench, which have measured results; " +
            "workload for every other format). trace needs measured results.")
    String to;

    @CommandLine.Option(names = "--model", paramLabel = "M",
        description = "The model named in the trace's meta line (default: the one the source names). Traces only.")
    String model;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        if (Files.exists(output) && Files.exists(input) && Files.isSameFile(input, output))
        {
            throw new IllegalArgumentException("-o " + output + " is the input file");
        }
        final WorkloadFormat format = "auto".equalsIgnoreCase(from) ? WorkloadFormat.detect(input) :
            WorkloadFormat.of(from);
        final boolean toTrace = toTrace(format);
        final String line;
        if (toTrace)
        {
            final TraceConversion.Result result = TraceConversion.toTrace(input, format, model, output);
            line = format + " " + input + " -> trace " + output + ": " + result.records() + " records, arrivals " +
                "over " + span(result.spanMs()) + notes(result.notes());
        }
        else
        {
            if (null != model)
            {
                throw new IllegalArgumentException("--model names the model of a trace; a workload file has none");
            }
            final Workload workload = Workloads.load(input, format);
            WorkloadWriter.write(output, workload);
            line = format + " " + input + " -> workload " + output + ": " + workload.requests().size() +
                " requests over " + span(workload.spanMs()) + ", " + (0 == workload.hashBlockSize() ?
                "no hash ids" : "block size " + workload.hashBlockSize()) + ", " + workload.sessionCount() +
                (1 == workload.sessionCount() ? " session" : " sessions") + notes(workload.notes());
        }
        spec.commandLine().getOut().println(line);
        spec.commandLine().getOut().flush();
        return 0;
    }

    private boolean toTrace(final WorkloadFormat format)
    {
        if (null == to)
        {
            return format.hasResults();
        }
        switch (to.toLowerCase(Locale.ROOT))
        {
            case "trace":
                if (!format.hasResults())
                {
                    throw new IllegalArgumentException("--to trace needs measured results (TTFT, ITL); only guidellm " +
                        "and vllm-bench have them, " + format + " converts to a workload (--to workload)");
                }
                return true;
            case "workload":
                return false;
            default:
                throw new IllegalArgumentException("--to must be trace or workload, not '" + to + "'");
        }
    }

    private static String span(final double ms)
    {
        final String exact = Workload.formatMs(ms) + " ms";
        if (ms < 1000)
        {
            return exact;
        }
        final long totalMs = Math.round(ms);
        final long hours = totalMs / 3_600_000;
        final long minutes = totalMs / 60_000 % 60;
        final double seconds = totalMs % 60_000 / 1000.0;
        final String human = (hours > 0 ? hours + "h" : "") + (hours > 0 || minutes > 0 ? minutes + "m" : "") +
            Workload.formatMs(seconds) + "s";
        return exact + " (" + human + ")";
    }

    private static String notes(final List<String> notes)
    {
        return notes.isEmpty() ? "; notes: none" : "; notes: " + String.join(" | ", notes);
    }
}
