package dev.tapedeck.load;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The charts of the HTML report, drawn from the JSON report ({@value LoadReport#SCHEMA}): latency CDFs over all
 * points, the Pareto frontier of a sweep, and the per-second timeline of one point. A timeline longer than
 * {@value #MAX_TIMELINE_POINTS} seconds is drawn as means over equal buckets of seconds so that the page stays small.
 * Stateless.
 */
final class ReportCharts
{
    /** Most points a timeline series draws; longer runs are averaged over buckets of seconds. */
    static final int MAX_TIMELINE_POINTS = 300;

    private static final String[] SERVER_KEYS = {"running", "waiting", "kv_cache_usage", "generation_tokens_per_s",
        "preemptions_per_s"};

    private ReportCharts()
    {
    }

    /**
     * @param report the report.
     * @return TTFT, ITL and E2E CDFs, one line per point, log-scale latency axis.
     */
    static String distributions(final JsonNode report)
    {
        final StringBuilder out = new StringBuilder(16384);
        out.append("<div class=\"figs\">\n");
        out.append(cdf(report, "ttft", "TTFT CDF", "time to first token (ms, log scale)", "fraction of requests",
            "ttft_ms", "SLO"));
        out.append(cdf(report, "itl", "ITL CDF", "inter-token latency (ms, log scale)", "fraction of token gaps",
            "itl_ms", "SLO (request mean)"));
        out.append(cdf(report, "e2e", "E2E latency CDF", "end-to-end latency (ms, log scale)",
            "fraction of requests", "e2e_ms", "SLO"));
        return out.append("</div>\n").toString();
    }

    private static String cdf(final JsonNode report, final String key, final String title, final String xLabel,
        final String yLabel, final String sloKey, final String sloName)
    {
        final SvgChart chart = new SvgChart(title, xLabel, yLabel).xLog(true).yMax(1)
            .caption("share at or below each latency; further left is faster")
            .rule(false, 0.5, "p50").rule(false, 0.99, "p99");
        final double slo = report.path("slo").path(sloKey).asDouble(Double.NaN);
        chart.rule(true, slo, sloName + " " + SvgChart.number(slo) + " ms");
        int index = 0;
        for (final JsonNode point : report.path("points"))
        {
            final JsonNode pairs = point.path("cdf_ms").path(key);
            final double[] x = new double[pairs.size()];
            final double[] y = new double[pairs.size()];
            for (int i = 0; i < pairs.size(); i++)
            {
                x[i] = pairs.get(i).path(0).asDouble(Double.NaN);
                y[i] = pairs.get(i).path(1).asDouble(Double.NaN);
            }
            chart.line(point.path("label").asText(), SvgChart.Style.of(index++), x, y);
        }
        return chart.figure();
    }

    /**
     * @param report a sweep's report.
     * @return output tokens/s (x) against p99 TTFT (y), one labelled marker per level, the frontier joined.
     */
    static String pareto(final JsonNode report)
    {
        final Set<String> frontier = new HashSet<>();
        report.path("pareto").forEach(label -> frontier.add(label.asText()));
        final List<double[]> frontierPoints = new ArrayList<>();
        final List<double[]> all = new ArrayList<>();
        final List<JsonNode> plotted = new ArrayList<>();
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (final JsonNode point : report.path("points"))
        {
            final double throughput = point.path("throughput").path("output_tokens_per_s").asDouble(Double.NaN);
            final double ttftP99 = point.path("latency_ms").path("ttft").path("p99").asDouble(Double.NaN);
            if (Double.isFinite(ttftP99) && Double.isFinite(throughput))
            {
                all.add(new double[] {throughput, ttftP99});
                plotted.add(point);
                min = Math.min(min, ttftP99);
                max = Math.max(max, ttftP99);
            }
        }
        final boolean log = min > 0 && max / min > 20;
        final String sweep = report.path("sweep").asText("level");
        final double slo = report.path("slo").path("ttft_ms").asDouble(Double.NaN);
        final SvgChart chart = new SvgChart("Pareto frontier: output throughput vs p99 TTFT", "output tokens/s",
            "p99 TTFT (ms" + (log ? ", log scale)" : ")")).yLog(log)
            .caption("one marker per " + sweep + " level; down and to the right is better")
            .markerLegend("filled: on the frontier (no other level has both more throughput and a lower p99 TTFT); "
                + "hollow: dominated")
            .rule(false, slo, "TTFT SLO " + SvgChart.number(slo) + " ms");
        for (int i = 0; i < all.size(); i++)
        {
            final JsonNode point = plotted.get(i);
            final String label = point.path("label").asText();
            final boolean onFrontier = frontier.contains(label);
            final double[] xy = all.get(i);
            chart.marker(xy[0], xy[1], label, String.format(Locale.ROOT,
                "%s: %,.1f output tokens/s, p99 TTFT %s ms", label, xy[0], SvgChart.number(xy[1])), onFrontier);
            if (onFrontier)
            {
                frontierPoints.add(xy);
            }
        }
        frontierPoints.sort((a, b) -> Double.compare(a[0], b[0]));
        final double[] fx = new double[frontierPoints.size()];
        final double[] fy = new double[frontierPoints.size()];
        for (int i = 0; i < fx.length; i++)
        {
            fx[i] = frontierPoints.get(i)[0];
            fy[i] = frontierPoints.get(i)[1];
        }
        chart.line("Pareto frontier", new SvgChart.Style(SvgChart.PALETTE[1], 0), fx, fy);
        int index = 2;
        for (final Map.Entry<String, JsonNode> series : report.path("series").properties())
        {
            final Set<String> members = new HashSet<>();
            series.getValue().path("pareto").forEach(label -> members.add(label.asText()));
            final List<double[]> own = new ArrayList<>();
            for (int i = 0; i < all.size(); i++)
            {
                if (members.contains(plotted.get(i).path("label").asText()))
                {
                    own.add(all.get(i));
                }
            }
            own.sort((a, b) -> Double.compare(a[0], b[0]));
            chart.line(series.getKey() + " frontier", SvgChart.Style.of(index++),
                own.stream().mapToDouble(p -> p[0]).toArray(), own.stream().mapToDouble(p -> p[1]).toArray());
        }
        return chart.figure();
    }

    /**
     * @param report a sweep over server modes ({@link SweepSeries}).
     * @return p99 TTFT (y) against the level (x), a line per mode, and a rule where each mode's p99 TTFT doubled.
     */
    static String cliff(final JsonNode report)
    {
        final String sweep = report.path("sweep").asText("level");
        final SvgChart chart = new SvgChart("p99 TTFT by " + sweep + ", per server mode", sweep, "p99 TTFT (ms)")
            .xLog(true).yLog(true)
            .caption("a rule marks the level at which a mode's p99 TTFT is twice its lowest level's; the later, " +
                "the longer its KV tiers hold every session's prefix");
        int index = 0;
        for (final Map.Entry<String, JsonNode> series : report.path("series").properties())
        {
            final List<double[]> xy = new ArrayList<>();
            for (final JsonNode point : report.path("points"))
            {
                if (series.getKey().equals(point.path("series").asText()))
                {
                    xy.add(new double[] {point.path("level").asDouble(),
                        point.path("latency_ms").path("ttft").path("p99").asDouble(Double.NaN)});
                }
            }
            xy.sort((a, b) -> Double.compare(a[0], b[0]));
            chart.line(series.getKey(), SvgChart.Style.of(index++), xy.stream().mapToDouble(p -> p[0]).toArray(),
                xy.stream().mapToDouble(p -> p[1]).toArray());
            final JsonNode doubled = series.getValue().path("ttft_doubled_at");
            if (doubled.isNumber())
            {
                chart.rule(true, doubled.asDouble(), series.getKey() + ": x2 at " +
                    SvgChart.number(doubled.asDouble()));
            }
        }
        return chart.figure();
    }

    /**
     * @param report a report with a {@code series} analysis ({@link SweepSeries}).
     * @return throughput per GPU against interactivity, a line per server mode through its levels: the trade-off
     *     agentic benchmarks plot (more of both is better).
     */
    static String perGpu(final JsonNode report)
    {
        final int gpus = SweepSeries.gpusPerServer(report);
        final SvgChart chart = new SvgChart("Throughput per GPU vs interactivity, per server mode",
            "interactivity (output tokens/s per user)", "output tokens/s per GPU (" + gpus + " GPU" +
            (gpus > 1 ? "s" : "") + " per server)")
            .caption("one marker per " + report.path("sweep").asText("level") + " level; up and to the right is " +
                "better");
        int index = 0;
        for (final Map.Entry<String, JsonNode> series : report.path("series").properties())
        {
            final List<double[]> xy = new ArrayList<>();
            for (final JsonNode at : series.getValue().path("curve"))
            {
                final double interactivity = at.path("interactivity_tokens_per_s").asDouble(Double.NaN);
                if (Double.isFinite(interactivity))
                {
                    xy.add(new double[] {interactivity, at.path("output_tokens_per_s_per_gpu").asDouble()});
                }
            }
            chart.line(series.getKey(), SvgChart.Style.of(index++), xy.stream().mapToDouble(p -> p[0]).toArray(),
                xy.stream().mapToDouble(p -> p[1]).toArray());
        }
        return chart.figure();
    }

    /**
     * @param point one point of the report.
     * @return its per-second charts: requests/s, output tokens/s, requests in flight, and KV-cache usage when the
     *     server was scraped.
     */
    static String timeline(final JsonNode point)
    {
        final JsonNode rows = point.path("timeline");
        final int n = rows.size();
        if (0 == n)
        {
            return "<p class=\"muted\">No timeline.</p>\n";
        }
        final double[] t = new double[n];
        final double[][] client = new double[5][n];
        final double[][] server = new double[SERVER_KEYS.length][n];
        for (int i = 0; i < n; i++)
        {
            final JsonNode row = rows.get(i);
            t[i] = row.path("t").asDouble(i);
            client[0][i] = row.path("started").asDouble(Double.NaN);
            client[1][i] = row.path("completed").asDouble(Double.NaN);
            client[2][i] = row.path("errors").asDouble(Double.NaN);
            client[3][i] = row.path("output_tokens").asDouble(Double.NaN);
            client[4][i] = row.path("in_flight").asDouble(Double.NaN);
            for (int k = 0; k < SERVER_KEYS.length; k++)
            {
                server[k][i] = row.path("server").path(SERVER_KEYS[k]).asDouble(Double.NaN);
            }
        }
        final int bucket = (n + MAX_TIMELINE_POINTS - 1) / MAX_TIMELINE_POINTS;
        final boolean minutes = t[n - 1] > 900;
        final double[] x = mean(t, bucket);
        for (int i = 0; i < x.length; i++)
        {
            x[i] = minutes ? x[i] / 60 : x[i];
        }
        final String xLabel = minutes ? "time since start (min)" : "time since start (s)";
        final String caption = "warm-up included" + (bucket > 1 ? "; each point is the mean of " + bucket + " s" :
            "");
        final StringBuilder out = new StringBuilder(32768);
        out.append("<div class=\"figs\">\n");
        final SvgChart requests = new SvgChart("Requests per second", xLabel, "requests/s").caption(caption)
            .line("sent/s", style(0), x, mean(client[0], bucket))
            .line("completed/s", style(2), x, mean(client[1], bucket))
            .line("errors/s", style(1), x, mean(client[2], bucket));
        if (hasAny(server[4], true))
        {
            requests.line("preemptions/s (server)", style(3), x, mean(server[4], bucket));
        }
        out.append(requests.figure());
        final SvgChart tokens = new SvgChart("Output tokens per second", xLabel, "tokens/s")
            .caption("client tokens counted when their request completes; " + caption)
            .line("output tokens/s (client)", style(0), x, mean(client[3], bucket));
        if (hasAny(server[3], false))
        {
            tokens.line("generation tokens/s (server)", new SvgChart.Style(SvgChart.PALETTE[4], 1), x,
                mean(server[3], bucket));
        }
        out.append(tokens.figure());
        final SvgChart inFlight = new SvgChart("Requests in flight", xLabel, "requests").caption(caption)
            .line("in flight (client)", style(0), x, mean(client[4], bucket));
        if (hasAny(server[0], false) || hasAny(server[1], false))
        {
            inFlight.line("running (server)", style(2), x, mean(server[0], bucket))
                .line("waiting (server)", style(1), x, mean(server[1], bucket));
        }
        out.append(inFlight.figure());
        if (hasAny(server[2], false))
        {
            out.append(kvUsage(x, mean(server[2], bucket), xLabel, caption));
        }
        return out.append("</div>\n").toString();
    }

    private static String kvUsage(final double[] x, final double[] usage, final String xLabel, final String caption)
    {
        double max = 0;
        for (final double v : usage)
        {
            max = Double.isNaN(v) ? max : Math.max(max, v);
        }
        final double scale = max <= 1 ? 100 : 1;
        final double[] percent = new double[usage.length];
        for (int i = 0; i < usage.length; i++)
        {
            percent[i] = usage[i] * scale;
        }
        return new SvgChart("KV cache usage (server)", xLabel, "KV cache usage (%)").yMax(100).caption(caption)
            .line("KV cache usage (server)", style(3), x, percent).figure();
    }

    private static SvgChart.Style style(final int index)
    {
        return SvgChart.Style.of(index);
    }

    private static boolean hasAny(final double[] values, final boolean nonZero)
    {
        for (final double v : values)
        {
            if (!Double.isNaN(v) && (!nonZero || 0 != v))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @param values per second (NaN when unknown).
     * @param bucket seconds per bucket.
     * @return the mean of each bucket's known values (NaN when it has none).
     */
    static double[] mean(final double[] values, final int bucket)
    {
        final double[] means = new double[(values.length + bucket - 1) / bucket];
        for (int b = 0; b < means.length; b++)
        {
            double sum = 0;
            int count = 0;
            for (int i = b * bucket; i < Math.min(values.length, (b + 1) * bucket); i++)
            {
                if (!Double.isNaN(values[i]))
                {
                    sum += values[i];
                    count++;
                }
            }
            means[b] = 0 == count ? Double.NaN : sum / count;
        }
        return means;
    }
}
