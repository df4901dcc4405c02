package dev.tapedeck.load;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.load.LatencySide.Distribution;
import dev.tapedeck.load.LatencySide.Metric;
import dev.tapedeck.load.LatencySide.RequestRow;

/**
 * {@code tapedeck inspect calibrate}: how close a predicted run (PRED) is to a measured one (REAL), metric by metric
 * (TTFT, ITL, E2E, and TPOT and queue time when both sides have them), with vllm-vcr's quantile gates.
 * <ul>
 *   <li>Gate: the largest relative error over p50, p90 and p99, {@code |pred - real| / max(pred, real)} (vllm-vcr's
 *       {@code max_relative_error}; a pair of zeros is skipped), at most the metric's tolerance.</li>
 *   <li>KS distance (two-sample Kolmogorov-Smirnov statistic, the largest gap between the two empirical CDFs) when
 *       both sides have per-request samples, with the 5% critical value {@code 1.358 sqrt((n + m) / (n m))}.</li>
 *   <li>APE per request, {@code |pred - real| / real}, when requests can be paired: by {@code request_id} when every
 *       record of both traces has one, else by position in arrival order ({@code arrival_ms}, stable) when both
 *       traces have the same number of records, all with arrival times.</li>
 * </ul>
 * KS, APE and means are reported, not gated. Stateless; results are immutable.
 */
public final class Calibration
{
    /** Schema of the JSON result. */
    public static final String SCHEMA = "tapedeck-calibration/1";

    /** vllm-vcr's default tolerance for a model-level check (a latency model against its source trace). */
    public static final double MODEL_LEVEL_TOLERANCE = 0.10;

    /** vllm-vcr's default tolerance for an end-to-end comparison (a replayed or simulated run against a real one). */
    public static final double END_TO_END_TOLERANCE = 0.25;

    private static final double[] PERCENTILES = {50, 90, 99};
    private static final double KS_CRITICAL_005 = 1.358;
    private static final ObjectMapper JSON = new ObjectMapper();

    private Calibration()
    {
    }

    /**
     * How requests were paired.
     *
     * @param by {@code request_id}, {@code arrival_order} or {@code none}.
     * @param pred the paired predicted requests.
     * @param real the real request of each, in the same order.
     * @param note why there is no pairing, or empty.
     */
    public record Pairing(String by, List<RequestRow> pred, List<RequestRow> real, String note)
    {
    }

    /**
     * APE over the paired requests of one metric.
     *
     * @param pairs pairs with a value on both sides and a non-zero real value.
     * @param mean mean APE (a fraction).
     * @param median median APE (nearest rank).
     * @param p90 90th percentile APE.
     */
    public record Ape(int pairs, double mean, double median, double p90)
    {
    }

    /**
     * One metric compared.
     *
     * @param metric which.
     * @param pred the prediction's distribution.
     * @param real the measurement's.
     * @param tolerance the gate's largest relative error.
     * @param errors signed relative error {@code (pred - real) / max(pred, real)} of mean, p50, p90, p99.
     * @param maxError the largest absolute error over p50, p90, p99: what the gate checks.
     * @param ks KS distance, or NaN when a side has no samples.
     * @param ksCritical the 5% critical value for the sample sizes, or NaN.
     * @param ape per-request APE, or null when requests are not paired.
     */
    public record MetricResult(Metric metric, Distribution pred, Distribution real, double tolerance,
        double[] errors, double maxError, double ks, double ksCritical, Ape ape)
    {
        /**
         * @return true when the gate passes.
         */
        public boolean pass()
        {
            return !(maxError > tolerance + 1e-12);
        }
    }

    /**
     * The whole comparison.
     *
     * @param mode {@code two-file} or {@code knob-fit}.
     * @param pred the prediction.
     * @param real the measurement.
     * @param pairing how requests were paired.
     * @param metrics one result per metric both sides have.
     * @param skipped metrics only one side has, with why.
     */
    public record Result(String mode, LatencySide pred, LatencySide real, Pairing pairing, List<MetricResult> metrics,
        List<String> skipped)
    {
        /**
         * @return true when every gate passes.
         */
        public boolean pass()
        {
            return failures().isEmpty();
        }

        /**
         * @return one line per failed gate, naming the metric.
         */
        public List<String> failures()
        {
            final List<String> failures = new ArrayList<>();
            for (final MetricResult m : metrics)
            {
                if (!m.pass())
                {
                    failures.add(String.format(Locale.ROOT, "%s: largest p50/p90/p99 error %s > tolerance %s",
                        m.metric().label(), percent(m.maxError()), percent(m.tolerance())));
                }
            }
            return failures;
        }
    }

