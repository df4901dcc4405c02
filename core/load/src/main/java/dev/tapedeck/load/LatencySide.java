package dev.tapedeck.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.tapedeck.trace.TraceFiles;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * One side of a calibration ({@link Calibration}): the latency distributions of a run, read from a trace (vllm-vcr or
 * tapedeck JSONL, gzip or plain: every per-request sample) or from a {@code tapedeck load} JSON report (its first
 * point: count, mean, p50/p90/p99 and the CDF, no per-request samples).
 * <p>
 * From a trace: TTFT per request; ITL per token (a gap closing a chunk of n tokens counts n times as gap/n, as the load
 * report counts it; an {@code itl_summary} counts {@code count} times its mean); E2E per request from {@code e2e_ms}
 * when the record has it, else TTFT plus its gaps; TPOT per request with more than one output token,
 * {@code (e2e - ttft) / (output_tokens - 1)}; queue time from {@code queue_ms} when records carry it.
 * <p>
 * Immutable once built; safe to share.
 */
public final class LatencySide
{
    /** The metrics a calibration compares. */
    public enum Metric
    {
        /** Time to first token. */
        TTFT("ttft", "TTFT"),
        /** Inter-token latency, per token. */
        ITL("itl", "ITL"),
        /** End-to-end latency. */
        E2E("e2e", "E2E"),
        /** Time per output token after the first, per request. */
        TPOT("tpot", "TPOT"),
        /** Time waiting before the first schedule. */
        QUEUE("queue", "queue");

        private final String key;
        private final String label;

        Metric(final String key, final String label)
        {
            this.key = key;
            this.label = label;
        }

        /**
         * @return the name in JSON and on the command line ({@code ttft}).
         */
        public String key()
        {
            return key;
        }

        /**
         * @return the name in tables ({@code TTFT}).
         */
        public String label()
        {
            return label;
        }

        /**
         * @param key a metric's key, any case.
         * @return the metric.
         * @throws IllegalArgumentException if no metric has that key.
         */
        public static Metric of(final String key)
        {
            for (final Metric metric : values())
            {
                if (metric.key.equalsIgnoreCase(key))
                {
                    return metric;
                }
            }
            throw new IllegalArgumentException("unknown metric '" + key + "' (expected one of ttft, itl, e2e, tpot, " +
                "queue)");
        }
    }

    /**
     * A metric's distribution on one side.
     *
     * @param count values recorded.
     * @param meanMs their mean.
     * @param p50Ms 50th percentile (nearest rank for samples; the report's own for a report).
     * @param p90Ms 90th percentile.
     * @param p99Ms 99th percentile.
     * @param sortedMs every value in ascending order, or null when only the summary is known (a report).
     * @param cdfMs {@code [value, fraction]} pairs of the report, or null for samples.
     */
    public record Distribution(long count, double meanMs, double p50Ms, double p90Ms, double p99Ms, double[] sortedMs,
        double[][] cdfMs)
    {
        /**
         * @param values the samples in ms, any order (copied and taken to the microsecond, the resolution of load
         *     reports, so that KS does not see sub-microsecond rounding between two recorders as a difference).
         * @return their distribution.
         */
        public static Distribution ofSamples(final double[] values)
        {
            final double[] sorted = new double[values.length];
            for (int i = 0; i < values.length; i++)
            {
                sorted[i] = Math.round(values[i] * 1000.0) / 1000.0;
            }
            Arrays.sort(sorted);
            double sum = 0;
            for (final double v : sorted)
            {
                sum += v;
            }
            final int n = sorted.length;
            return new Distribution(n, 0 == n ? Double.NaN : sum / n, nearestRank(sorted, 50), nearestRank(sorted, 90),
                nearestRank(sorted, 99), sorted, null);
        }

        /**
         * @return true when per-request values are known.
         */
        public boolean hasSamples()
        {
            return null != sortedMs;
        }

        /**
         * @param fraction 0..1.
         * @return the value at that fraction: nearest rank of the samples, or the report's CDF interpolated linearly
         *     between its pairs (NaN when the report has no CDF for this metric).
         */
        public double quantileMs(final double fraction)
        {
            if (null != sortedMs)
            {
                return 0 == sortedMs.length ? Double.NaN : nearestRank(sortedMs, fraction * 100);
            }
            if (null == cdfMs || 0 == cdfMs.length)
            {
                return Double.NaN;
            }
            for (int i = 0; i < cdfMs.length; i++)
            {
                if (cdfMs[i][1] >= fraction)
                {
                    if (0 == i || cdfMs[i][1] == cdfMs[i - 1][1])
                    {
                        return cdfMs[i][0];
                    }
                    final double share = (fraction - cdfMs[i - 1][1]) / (cdfMs[i][1] - cdfMs[i - 1][1]);
                    return cdfMs[i - 1][0] + share * (cdfMs[i][0] - cdfMs[i - 1][0]);
                }
            }
            return cdfMs[cdfMs.length - 1][0];
        }
    }

