package dev.tapedeck.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.HdrHistogram.Histogram;

/**
 * The JSON report of {@code tapedeck load}, schema {@value #SCHEMA} (docs/load.md lists every field). One point per
 * run (a sweep has several), each with counts, errors by kind, throughput, goodput, latency distributions in
 * milliseconds (HdrHistogram, 3 significant digits), CDFs for plotting and a per-second timeline; plus the Pareto
 * frontier of a sweep. Built once at the end of a load; not thread safe.
 */
public final class LoadReport
{
    /** The schema name written in every report. */
    public static final String SCHEMA = "tapedeck-load-report/1";

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final double[] PERCENTILES = {50, 90, 95, 99, 99.9};

    private LoadReport()
    {
    }

    /**
     * A run with what was scraped from the server during it.
     *
     * @param result the run.
     * @param level the sweep level (concurrency or rate), or NaN outside a sweep.
     * @param server server metrics per second ({@code running}, {@code waiting}, {@code kv_cache_usage}, ...), or
     *     null without {@code --scrape-metrics}.
     * @param kvTransfer what the server's KV transfer histogram grew by during the run, or null when it was not
     *     scraped or not reported.
     * @param faultsInjected faults the server injected during the run, by kind
     *     ({@code tapedeck:faults_injected_total}), or null when it was not scraped or not reported.
     * @param counterGrowth how much the server's counters grew over the run, by series name
     *     ({@code prefix_queries_per_s}, ...: {@link MetricsScraper#counterGrowth}), or null when not scraped.
     */
    public record Point(RunResult result, double level, List<Map<String, Double>> server,
        MetricsScraper.KvTransfer kvTransfer, Map<String, Long> faultsInjected, Map<String, Double> counterGrowth)
    {
        /**
         * A point without counter totals.
         *
         * @param result the run.
         * @param level the sweep level, or NaN.
         * @param server server metrics per second, or null.
         * @param kvTransfer the server's KV transfer totals, or null.
         * @param faultsInjected faults the server injected, or null.
         */
        public Point(final RunResult result, final double level, final List<Map<String, Double>> server,
            final MetricsScraper.KvTransfer kvTransfer, final Map<String, Long> faultsInjected)
        {
            this(result, level, server, kvTransfer, faultsInjected, null);
        }

        /**
         * A point without fault counts.
         *
         * @param result the run.
         * @param level the sweep level, or NaN.
         * @param server server metrics per second, or null.
         * @param kvTransfer the server's KV transfer totals, or null.
         */
        public Point(final RunResult result, final double level, final List<Map<String, Double>> server,
            final MetricsScraper.KvTransfer kvTransfer)
        {
            this(result, level, server, kvTransfer, null, null);
        }

        /**
         * A point without KV transfer totals.
         *
         * @param result the run.
         * @param level the sweep level, or NaN.
         * @param server server metrics per second, or null.
         */
        public Point(final RunResult result, final double level, final List<Map<String, Double>> server)
        {
            this(result, level, server, null, null, null);
        }
    }

    /**
     * @param target {@code url}, {@code model}, {@code endpoint}, {@code stream}: what was loaded; with
     *     {@code prefill_url} and {@code decode_url} for a prefill/decode run, whose points get a
     *     {@code prefill_decode} section.
     * @param options the options as given, for the record.
     * @param slo the objectives.
     * @param sweepParameter {@code concurrency} or {@code rate} for a sweep, else null.
     * @param points the runs.
     * @return the report.
     */
    public static ObjectNode build(final Map<String, Object> target, final Map<String, Object> options,
        final Slo slo, final String sweepParameter, final List<Point> points)
    {
        return build(target, options, slo, sweepParameter, points, java.time.Instant.now());
    }