    /**
     * @param mode {@code two-file} or {@code knob-fit}.
     * @param pred the prediction.
     * @param real the measurement.
     * @param tolerance the gate of every metric without its own.
     * @param perMetric tolerances of single metrics.
     * @return the comparison.
     * @throws IllegalArgumentException if the two sides have no metric in common or a tolerance is not in (0, 1].
     */
    public static Result compare(final String mode, final LatencySide pred, final LatencySide real,
        final double tolerance, final Map<Metric, Double> perMetric)
    {
        return compare(mode, pred, real, tolerance, perMetric, pair(pred, real));
    }

    /**
     * @param mode {@code two-file} or {@code knob-fit}.
     * @param pred the prediction.
     * @param real the measurement.
     * @param tolerance the gate of every metric without its own.
     * @param perMetric tolerances of single metrics.
     * @param pairing how requests pair for APE (from {@link #pair}, or {@code none} with the reason).
     * @return the comparison.
     * @throws IllegalArgumentException if the two sides have no metric in common or a tolerance is not in (0, 1].
     */
    public static Result compare(final String mode, final LatencySide pred, final LatencySide real,
        final double tolerance, final Map<Metric, Double> perMetric, final Pairing pairing)
    {
        checkTolerance("tolerance", tolerance);
        perMetric.forEach((metric, value) -> checkTolerance("tolerance of " + metric.key(), value));
        final List<MetricResult> results = new ArrayList<>();
        final List<String> skipped = new ArrayList<>();
        for (final Metric metric : Metric.values())
        {
            final Distribution p = pred.metrics().get(metric);
            final Distribution r = real.metrics().get(metric);
            if (null == p && null == r)
            {
                continue;
            }
            if (null == p || null == r)
            {
                skipped.add(metric.key() + ": only in " + (null == p ? "REAL" : "PRED"));
                continue;
            }
            results.add(compareMetric(metric, p, r, perMetric.getOrDefault(metric, tolerance), pairing));
        }
        if (results.isEmpty())
        {
            throw new IllegalArgumentException(pred.name() + " and " + real.name() + " have no latency metric in " +
                "common");
        }
        return new Result(mode, pred, real, pairing, results, skipped);
    }

    private static void checkTolerance(final String name, final double value)
    {
        if (!(value > 0 && value <= 1))
        {
            throw new IllegalArgumentException(name + " must be in (0, 1] (a fraction: 0.1 is 10%), got " + value);
        }
    }

    private static MetricResult compareMetric(final Metric metric, final Distribution pred, final Distribution real,
        final double tolerance, final Pairing pairing)
    {
        final double[] errors = {
            signedError(pred.meanMs(), real.meanMs()),
            signedError(pred.p50Ms(), real.p50Ms()),
            signedError(pred.p90Ms(), real.p90Ms()),
            signedError(pred.p99Ms(), real.p99Ms())};
        double maxError = 0;
        for (int i = 1; i < errors.length; i++)
        {
            maxError = Double.isNaN(errors[i]) ? Double.POSITIVE_INFINITY : Math.max(maxError, Math.abs(errors[i]));
        }
        double ks = Double.NaN;
        double critical = Double.NaN;
        if (pred.hasSamples() && real.hasSamples())
        {
            ks = ksDistance(pred.sortedMs(), real.sortedMs());
            final double n = pred.sortedMs().length;
            final double m = real.sortedMs().length;
            critical = KS_CRITICAL_005 * Math.sqrt((n + m) / (n * m));
        }
        return new MetricResult(metric, pred, real, tolerance, errors, maxError, ks, critical, ape(metric, pairing));
    }

