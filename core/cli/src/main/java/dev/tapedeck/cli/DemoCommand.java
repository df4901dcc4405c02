package dev.tapedeck.cli;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.load.LoadContext;
import dev.tapedeck.serve.Serve;
import dev.tapedeck.serve.ServeContext;

/**
 * {@code tapedeck demo}: starts {@code serve} in this process on free ports and replays a bundled real trace through
 * {@code load} against it, time-compressed until thousands of streams run at once; prints the table and writes the
 * reports. Runs on the calling thread; the server is shut down before it returns.
 */
@CommandLine.Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Start a simulated vLLM fleet in this process and replay a real production trace against it (the Mooncake " +
            "FAST'25 conversation trace, Apache-2.0), compressed in time until more than a thousand streams are in " +
            "flight. Prints the result table and writes a JSON and an HTML report.",
        "Example: tapedeck demo --max-seconds 30 --report demo.json --html demo.html"})
public final class DemoCommand implements Callable<Integer>
{
    private static final String TRACE_RESOURCE = "/dev/tapedeck/demo/mooncake_fast25/conversation_trace.jsonl";

    @CommandLine.Option(names = "--instances", defaultValue = "24", paramLabel = "N",
        description = "Simulated GPUs, each an independent `serve` instance with its own engine, on free ports; " +
            "requests go to them in turn (default: ${DEFAULT-VALUE}).")
    int instances;

    @CommandLine.Option(names = "--time-scale", defaultValue = "0.04", paramLabel = "X",
        description = "Multiply the trace's arrival times by X (default: ${DEFAULT-VALUE}, 25 times faster than the " +
            "trace was recorded).")
    double timeScale;

    @CommandLine.Option(names = "--max-seconds", defaultValue = "30", paramLabel = "S",
        description = "Stop sending after S seconds; requests in flight then get --drain-timeout (default: " +
            "${DEFAULT-VALUE}).")
    double maxSeconds;

    @CommandLine.Option(names = "--drain-timeout", defaultValue = "60s", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "How long requests still running at the end may take (default: ${DEFAULT-VALUE}).")
    long drainTimeoutNs;

    @CommandLine.Option(names = "--report", defaultValue = "tapedeck-demo.json", paramLabel = "FILE",
        description = "JSON report (default: ${DEFAULT-VALUE}).")
    Path report;

    @CommandLine.Option(names = "--html", defaultValue = "tapedeck-demo.html", paramLabel = "FILE",
        description = "HTML report (default: ${DEFAULT-VALUE}).")
    Path html;

    @CommandLine.Option(names = "--workload", paramLabel = "FILE",
        description = "Replay this workload instead of the bundled trace (any format `load` reads).")
    Path workload;

    @CommandLine.Option(names = "--serve-arg", paramLabel = "ARG",
        description = "Extra `serve` flag for the simulated instances, repeatable " +
            "(e.g. --serve-arg=--max-num-seqs=512).")
    List<String> serveArgs = new ArrayList<>();

    @CommandLine.Option(names = "--load-arg", paramLabel = "ARG",
        description = "Extra `load` flag, repeatable. Prompts go as token ids unless one of these sets " +
            "--prompt-format or --endpoint (e.g. --load-arg=--prompt-format=text).")
    List<String> loadArgs = new ArrayList<>();

    @CommandLine.Option(names = "--quiet", description = "No progress line.")
    boolean quiet;

    @Override
    public Integer call() throws Exception
    {
        if (instances < 1 || !(timeScale > 0) || !(maxSeconds > 0))
        {
            throw new IllegalArgumentException("--instances, --time-scale and --max-seconds must be positive");
        }
        final Path trace = null != workload ? workload : extractBundledTrace();
        try (Serve started = Serve.start(serveContext()))
        {
            final StringBuilder urls = new StringBuilder();
            for (final URI url : started.baseUrls())
            {
                urls.append(urls.length() > 0 ? "," : "").append(url);
            }
            System.err.printf(Locale.ROOT, "tapedeck demo: %d simulated GPU(s) (%s) on %s%n", instances,
                started.engineConfigs().get(0).latencyModel().describe(), urls);
            System.err.printf(Locale.ROOT, "tapedeck demo: replaying %s at time scale %s for up to %s s%n",
                null != workload ? workload : "the Mooncake FAST'25 conversation trace (Apache-2.0)", timeScale,
                maxSeconds);
            return LoadCommand.run(loadContext(started, trace), null);
        }
        finally
        {
            if (null == workload)
            {
                Files.deleteIfExists(trace);
            }
        }
    }