    /**
     * A report stamped with a given creation time ({@code simulate} stamps the epoch, so the same run gives the same
     * bytes).
     *
     * @param target what was loaded (see the other {@code build}).
     * @param options the options as given.
     * @param slo the objectives.
     * @param sweepParameter the swept setting, or null.
     * @param points the runs.
     * @param created the report's {@code created} time.
     * @return the report.
     */
    public static ObjectNode build(final Map<String, Object> target, final Map<String, Object> options,
        final Slo slo, final String sweepParameter, final List<Point> points, final java.time.Instant created)
    {
        final ObjectNode root = JSON.createObjectNode();
        root.put("schema", SCHEMA);
        root.put("tapedeck_version", dev.tapedeck.build.TapedeckVersion.version());
        root.put("created", created.toString());
        root.set("target", JSON.valueToTree(target));
        root.set("options", JSON.valueToTree(options));
        root.set("slo", JSON.valueToTree(slo.asMap()));
        if (null != sweepParameter)
        {
            root.put("sweep", sweepParameter);
        }
        final ArrayNode array = root.putArray("points");
        for (final Point point : points)
        {
            final ObjectNode node = point(point);
            if (target.containsKey("prefill_url"))
            {
                node.set("prefill_decode", prefillDecode(point));
            }
            array.add(node);
        }
        if (null != sweepParameter)
        {
            root.set("pareto", pareto(array));
        }
        return root;
    }

    /**
     * @param report the report.
     * @param path where to write it.
     * @throws IOException if writing fails.
     */
    public static void write(final ObjectNode report, final Path path) throws IOException
    {
        final Path parent = path.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        JSON.writeValue(path.toFile(), report);
    }

    /**
     * @param path a report file.
     * @return its content.
     * @throws IOException if it cannot be read or is not a load report.
     */
    public static ObjectNode read(final Path path) throws IOException
    {
        final com.fasterxml.jackson.databind.JsonNode node = JSON.readTree(path.toFile());
        if (!(node instanceof ObjectNode object) || !node.path("schema").asText().startsWith("tapedeck-load-report/"))
        {
            throw new IllegalArgumentException(path + ": not a tapedeck load report (no schema " + SCHEMA + ")");
        }
        return object;
    }

    private static ObjectNode point(final Point point)
    {
        final RunResult result = point.result();
        final RunRecorder r = result.recorder();
        final ObjectNode node = JSON.createObjectNode();
        node.put("label", result.label());
        if (!Double.isNaN(point.level()))
        {
            node.put("level", point.level());
        }
        node.put("plan", result.planDescription());
        node.put("measured_seconds", round(result.measuredSeconds()));
        final ObjectNode requests = node.putObject("requests");
        requests.put("sent", result.sent());
        requests.put("measured", r.started);
        requests.put("completed", r.completed);
        requests.put("failed", r.failed);
        requests.put("peak_in_flight", r.peakInFlight);
        node.set("errors", JSON.valueToTree(r.errors));
        if (!r.errorMessages.isEmpty())
        {
            node.set("error_messages", JSON.valueToTree(r.errorMessages));
        }
        if (null != point.faultsInjected())
        {
            node.set("faults_injected", JSON.valueToTree(point.faultsInjected()));
        }
        final double seconds = Math.max(1e-9, result.measuredSeconds());
        final ObjectNode throughput = node.putObject("throughput");
        throughput.put("requests_per_s", round(r.completed / seconds));
        throughput.put("output_tokens_per_s", round(r.outputTokens / seconds));
        throughput.put("prompt_tokens_per_s", round(r.promptTokens / seconds));
        throughput.put("total_tokens_per_s", round((r.promptTokens + r.outputTokens) / seconds));
        final ObjectNode goodput = node.putObject("goodput");
        goodput.put("requests_per_s", round(r.goodRequests / seconds));
        goodput.put("fraction", r.completed + r.failed > 0 ? round((double)r.goodRequests / (r.completed + r.failed)) :
            0);
        final ObjectNode tokens = node.putObject("tokens");
        tokens.put("prompt_total", r.promptTokens);
        tokens.put("output_total", r.outputTokens);
        tokens.put("prompt_mean", r.completed > 0 ? round((double)r.promptTokens / r.completed) : 0);
        tokens.put("output_mean", r.completed > 0 ? round((double)r.outputTokens / r.completed) : 0);
        final ObjectNode latency = node.putObject("latency_ms");
        latency.set("ttft", distribution(r.ttftNs));
        latency.set("itl", distribution(r.itlNs));
        latency.set("itl_request_mean", distribution(r.itlRequestMeanNs));
        latency.set("tpot", distribution(r.tpotNs));
        latency.set("e2e", distribution(r.e2eNs));
        latency.set("dispatch_lateness", distribution(r.dispatchLatenessNs));
        final ObjectNode cdf = node.putObject("cdf_ms");
        cdf.set("ttft", cdf(r.ttftNs));
        cdf.set("itl", cdf(r.itlNs));
        cdf.set("e2e", cdf(r.e2eNs));
        node.set("timeline", timeline(result, point.server()));
        if (null != point.server())
        {
            final ObjectNode kv = kvCache(point.server(), point.counterGrowth());
            if (null != kv)
            {
                node.set("kv_cache", kv);
            }
        }
        node.set("notes", JSON.valueToTree(result.notes()));
        return node;
    }

