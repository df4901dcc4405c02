package dev.tapedeck.cli.inspect;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.trace.tools.PerfettoExport;

/**
 * {@code tapedeck inspect perfetto FILE -o OUT.json}: the trace as Chrome trace-event JSON for ui.perfetto.dev;
 * {@code --open} serves it on 127.0.0.1 and prints the link that opens it, until interrupted.
 */
@CommandLine.Command(
    name = "perfetto",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Export a trace as Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing): a prefill slice and decode " +
            "slices per request on lanes (rows = peak concurrency), counters active_requests, engine_running, " +
            "prefill_tokens, and with --step-stats the scheduler's counters and steps.",
        "Example: tapedeck inspect perfetto capture.jsonl -o capture.json --open"})
public final class PerfettoCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Parameters(index = "0", paramLabel = "FILE", description = "The trace (JSONL, gzip or plain).")
    Path file;

    @CommandLine.Option(names = {"-o", "--output"}, paramLabel = "OUT",
        description = "Where to write the JSON; '-' for standard output. Required unless --open (then a " +
            "temporary file).")
    String output;

    @CommandLine.Option(names = "--step-stats", paramLabel = "SIDECAR",
        description = "A step-stats sidecar (JSONL of {ts_ms, scheduler}) for scheduler counters and a step track.")
    Path stepStats;

    @CommandLine.Option(names = "--name", paramLabel = "N",
        description = "Process name shown in the UI (default: inference trace: <model>).")
    String name;

    @CommandLine.Option(names = "--track-per-request", description = "One track per request instead of lanes.")
    boolean trackPerRequest;

    @CommandLine.Option(names = "--open",
        description = "Serve the JSON on 127.0.0.1, print the ui.perfetto.dev link that opens it, and wait until " +
            "interrupted (Ctrl-C).")
    boolean open;

    @CommandLine.Option(names = "--port", defaultValue = "9001", paramLabel = "P",
        description = "Port for --open (default: ${DEFAULT-VALUE}, the only local port ui.perfetto.dev fetches " +
            "from; 0 picks a free port).")
    int port;

    @Override
    public Integer call() throws Exception
    {
        if (null == output && !open)
        {
            throw new IllegalArgumentException("give -o OUT.json (or '-' for standard output), or --open");
        }
        if ("-".equals(output) && open)
        {
            throw new IllegalArgumentException("--open needs a file: give -o OUT.json or no -o");
        }
        final boolean toStdout = "-".equals(output);
        final Path target = null != output ? Path.of(output) : temporaryFile();
        final PerfettoExport.Options options = new PerfettoExport.Options(name, trackPerRequest, stepStats);
        final PerfettoExport.Result result;
        if (toStdout)
        {
            result = PerfettoExport.write(file, options, System.out);
        }
        else
        {
            try (OutputStream out = new BufferedOutputStream(new FileOutputStream(target.toFile()), 1 << 16))
            {
                result = PerfettoExport.write(file, options, out);
            }
        }
        final PrintWriter report = toStdout ? spec.commandLine().getErr() : spec.commandLine().getOut();
        report.println((toStdout ? "wrote" : "wrote " + target + ":") + " " + plural(result.requests(), "request") +
            " on " + plural(result.tracks(), trackPerRequest ? "track" : "lane") + " (peak concurrency " +
            result.peakConcurrency() + ")" + (null == stepStats ? "" : ", " + result.steps() + " scheduler steps") +
            ", " + result.events() + " events");
        if (result.skippedWithoutArrival() > 0)
        {
            report.println("skipped " + result.skippedWithoutArrival() + " records without arrival_ms");
        }
        for (final String warning : result.warnings())
        {
            report.println("warning: " + warning);
        }
        report.flush();
        if (open)
        {
            serve(target, report);
        }
        return 0;
    }

    private void serve(final Path target, final PrintWriter report) throws IOException
    {
        final TraceFileServer server = TraceFileServer.start(target, port);
        final Thread hook = new Thread(server::close, "tapedeck-trace-server-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try
        {
            report.println("serving " + target + " at " + server.traceUrl());
            if (TraceFileServer.PERFETTO_PORT != server.port())
            {
                report.println("note: ui.perfetto.dev only fetches from 127.0.0.1:" + TraceFileServer.PERFETTO_PORT +
                    " (its Content-Security-Policy); from this port, open ui.perfetto.dev and drop " + target +
                    " on it instead");
            }
            report.println("open " + server.perfettoUrl());
            report.println("(Ctrl-C to stop)");
            report.flush();
            server.awaitClosed();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        finally
        {
            server.close();
            try
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (final IllegalStateException ex)
            {
                // the JVM is shutting down: the hook is running or has run
            }
        }
    }

    private static String plural(final long count, final String noun)
    {
        return count + " " + noun + (1 == count ? "" : "s");
    }

    private static Path temporaryFile() throws IOException
    {
        final Path temporary = Files.createTempFile("tapedeck-perfetto-", ".json");
        temporary.toFile().deleteOnExit();
        return temporary;
    }
}