    /**
     * The fleet: {@code --instances} instances on free ports, with room for the trace's longest prompts; a
     * {@code --serve-arg} flag wins over each of these.
     */
    private ServeContext serveContext()
    {
        final ServeCommand flags = new ServeCommand();
        final CommandLine.ParseResult given = new CommandLine(flags).setCaseInsensitiveEnumValuesAllowed(true)
            .parseArgs(serveArgs.toArray(String[]::new));
        final ServeContext serve = flags.context();
        if (!given.hasMatchedOption("--port"))
        {
            serve.port(0);
        }
        if (!given.hasMatchedOption("--instances"))
        {
            serve.instances(instances);
        }
        if (!given.hasMatchedOption("--max-model-len"))
        {
            serve.engine().maxModelLen(131_072);
        }
        if (!given.hasMatchedOption("--max-waiting-queue-length"))
        {
            serve.engine().maxWaitingQueueLength(100_000);
        }
        return serve;
    }

    /**
     * The replay against every instance in turn; a {@code --load-arg} flag wins over each of the demo's settings.
     */
    private LoadContext loadContext(final Serve fleet, final Path trace)
    {
        final List<String> flags = new ArrayList<>(loadArgs);
        final boolean urlGiven = loadArgs.stream().anyMatch(a -> a.startsWith("--url") ||
            a.startsWith("--prefill-url") || a.startsWith("--decode-url"));
        if (!urlGiven)
        {
            flags.addAll(0, List.of("--url", fleet.baseUrls().get(0).toString())); // required by the parser
        }
        final LoadCommand command = new LoadCommand();
        final CommandLine.ParseResult given = new CommandLine(command).setCaseInsensitiveEnumValuesAllowed(true)
            .parseArgs(flags.toArray(String[]::new));
        final LoadContext load = command.context();
        if (!urlGiven)
        {
            load.urls(fleet.baseUrls());
        }
        if (!given.hasMatchedOption("--workload"))
        {
            load.workload(trace);
        }
        if (!given.hasMatchedOption("--time-scale"))
        {
            load.timeScale(timeScale);
        }
        if (!given.hasMatchedOption("--max-seconds"))
        {
            load.maxSeconds(maxSeconds);
        }
        if (!given.hasMatchedOption("--drain-timeout"))
        {
            load.drainTimeoutNs(drainTimeoutNs);
        }
        if (!given.hasMatchedOption("--model"))
        {
            load.model(fleet.context().serveOptions().modelNameForResponses());
        }
        if (!given.hasMatchedOption("--report"))
        {
            load.report(report);
        }
        if (!given.hasMatchedOption("--html"))
        {
            load.html(html);
        }
        if (!given.hasMatchedOption("--scrape-metrics"))
        {
            load.scrapeMetrics(fleet.baseUrls().stream().map(url -> url.resolve("/metrics")).toList());
        }
        if (quiet)
        {
            load.progress(false);
        }
        if (!given.hasMatchedOption("--prompt-format") && !given.hasMatchedOption("--endpoint"))
        {
            // token-id prompts: the servers do not tokenize the trace's ~20 M prompt tokens, which on two cores
            // left the client's sends later (docs/load.md: the demo's lateness, text and ids)
            load.tokenPrompts(true);
        }
        return load;
    }

    private static Path extractBundledTrace() throws IOException
    {
        try (InputStream in = DemoCommand.class.getResourceAsStream(TRACE_RESOURCE))
        {
            if (null == in)
            {
                throw new IOException("the bundled trace " + TRACE_RESOURCE + " is missing from the jar (rebuild)");
            }
            final Path file = Files.createTempFile("tapedeck-demo-", ".mooncake.jsonl");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        }
    }
}