    /**
     * @param pred predicted value.
     * @param real measured value.
     * @return {@code (pred - real) / max(|pred|, |real|)}: 0 when both are 0, NaN when either is unknown.
     */
    public static double signedError(final double pred, final double real)
    {
        if (Double.isNaN(pred) || Double.isNaN(real))
        {
            return Double.NaN;
        }
        final double scale = Math.max(Math.abs(pred), Math.abs(real));
        return 0 == scale ? 0 : (pred - real) / scale;
    }

    /**
     * Two-sample Kolmogorov-Smirnov statistic: the largest absolute difference between the empirical CDFs, evaluated
     * after every distinct value of either sample.
     *
     * @param a one sample, ascending.
     * @param b the other, ascending.
     * @return {@code sup |F_a(x) - F_b(x)|}, 0..1; NaN if either is empty.
     */
    public static double ksDistance(final double[] a, final double[] b)
    {
        if (0 == a.length || 0 == b.length)
        {
            return Double.NaN;
        }
        int i = 0;
        int j = 0;
        double d = 0;
        while (i < a.length && j < b.length)
        {
            final double x = Math.min(a[i], b[j]);
            while (i < a.length && a[i] <= x)
            {
                i++;
            }
            while (j < b.length && b[j] <= x)
            {
                j++;
            }
            d = Math.max(d, Math.abs((double)i / a.length - (double)j / b.length));
        }
        return d;
    }

    /**
     * @param pred the prediction.
     * @param real the measurement.
     * @return the pairing of their requests, or {@code none} with the reason.
     */
    public static Pairing pair(final LatencySide pred, final LatencySide real)
    {
        if (pred.requests().isEmpty() || real.requests().isEmpty())
        {
            return new Pairing("none", List.of(), List.of(), "per-request values are needed on both sides (a load " +
                "report has none)");
        }
        if (allHaveIds(pred.requests()) && allHaveIds(real.requests()))
        {
            final Map<String, RequestRow> byId = new HashMap<>();
            for (final RequestRow row : real.requests())
            {
                byId.putIfAbsent(row.id(), row);
            }
            final List<RequestRow> p = new ArrayList<>();
            final List<RequestRow> r = new ArrayList<>();
            for (final RequestRow row : pred.requests())
            {
                final RequestRow match = byId.get(row.id());
                if (null != match)
                {
                    p.add(row);
                    r.add(match);
                }
            }
            return new Pairing("request_id", p, r, p.isEmpty() ? "no request_id is on both sides" : "");
        }
        if (pred.requests().size() != real.requests().size())
        {
            return new Pairing("none", List.of(), List.of(), "no request_id on every record, and the traces have " +
                "different numbers of records (" + pred.requests().size() + " and " + real.requests().size() + ")");
        }
        if (!allHaveArrivals(pred.requests()) || !allHaveArrivals(real.requests()))
        {
            return new Pairing("none", List.of(), List.of(), "no request_id on every record, and not every record " +
                "has arrival_ms");
        }
        return new Pairing("arrival_order", byArrival(pred.requests()), byArrival(real.requests()), "");
    }

    private static boolean allHaveIds(final List<RequestRow> rows)
    {
        return rows.stream().allMatch(row -> null != row.id());
    }

    private static boolean allHaveArrivals(final List<RequestRow> rows)
    {
        return rows.stream().allMatch(row -> !Double.isNaN(row.arrivalMs()));
    }

    private static List<RequestRow> byArrival(final List<RequestRow> rows)
    {
        final List<RequestRow> sorted = new ArrayList<>(rows);
        sorted.sort((a, b) -> Double.compare(a.arrivalMs(), b.arrivalMs()));
        return sorted;
    }

    private static Ape ape(final Metric metric, final Pairing pairing)
    {
        if (pairing.pred().isEmpty())
        {
            return null;
        }
        final double[] apes = new double[pairing.pred().size()];
        int n = 0;
        double sum = 0;
        for (int i = 0; i < apes.length; i++)
        {
            final double p = pairing.pred().get(i).valuesMs()[metric.ordinal()];
            final double r = pairing.real().get(i).valuesMs()[metric.ordinal()];
            if (Double.isNaN(p) || Double.isNaN(r) || 0 == r)
            {
                continue;
            }
            apes[n] = Math.abs(p - r) / Math.abs(r);
            sum += apes[n++];
        }
        if (0 == n)
        {
            return null;
        }
        final double[] sorted = Arrays.copyOf(apes, n);
        Arrays.sort(sorted);
        return new Ape(n, sum / n, LatencySide.nearestRank(sorted, 50), LatencySide.nearestRank(sorted, 90));
    }