    /**
     * One request of a trace, for pairing (NaN where the record does not give the metric).
     *
     * @param id the record's {@code request_id}, or null.
     * @param arrivalMs its {@code arrival_ms}, or NaN.
     * @param valuesMs per {@link Metric} ordinal: TTFT, request mean gap per token, E2E, TPOT, queue.
     */
    public record RequestRow(String id, double arrivalMs, double[] valuesMs)
    {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String name;
    private final String kind;
    private final Map<Metric, Distribution> metrics;
    private final List<RequestRow> requests;
    private final List<String> notes;

    /**
     * @param name the file (or a description) it came from.
     * @param kind {@code trace}, {@code report}, or how it was made.
     * @param metrics the distributions it has (metrics without values left out).
     * @param requests per-request rows (empty for a report).
     * @param notes what was assumed while reading.
     */
    public LatencySide(final String name, final String kind, final Map<Metric, Distribution> metrics,
        final List<RequestRow> requests, final List<String> notes)
    {
        this.name = name;
        this.kind = kind;
        this.metrics = Collections.unmodifiableMap(new EnumMap<>(metrics));
        this.requests = List.copyOf(requests);
        this.notes = List.copyOf(notes);
    }

    /**
     * @return the file (or a description) it came from.
     */
    public String name()
    {
        return name;
    }

    /**
     * @return {@code trace}, {@code report}, or how it was made.
     */
    public String kind()
    {
        return kind;
    }

    /**
     * @return the distributions it has.
     */
    public Map<Metric, Distribution> metrics()
    {
        return metrics;
    }

    /**
     * @return per-request rows in file order (empty for a report).
     */
    public List<RequestRow> requests()
    {
        return requests;
    }

    /**
     * @return what was assumed while reading.
     */
    public List<String> notes()
    {
        return notes;
    }

    /**
     * Nearest-rank percentile, as vllm-vcr's calibrate: index {@code ceil(p / 100 * n) - 1}, clamped.
     *
     * @param sorted values in ascending order, at least one.
     * @param percentile 0..100.
     * @return the value.
     */
    public static double nearestRank(final double[] sorted, final double percentile)
    {
        if (0 == sorted.length)
        {
            return Double.NaN;
        }
        final int index = (int)Math.ceil(percentile / 100.0 * sorted.length - 1e-9) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    /**
     * Read a trace or a load report; which one is told by the content: a report is one JSON document whose first
     * line is {@code {} alone (as {@code tapedeck load} writes it) or carries a {@code schema}; anything else is read
     * as a trace.
     *
     * @param path the file (gzip or plain).
     * @return its side.
     * @throws IOException if it cannot be read, or (one line naming the file, and the line for a trace) if it is not a
     *     valid trace or load report.
     */
    public static LatencySide read(final Path path) throws IOException
    {
        if (!Files.isRegularFile(path))
        {
            throw new IOException(path + ": no such file");
        }
        if (isReport(path))
        {
            return ofReport(path.toString(), readReport(path));
        }
        final TraceReader.Trace trace = TraceReader.readAll(path);
        if (trace.records().isEmpty())
        {
            throw new IllegalArgumentException(path + ": the trace has no records");
        }
        final LatencySide side = ofTrace(path.toString(), trace.records());
        if (trace.warnings().isEmpty())
        {
            return side;
        }
        final List<String> notes = new ArrayList<>(trace.warnings());
        notes.addAll(side.notes());
        return new LatencySide(side.name, side.kind, side.metrics, side.requests, notes);
    }

    private static boolean isReport(final Path path) throws IOException
    {
        try (InputStream in = TraceFiles.openInput(path);
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)))
        {
            for (String line = reader.readLine(); null != line; line = reader.readLine())
            {
                final String text = line.strip();
                if (text.isEmpty())
                {
                    continue;
                }
                return "{".equals(text) || text.startsWith("{\"schema\"");
            }
            return false;
        }
    }

