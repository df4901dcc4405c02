package dev.tapedeck.cli.inspect;

import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.capture.DemoTraceRun;
import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.trace.tools.DemoTraceGenerator;

/**
 * {@code tapedeck inspect gen-demo}: a seeded synthetic trace, the {@link DemoTraceGenerator} workload run through the
 * engine in virtual time ({@link DemoTraceRun}; docs/inspect.md). Runs on the caller's thread.
 */
@CommandLine.Command(
    name = "gen-demo",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Write a synthetic trace: Poisson arrivals, lognormal prompt and output lengths, shared system prompts, " +
            "timed by tapedeck's engine in virtual time (dense-8b-rtxpro6000 step model, 256 sequences, 8192 " +
            "batched tokens, prefix caching). The same seed gives the same bytes.",
        "Example: tapedeck inspect gen-demo -o demo.jsonl --records 500 --seed 7"})
public final class GenDemoCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE",
        description = "Where to write the trace (gzip when it ends with .gz).")
    Path output;

    @CommandLine.Option(names = "--records", defaultValue = "200", paramLabel = "N",
        description = "Requests to generate (default: ${DEFAULT-VALUE}).")
    int records;

    @CommandLine.Option(names = "--seed", defaultValue = "0", paramLabel = "S",
        description = "Seed of every draw (default: ${DEFAULT-VALUE}).")
    long seed;

    @CommandLine.Option(names = "--fast",
        description = "Short requests at 20/s (prompts ~128, outputs ~12 tokens) so the trace spans seconds.")
    boolean fast;

    @Override
    public Integer call() throws Exception
    {
        final DemoTraceGenerator.Result result =
            DemoTraceRun.write(new DemoTraceGenerator.Options(records, seed, fast), output);
        spec.commandLine().getOut().println(String.format(Locale.ROOT,
            "wrote %s: %d records over %.1f s, peak concurrency %d, %d output tokens (seed %d, %s)", output,
            result.records(), result.spanMs() / 1000.0, result.peakConcurrency(), result.outputTokens(), seed,
            fast ? "fast" : "realistic"));
        spec.commandLine().getOut().flush();
        return 0;
    }
}
