package dev.tapedeck.system;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine;

import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.LoadRun;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.load.PromptWords;
import dev.tapedeck.load.RequestBodies;
import dev.tapedeck.load.RunResult;
import dev.tapedeck.load.Slo;
import dev.tapedeck.cli.Main;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.load.client.LoadClient;
import dev.tapedeck.net.Transport;
import dev.tapedeck.serve.ServeContext;

/**
 * Shared plumbing of the load tests: serve options for long prompts, one {@link LoadRun} through a fresh client, and
 * the real {@code tapedeck load} command run in-process. Stateless; thread safe.
 */
final class LoadHarness
{
    /** A run that finishes: the whole test suite never waits longer on one run. */
    static final long DRAIN_NS = TimeUnit.SECONDS.toNanos(30);

    private static final ObjectMapper JSON = new ObjectMapper();
    private static PromptWords words;

    /**
     * What one CLI invocation gave.
     *
     * @param exitCode the exit code.
     * @param err what picocli printed to its error writer.
     */
    record Cli(int exitCode, String err)
    {
    }

    private LoadHarness()
    {
    }

    /**
     * @return the single-token words of the test servers' tokenizer (computed once).
     */
    static synchronized PromptWords words()
    {
        if (null == words)
        {
            words = PromptWords.of(TestServer.tokenizer());
        }
        return words;
    }

    /**
     * @param maxRequestBodyBytes largest body the server accepts (real prompts of 100k tokens are about 1 MB).
     * @return settings of one instance on an ephemeral port.
     */
    static ServeContext serveContext(final int maxRequestBodyBytes)
    {
        return TestServer.context().servedModelNames(List.of(TestServer.MODEL))
            .maxRequestBodyBytes(maxRequestBodyBytes);
    }

    /**
     * An in-process serve for real workloads: prompts up to 256k tokens (Mooncake's reach 87k, kv-cache-tester's 65k;
     * TestServer's defaults are 8192 tokens and 64 KiB bodies), KV blocks and a step budget to match.
     *
     * @return the running server.
     * @throws InterruptedException if interrupted while starting.
     */
    static TestServer longContextServer() throws IOException, InterruptedException
    {
        return new TestServer(serveContext(16 << 20), c -> c.maxModelLen(262_144).kvCacheBlocks(200_000)
            .maxNumBatchedTokens(32_768));
    }

    /**
     * @param port the server.
     * @return its base URL.
     */
    static URI url(final int port)
    {
        return URI.create("http://127.0.0.1:" + port);
    }

    /**
     * Run one plan through a fresh client, streaming completions with ignore_eos and continuous usage.
     *
     * @param url the server.
     * @param settings the run.
     * @param requestTimeoutNs the client's request timeout.
     * @return what was measured.
     * @throws InterruptedException if interrupted.
     */
    static RunResult run(final URI url, final LoadRun.Settings settings, final long requestTimeoutNs)
        throws InterruptedException
    {
        final RequestBodies bodies = new RequestBodies(RequestBodies.Endpoint.COMPLETIONS, TestServer.MODEL, true,
            true, false, true, new PromptFactory(words(), 7, settings.plan().blockSize(), false));
        try (LoadClient client = new LoadClient(url, 1, Map.of(), requestTimeoutNs, Transport.select("auto")))
        {
            client.preconnect(settings.warmConnections(), TimeUnit.SECONDS.toNanos(5));
            return new LoadRun(settings, client, bodies).run(null);
        }
    }

    /**
     * @param plan the plan.
     * @return an open-loop run of the whole plan, no limits, no warm-up.
     */
    static LoadRun.Settings open(final LoadPlan plan)
    {
        return new LoadRun.Settings(plan, LoadRun.Mode.OPEN, 0, 0, 0, 0, DRAIN_NS, Slo.NONE, "run");
    }

    /**
     * Run {@code tapedeck load ARGS} in-process.
     *
     * @param args the arguments after {@code load}.
     * @return exit code and error output.
     */
    static Cli load(final String... args)
    {
        final String[] all = new String[args.length + 1];
        all[0] = "load";
        System.arraycopy(args, 0, all, 1, args.length);
        final CommandLine cli = Main.commandLine();
        final StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        cli.setOut(new PrintWriter(new StringWriter(), true));
        final int code = cli.execute(all);
        return new Cli(code, err.toString());
    }

    /**
     * @param report a report file.
     * @return its JSON.
     * @throws IOException if it cannot be read.
     */
    static JsonNode readReport(final Path report) throws IOException
    {
        return JSON.readTree(report.toFile());
    }
}