    private static JsonNode readReport(final Path path) throws IOException
    {
        final JsonNode root;
        try (InputStream in = TraceFiles.openInput(path))
        {
            root = JSON.readTree(in);
        }
        catch (final JsonProcessingException ex)
        {
            final JsonLocation location = ex.getLocation();
            final String line = null == location || location.getLineNr() < 1 ? "" : ":" + location.getLineNr();
            throw new IllegalArgumentException(path + line + ": not valid JSON: " +
                ex.getOriginalMessage().replace('\n', ' '), ex);
        }
        if (null == root || !root.path("schema").asText().startsWith("tapedeck-load-report/"))
        {
            throw new IllegalArgumentException(path + ": neither a trace nor a tapedeck load report (no schema " +
                LoadReport.SCHEMA + ")");
        }
        if (root.path("points").isEmpty())
        {
            throw new IllegalArgumentException(path + ": the load report has no points");
        }
        return root;
    }

    /**
     * @param name what the report is called in messages.
     * @param report a load report ({@value LoadReport#SCHEMA}); its first point is used.
     * @return its side: the summaries of {@code latency_ms} and the CDFs of {@code cdf_ms}.
     */
    public static LatencySide ofReport(final String name, final JsonNode report)
    {
        final JsonNode point = report.path("points").path(0);
        final Map<Metric, Distribution> metrics = new EnumMap<>(Metric.class);
        for (final Metric metric : Metric.values())
        {
            final JsonNode summary = point.path("latency_ms").path(metric.key());
            if (summary.path("count").asLong(0) <= 0)
            {
                continue;
            }
            final JsonNode pairs = point.path("cdf_ms").path(metric.key());
            final double[][] cdf = pairs.isArray() && !pairs.isEmpty() ? new double[pairs.size()][] : null;
            for (int i = 0; null != cdf && i < cdf.length; i++)
            {
                cdf[i] = new double[] {pairs.get(i).path(0).asDouble(Double.NaN), pairs.get(i).path(1).asDouble()};
            }
            metrics.put(metric, new Distribution(summary.path("count").asLong(), number(summary, "mean"),
                number(summary, "p50"), number(summary, "p90"), number(summary, "p99"), null, cdf));
        }
        final List<String> notes = new ArrayList<>();
        if (report.path("points").size() > 1)
        {
            notes.add(name + ": the report has " + report.path("points").size() + " points; the first ('" +
                point.path("label").asText() + "') is used");
        }
        return new LatencySide(name, "report", metrics, List.of(), notes);
    }

    private static double number(final JsonNode summary, final String field)
    {
        final JsonNode value = summary.path(field);
        return value.isNumber() ? value.asDouble() : Double.NaN;
    }