    /**
     * The server's prefix-cache hit rates over the run, from how much its counters grew between the scrapes just
     * before and after it: vLLM's prefix-cache queries and hits (the GPU's) and external hits (a KV connector's: a
     * CPU tier, a P/D pull), or SGLang's cached tokens over its prompt tokens; else the mean of SGLang's hit-rate
     * gauge; null when the server reported none of them.
     */
    private static ObjectNode kvCache(final List<Map<String, Double>> server, final Map<String, Double> growth)
    {
        final Map<String, Double> grown = null == growth ? Map.of() : growth;
        final double queries = grown.getOrDefault("prefix_queries_per_s", 0.0);
        final double hits = grown.getOrDefault("prefix_hits_per_s", 0.0);
        final double external = grown.getOrDefault("external_prefix_hits_per_s", 0.0);
        final double prompt = grown.getOrDefault("prompt_tokens_per_s", 0.0);
        double gauge = 0;
        int gauges = 0;
        for (final Map<String, Double> second : server)
        {
            if (null != second && second.containsKey("prefix_hit_rate"))
            {
                gauge += second.get("prefix_hit_rate");
                gauges++;
            }
        }
        final ObjectNode kv = JSON.createObjectNode();
        if (queries > 0)
        {
            kv.put("source", "prefix cache counters");
            kv.put("gpu_hit_rate", round4(hits / queries));
            kv.put("cpu_hit_rate", round4(external / queries));
            kv.put("hit_rate", round4((hits + external) / queries));
        }
        else if (hits > 0 && prompt > 0)
        {
            kv.put("source", "cached tokens over prompt tokens");
            kv.put("hit_rate", round4(hits / prompt));
        }
        else if (gauges > 0)
        {
            kv.put("source", "hit-rate gauge, mean");
            kv.put("hit_rate", round4(gauge / gauges));
        }
        else
        {
            return null;
        }
        return kv;
    }

    private static double round4(final double value)
    {
        return Math.round(value * 10_000) / 10_000.0;
    }

    /**
     * A prefill/decode point's TTFT split: the client's view of each hop and, when the decode server's metrics were
     * scraped, the server's mean KV transfer time.
     */
    private static ObjectNode prefillDecode(final Point point)
    {
        final RunRecorder r = point.result().recorder();
        final ObjectNode node = JSON.createObjectNode();
        final ObjectNode split = node.putObject("ttft_split_ms");
        split.set("prefill", distribution(r.prefillNs));
        split.set("handoff", distribution(r.handoffNs));
        split.set("decode_first_token", distribution(r.decodeFirstTokenNs));
        final ObjectNode kv = node.putObject("kv_transfer");
        final MetricsScraper.KvTransfer transfer = point.kvTransfer();
        kv.put("reported", null != transfer);
        if (null == transfer)
        {
            kv.put("note", null == point.server() ? "not scraped (give --scrape-metrics the decode server's " +
                "/metrics)" : "not reported by the server (no vllm:nixl_xfer_time_seconds)");
            return node;
        }
        kv.put("transfers", round(transfer.transfers()));
        kv.put("total_ms", round(transfer.seconds() * 1e3));
        if (transfer.transfers() > 0)
        {
            kv.put("mean_ms", round(transfer.meanMs()));
            if (r.decodeFirstTokenNs.getTotalCount() > 0)
            {
                kv.put("decode_first_token_after_transfer_mean_ms",
                    round(r.decodeFirstTokenNs.getMean() / 1e6 - transfer.meanMs()));
            }
        }
        else
        {
            kv.put("note", "no transfer during the run");
        }
        return node;
    }

