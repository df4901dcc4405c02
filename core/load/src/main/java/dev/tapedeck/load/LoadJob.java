package dev.tapedeck.load;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.load.client.LoadClient;
import dev.tapedeck.net.Transport;

/**
 * A whole {@code tapedeck load}: one or more runs (a sweep has one per level) against the servers (or a prefill/decode
 * pair), then the JSON and
 * HTML reports and the final table. Runs one point after another on the calling thread; {@link #stop()} (any thread,
 * e.g. a SIGINT hook) ends the current run early and skips the rest, and the reports are still written.
 */
public final class LoadJob
{
    /**
     * One run of the job.
     *
     * @param label name in the report.
     * @param level sweep level, or NaN.
     * @param settings the run.
     */
    public record PointSpec(String label, double level, LoadRun.Settings settings)
    {
    }

    /**
     * Everything a job needs.
     *
     * @param urls the servers, loaded in turn (of a prefill/decode run, the decode server).
     * @param prefillUrl the prefill server of a prefill/decode run, or null.
     * @param target what the report says was loaded (url, model, endpoint, stream).
     * @param options the options as given, for the report.
     * @param bodies builds request bodies.
     * @param headers extra request headers.
     * @param clientThreads client event loops.
     * @param requestTimeoutNs longest a request may take.
     * @param slo objectives for goodput.
     * @param sweepParameter {@code concurrency} or {@code rate}, or null.
     * @param points the runs.
     * @param scrapeUrls Prometheus URLs to sample during each run, summed as one server; empty for none.
     * @param insecureTls accept any TLS certificate of an https server.
     * @param report JSON report path, or null.
     * @param html HTML report path, or null.
     * @param progress print a progress line.
     * @param servers server modes by name ({@code --sweep-servers}): every point runs against each, in turn, its
     *     {@code /metrics} scraped; empty to run against {@code urls}.
     */
    public record Settings(List<URI> urls, URI prefillUrl, Map<String, Object> target, Map<String, Object> options,
        RequestBodies bodies, Map<String, String> headers, int clientThreads, long requestTimeoutNs, Slo slo,
        String sweepParameter, List<PointSpec> points, List<URI> scrapeUrls, boolean insecureTls, Path report,
        Path html, boolean progress, Map<String, URI> servers)
    {
    }

    private final Settings settings;
    private final PrintStream out;
    private final PrintStream err;
    private volatile LoadRun current;
    private volatile boolean stopped;

    /**
     * @param settings the job.
     * @param out where the table goes.
     * @param err where progress goes.
     */
    public LoadJob(final Settings settings, final PrintStream out, final PrintStream err)
    {
        this.settings = settings;
        this.out = out;
        this.err = err;
    }

    /**
     * End the current run early (requests in flight get their drain time) and skip the remaining points.
     */
    public void stop()
    {
        stopped = true;
        final LoadRun run = current;
        if (null != run)
        {
            run.stop();
        }
    }

    /**
     * Run every point, write the reports, print the table.
     *
     * @return the report.
     * @throws IOException if a report cannot be written.
     * @throws InterruptedException if interrupted.
     */
    public ObjectNode run() throws IOException, InterruptedException
    {
        final List<LoadReport.Point> points = new ArrayList<>();
        final List<String> series = new ArrayList<>();
        if (settings.servers().isEmpty())
        {
            try (LoadClient client = null == settings.prefillUrl() ? client(settings.urls()) :
                LoadClient.prefillDecode(settings.prefillUrl(), settings.urls().get(0), settings.clientThreads(),
                    settings.headers(), settings.requestTimeoutNs(), Transport.select("auto"), settings.insecureTls()))
            {
                runPoints(client, settings.scrapeUrls(), "", points);
            }
        }
        else
        {
            for (final Map.Entry<String, URI> server : settings.servers().entrySet())
            {
                final int before = points.size();
                try (LoadClient client = client(List.of(server.getValue())))
                {
                    runPoints(client, List.of(server.getValue().resolve("/metrics")), server.getKey(), points);
                }
                for (int i = before; i < points.size(); i++)
                {
                    series.add(server.getKey());
                }
            }
        }
        final ObjectNode report = LoadReport.build(settings.target(), settings.options(), settings.slo(),
            null == settings.sweepParameter() && !series.isEmpty() ? "server" : settings.sweepParameter(), points);
        if (!series.isEmpty())
        {
            for (int i = 0; i < series.size(); i++)
            {
                ((ObjectNode)report.path("points").get(i)).put("series", series.get(i));
            }
            if (null != settings.sweepParameter())
            {
                SweepSeries.analyse(report);
            }
        }
        if (null != settings.report())
        {
            LoadReport.write(report, settings.report());
        }
        if (null != settings.html())
        {
            HtmlReport.write(report, settings.html());
        }
        ResultTable.print(report, out);
        if (null != settings.report())
        {
            out.println("report: " + settings.report());
        }
        if (null != settings.html())
        {
            out.println("html report: " + settings.html());
        }
        return report;
    }

    private LoadClient client(final List<URI> urls)
    {
        return new LoadClient(urls, settings.clientThreads(), settings.headers(), settings.requestTimeoutNs(),
            Transport.select("auto"), settings.insecureTls());
    }

    /**
     * Run every point against one server (or fleet), each scraped from {@code scrapeUrls}, labelled with
     * {@code prefix} (a server mode's name) when not empty.
     */
    private void runPoints(final LoadClient client, final List<URI> scrapeUrls, final String prefix,
        final List<LoadReport.Point> points) throws InterruptedException
    {
        final boolean terminal = null != System.console();
        for (final PointSpec spec : settings.points())
        {
            if (stopped)
            {
                break;
            }
            final MetricsScraper scraper = scrapeUrls.isEmpty() ? null :
                new MetricsScraper(scrapeUrls, settings.insecureTls()).bracketRun(true);
            client.preconnect(spec.settings().warmConnections(), java.util.concurrent.TimeUnit.SECONDS.toNanos(5));
            final LoadRun run = new LoadRun(prefix.isEmpty() ? spec.settings() :
                spec.settings().withLabel(prefix + " " + spec.settings().label()), client, settings.bodies());
            current = run;
            if (stopped)
            {
                run.stop(); // stop() came while the run was being set up
            }
            if (null != scraper)
            {
                scraper.start();
            }
            final long[] lastPrintNs = {0};
            final RunResult result = run.run(!settings.progress() ? null :
                (elapsedNs, sent, completed, failed, inFlight, planned) ->
                {
                    final String line = ResultTable.progress(elapsedNs, sent, completed, failed, inFlight,
                        planned, prefix.isEmpty() ? spec.label() : prefix + " " + spec.label());
                    if (terminal)
                    {
                        err.print("\r" + line + "   ");
                        err.flush();
                    }
                    else if (elapsedNs - lastPrintNs[0] >= 10_000_000_000L)
                    {
                        err.println(line);
                        lastPrintNs[0] = elapsedNs;
                    }
                });
            current = null;
            if (terminal && settings.progress())
            {
                err.println();
            }
            if (null != scraper)
            {
                scraper.stop();
            }
            points.add(new LoadReport.Point(result, spec.level(), null == scraper ? null : scraper.series(),
                null == scraper ? null : scraper.kvTransfer(), null == scraper ? null : scraper.faultsInjected(),
                null == scraper ? null : scraper.counterGrowth()));
        }
    }
}