    /**
     * @param result a comparison.
     * @return it as JSON ({@value #SCHEMA}).
     */
    public static ObjectNode toJson(final Result result)
    {
        final ObjectNode root = JSON.createObjectNode();
        root.put("schema", SCHEMA);
        root.put("mode", result.mode());
        side(root.putObject("pred"), result.pred());
        side(root.putObject("real"), result.real());
        final ObjectNode pairing = root.putObject("pairing");
        pairing.put("by", result.pairing().by());
        pairing.put("pairs", result.pairing().pred().size());
        if (!result.pairing().note().isEmpty())
        {
            pairing.put("note", result.pairing().note());
        }
        final ArrayNode metrics = root.putArray("metrics");
        for (final MetricResult m : result.metrics())
        {
            final ObjectNode node = metrics.addObject();
            node.put("metric", m.metric().key());
            node.put("tolerance", m.tolerance());
            node.put("pass", m.pass());
            put(node, "max_error", m.maxError());
            distribution(node.putObject("pred"), m.pred());
            distribution(node.putObject("real"), m.real());
            final ObjectNode errors = node.putObject("error");
            final String[] names = {"mean", "p50", "p90", "p99"};
            for (int i = 0; i < names.length; i++)
            {
                put(errors, names[i], m.errors()[i]);
            }
            if (Double.isNaN(m.ks()))
            {
                node.putNull("ks");
            }
            else
            {
                final ObjectNode ks = node.putObject("ks");
                put(ks, "d", m.ks());
                put(ks, "critical_005", m.ksCritical());
            }
            if (null == m.ape())
            {
                node.putNull("ape");
            }
            else
            {
                final ObjectNode ape = node.putObject("ape");
                ape.put("pairs", m.ape().pairs());
                put(ape, "mean", m.ape().mean());
                put(ape, "median", m.ape().median());
                put(ape, "p90", m.ape().p90());
            }
        }
        final ArrayNode skipped = root.putArray("skipped");
        result.skipped().forEach(skipped::add);
        root.put("pass", result.pass());
        final ArrayNode failures = root.putArray("failures");
        result.failures().forEach(failures::add);
        return root;
    }

    private static void side(final ObjectNode node, final LatencySide side)
    {
        node.put("file", side.name());
        node.put("kind", side.kind());
        node.put("requests", side.requests().size());
        final ArrayNode notes = node.putArray("notes");
        side.notes().forEach(notes::add);
    }

    private static void distribution(final ObjectNode node, final Distribution d)
    {
        node.put("count", d.count());
        put(node, "mean", d.meanMs());
        put(node, "p50", d.p50Ms());
        put(node, "p90", d.p90Ms());
        put(node, "p99", d.p99Ms());
    }

    private static void put(final ObjectNode node, final String field, final double value)
    {
        if (Double.isFinite(value))
        {
            node.put(field, Math.round(value * 1e6) / 1e6);
        }
        else
        {
            node.putNull(field);
        }
    }