    /**
     * @param name what the trace is called in messages.
     * @param records its records, in file order.
     * @return its side with every per-request sample.
     */
    public static LatencySide ofTrace(final String name, final List<TraceRecord> records)
    {
        final Samples ttft = new Samples();
        final Samples itl = new Samples();
        final Samples e2e = new Samples();
        final Samples tpot = new Samples();
        final Samples queue = new Samples();
        final List<RequestRow> rows = new ArrayList<>(records.size());
        int derivedE2e = 0;
        int summaries = 0;
        for (final TraceRecord record : records)
        {
            summaries += null == record.itlMs() && null != record.itlSummary() ? 1 : 0;
            final double[] values = new double[Metric.values().length];
            Arrays.fill(values, Double.NaN);
            values[Metric.TTFT.ordinal()] = ttft.add(record.ttftMs());
            final double gapsMs = addGaps(record, itl, values);
            final double e2eMs = null == record.e2eMs() ? Double.NaN : record.e2eMs();
            if (Double.isNaN(e2eMs))
            {
                derivedE2e++;
            }
            values[Metric.E2E.ordinal()] = e2e.add(Double.isNaN(e2eMs) ? record.ttftMs() + gapsMs : e2eMs);
            if (record.outputTokens() > 1)
            {
                values[Metric.TPOT.ordinal()] = tpot.add((values[Metric.E2E.ordinal()] - record.ttftMs()) /
                    (record.outputTokens() - 1));
            }
            final double queueMs = extraNumber(record, "queue_ms");
            if (!Double.isNaN(queueMs))
            {
                values[Metric.QUEUE.ordinal()] = queue.add(queueMs);
            }
            final JsonNode id = record.extra().get("request_id");
            rows.add(new RequestRow(null != id && id.isValueNode() && !id.isNull() ? id.asText() : null,
                null == record.arrivalMs() ? Double.NaN : record.arrivalMs(), values));
        }
        final Map<Metric, Distribution> metrics = new EnumMap<>(Metric.class);
        final Samples[] all = {ttft, itl, e2e, tpot, queue};
        for (final Metric metric : Metric.values())
        {
            if (all[metric.ordinal()].size() > 0)
            {
                metrics.put(metric, Distribution.ofSamples(all[metric.ordinal()].toArray()));
            }
        }
        final List<String> notes = new ArrayList<>();
        if (derivedE2e > 0)
        {
            notes.add(String.format(Locale.ROOT, "%s: E2E is TTFT plus the token gaps for %d of %d records " +
                "(no e2e_ms)", name, derivedE2e, records.size()));
        }
        if (summaries > 0)
        {
            notes.add(String.format(Locale.ROOT, "%s: %d of %d records have only itl_summary (a mean per request): " +
                "their ITL samples are request means, so ITL percentiles are narrower than per-gap ones; TPOT " +
                "compares alike", name, summaries, records.size()));
        }
        return new LatencySide(name, "trace", metrics, rows, notes);
    }

    /**
     * Add the record's ITL samples per token and set its request-mean ITL.
     *
     * @return the sum of its gaps (ms).
     */
    private static double addGaps(final TraceRecord record, final Samples itl, final double[] values)
    {
        final double[] gaps = record.itlMs();
        double sum = 0;
        long tokens = 0;
        if (null != gaps)
        {
            final int[] chunkTokens = record.itlTokens();
            for (int i = 0; i < gaps.length; i++)
            {
                final int n = null == chunkTokens ? 1 : Math.max(1, chunkTokens[i]);
                for (int t = 0; t < n; t++)
                {
                    itl.add(gaps[i] / n);
                }
                sum += gaps[i];
                tokens += n;
            }
        }
        else if (null != record.itlSummary())
        {
            final TraceRecord.ItlSummary summary = record.itlSummary();
            for (long i = 0; i < summary.count(); i++)
            {
                itl.add(summary.meanMs());
            }
            sum = summary.meanMs() * summary.count();
            tokens = summary.count();
        }
        if (tokens > 0)
        {
            values[Metric.ITL.ordinal()] = sum / tokens;
        }
        return sum;
    }

    private static double extraNumber(final TraceRecord record, final String field)
    {
        final JsonNode value = record.extra().get(field);
        return null != value && value.isNumber() ? value.asDouble() : Double.NaN;
    }

    /**
     * A growable array of doubles.
     */
    private static final class Samples
    {
        private double[] values = new double[64];
        private int size;

        double add(final double value)
        {
            if (size == values.length)
            {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
            return value;
        }

        int size()
        {
            return size;
        }

        double[] toArray()
        {
            return Arrays.copyOf(values, size);
        }
    }
}