    private static ObjectNode distribution(final Histogram h)
    {
        final ObjectNode node = JSON.createObjectNode();
        node.put("count", h.getTotalCount());
        if (0 == h.getTotalCount())
        {
            return node;
        }
        node.put("mean", round(h.getMean() / 1e6));
        node.put("min", round(h.getMinValue() / 1e6));
        for (final double p : PERCENTILES)
        {
            node.put("p" + (p == Math.rint(p) ? String.valueOf((int)p) : String.valueOf(p).replace(".", "")),
                round(h.getValueAtPercentile(p) / 1e6));
        }
        node.put("max", round(h.getMaxValue() / 1e6));
        return node;
    }

    /**
     * 101 points (every percentile) plus the tail (99.5, 99.9, 99.99): {@code [[value_ms, fraction], ...]}.
     */
    private static ArrayNode cdf(final Histogram h)
    {
        final ArrayNode points = JSON.createArrayNode();
        if (0 == h.getTotalCount())
        {
            return points;
        }
        final List<Double> fractions = new ArrayList<>();
        for (int p = 0; p <= 100; p++)
        {
            fractions.add(p / 100.0);
        }
        fractions.add(99, 0.995);
        fractions.add(100, 0.999);
        fractions.add(101, 0.9999);
        fractions.sort(Double::compare);
        for (final double f : fractions)
        {
            final ArrayNode pair = points.addArray();
            pair.add(round(h.getValueAtPercentile(f * 100) / 1e6));
            pair.add(f);
        }
        return points;
    }

    private static ArrayNode timeline(final RunResult result, final List<Map<String, Double>> server)
    {
        final RunRecorder r = result.recorder();
        final ArrayNode rows = JSON.createArrayNode();
        int last = result.inFlightPerSecond().length - 1;
        for (int i = r.completedPerSecond.length - 1; i > last; i--)
        {
            if (r.completedPerSecond[i] > 0 || r.startedPerSecond[i] > 0 || r.errorsPerSecond[i] > 0)
            {
                last = i;
                break;
            }
        }
        if (null != server)
        {
            last = Math.max(last, server.size() - 1);
        }
        for (int t = 0; t <= last; t++)
        {
            final ObjectNode row = rows.addObject();
            row.put("t", t);
            row.put("started", at(r.startedPerSecond, t));
            row.put("completed", at(r.completedPerSecond, t));
            row.put("output_tokens", at(r.outputTokensPerSecond, t));
            row.put("errors", at(r.errorsPerSecond, t));
            row.put("in_flight", at(result.inFlightPerSecond(), t));
            if (null != server && t < server.size() && null != server.get(t))
            {
                row.set("server", JSON.valueToTree(server.get(t)));
            }
        }
        return rows;
    }

    /**
     * Points not dominated in (higher output throughput, lower p99 TTFT).
     */
    private static ArrayNode pareto(final ArrayNode points)
    {
        final ArrayNode frontier = JSON.createArrayNode();
        for (int i = 0; i < points.size(); i++)
        {
            final double throughput = points.get(i).path("throughput").path("output_tokens_per_s").asDouble();
            final double ttft = points.get(i).path("latency_ms").path("ttft").path("p99").asDouble(Double.MAX_VALUE);
            boolean dominated = false;
            for (int j = 0; j < points.size() && !dominated; j++)
            {
                final double t2 = points.get(j).path("throughput").path("output_tokens_per_s").asDouble();
                final double l2 = points.get(j).path("latency_ms").path("ttft").path("p99").asDouble(Double.MAX_VALUE);
                dominated = j != i && t2 >= throughput && l2 <= ttft && (t2 > throughput || l2 < ttft);
            }
            if (!dominated)
            {
                frontier.add(points.get(i).path("label").asText());
            }
        }
        return frontier;
    }

    private static long at(final long[] values, final int index)
    {
        return index < values.length ? values[index] : 0;
    }

    private static double round(final double value)
    {
        return Math.round(value * 1000) / 1000.0;
    }
}