    /**
     * @param result a comparison.
     * @return the table: per metric its count, mean and p50/p90/p99 with their relative error and gate, KS and APE;
     *     then skipped metrics, the pairing, notes and the verdict, which names every failed metric.
     */
    public static String table(final Result result)
    {
        final StringBuilder out = new StringBuilder(4096);
        out.append("PRED: ").append(describe(result.pred())).append('\n');
        out.append("REAL: ").append(describe(result.real())).append('\n');
        row(out, String.format(Locale.ROOT, "%-7s %-11s %12s %12s %9s %7s  %s", "metric", "stat", "pred ms",
            "real ms", "rel err", "tol", "gate"));
        final String[] stats = {"mean", "p50", "p90", "p99"};
        for (final MetricResult m : result.metrics())
        {
            final String name = m.metric().label();
            row(out, String.format(Locale.ROOT, "%-7s %-11s %12d %12d", name, "count", m.pred().count(),
                m.real().count()));
            final double[] pred = {m.pred().meanMs(), m.pred().p50Ms(), m.pred().p90Ms(), m.pred().p99Ms()};
            final double[] real = {m.real().meanMs(), m.real().p50Ms(), m.real().p90Ms(), m.real().p99Ms()};
            for (int i = 0; i < stats.length; i++)
            {
                final boolean gated = i > 0;
                final boolean ok = !(Math.abs(m.errors()[i]) > m.tolerance() + 1e-12) && !Double.isNaN(m.errors()[i]);
                row(out, String.format(Locale.ROOT, "%-7s %-11s %12s %12s %9s %7s  %s", name, stats[i],
                    ms(pred[i]), ms(real[i]), signedPercent(m.errors()[i]), gated ? percent(m.tolerance()) : "",
                    gated ? (ok ? "pass" : "FAIL") : ""));
            }
            if (!Double.isNaN(m.ks()))
            {
                row(out, String.format(Locale.ROOT, "%-7s %-11s %12s %12s %9.3f %7s  (5%% critical value %.3f)",
                    name, "KS D", "", "", m.ks(), "", m.ksCritical()));
            }
            if (null != m.ape())
            {
                row(out, String.format(Locale.ROOT, "%-7s %-11s %12s %12s %9s %7s  (mean %s, p90 %s, %d pairs)",
                    name, "APE median", "", "", percent(m.ape().median()), "", percent(m.ape().mean()),
                    percent(m.ape().p90()), m.ape().pairs()));
            }
        }
        for (final String skipped : result.skipped())
        {
            out.append("not compared: ").append(skipped).append('\n');
        }
        final Pairing pairing = result.pairing();
        out.append("pairing: ").append("none".equals(pairing.by()) ? "none (" + pairing.note() + ")" :
            "by " + pairing.by() + ", " + pairing.pred().size() + " pairs").append('\n');
        for (final String note : notes(result))
        {
            out.append("note: ").append(note).append('\n');
        }
        if (result.pass())
        {
            out.append("result: PASS (every metric's p50/p90/p99 within its tolerance)\n");
        }
        else
        {
            out.append("result: FAIL: ").append(String.join("; ", result.failures())).append('\n');
        }
        return out.toString();
    }

    private static void row(final StringBuilder out, final String line)
    {
        out.append(line.stripTrailing()).append('\n');
    }

    /**
     * @param result a comparison.
     * @return the notes of both sides, each once.
     */
    static List<String> notes(final Result result)
    {
        final Set<String> notes = new LinkedHashSet<>(result.pred().notes());
        notes.addAll(result.real().notes());
        return List.copyOf(notes);
    }

    private static String describe(final LatencySide side)
    {
        return side.name() + " (" + side.kind() + (side.requests().isEmpty() ? "" : ", " + side.requests().size() +
            " requests") + ")";
    }

    private static String ms(final double value)
    {
        return Double.isFinite(value) ? String.format(Locale.ROOT, "%.2f", value) : "-";
    }

    /**
     * @param fraction a signed relative error.
     * @return it in percent with its sign and one decimal ({@code +12.5%}, {@code +0.0%} for anything that rounds to
     *     zero); {@code -} when unknown.
     */
    static String signedPercent(final double fraction)
    {
        if (!Double.isFinite(fraction))
        {
            return "-";
        }
        final double tenths = Math.round(fraction * 1000.0) / 10.0;
        return String.format(Locale.ROOT, "%+.1f%%", 0 == tenths ? 0.0 : tenths);
    }

    /**
     * @param fraction a relative error.
     * @return it in percent with one decimal ({@code 12.5%}); {@code -} when unknown.
     */
    static String percent(final double fraction)
    {
        return Double.isFinite(fraction) ? String.format(Locale.ROOT, "%.1f%%", 100 * fraction) : "-";
    }

    /**
     * @param tolerances {@code metric -> fraction} as given on the command line.
     * @return them by metric.
     * @throws IllegalArgumentException for an unknown metric.
     */
    public static Map<Metric, Double> tolerances(final Map<String, Double> tolerances)
    {
        final Map<Metric, Double> map = new EnumMap<>(Metric.class);
        tolerances.forEach((key, value) -> map.put(Metric.of(key), value));
        return map;
    }
}
