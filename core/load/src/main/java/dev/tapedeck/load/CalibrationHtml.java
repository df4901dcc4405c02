package dev.tapedeck.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.tapedeck.load.Calibration.MetricResult;
import dev.tapedeck.load.Calibration.Result;
import dev.tapedeck.load.LatencySide.Distribution;
import dev.tapedeck.load.LatencySide.Metric;

/**
 * The HTML page of {@code tapedeck inspect calibrate}: the verdict, the comparison table, and for TTFT, ITL and E2E a
 * survival curve (share of values above each latency, both axes log scale) of PRED and REAL and a Q-Q plot (PRED's
 * quantiles against REAL's, with the line of equality and the tolerance band). Drawn with the load report's chart
 * code ({@link SvgChart}) and style sheet; self-contained (no script, no network), every text escaped. Stateless;
 * any thread.
 */
public final class CalibrationHtml
{
    private static final Metric[] CHARTED = {Metric.TTFT, Metric.ITL, Metric.E2E};
    private static final SvgChart.Style PRED = SvgChart.Style.of(1);
    private static final SvgChart.Style REAL = SvgChart.Style.of(0);
    private static final SvgChart.Style EQUAL = new SvgChart.Style("#000000", 1);
    private static final SvgChart.Style BAND = new SvgChart.Style("#888888", 2);

    private CalibrationHtml()
    {
    }

    /**
     * @param result a comparison.
     * @param path where to write the page (parent directories are created).
     * @throws IOException if writing fails.
     */
    public static void write(final Result result, final Path path) throws IOException
    {
        final Path parent = path.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        Files.writeString(path, render(result), StandardCharsets.UTF_8);
    }

    /**
     * @param result a comparison.
     * @return the whole page.
     */
    public static String render(final Result result)
    {
        final StringBuilder out = new StringBuilder(65536);
        out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
            .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>")
            .append(esc("tapedeck calibrate: " + result.pred().name() + " vs " + result.real().name()))
            .append("</title>\n<style>\n").append(HtmlReport.STYLE)
            .append("\n.pass{color:#00734d;font-weight:600}.fail{color:#b3261e;font-weight:600}\n</style>\n")
            .append("</head>\n<body>\n<h1>tapedeck calibration</h1>\n<dl class=\"meta\">\n");
        item(out, "PRED", result.pred().name() + " (" + result.pred().kind() + ")");
        item(out, "REAL", result.real().name() + " (" + result.real().kind() + ")");
        item(out, "mode", result.mode());
        item(out, "pairing", "none".equals(result.pairing().by()) ? "none: " + result.pairing().note() :
            "by " + result.pairing().by() + ", " + result.pairing().pred().size() + " pairs");
        out.append("<dt>result</dt><dd>").append(result.pass() ? "<span class=\"pass\">PASS</span>" :
            "<span class=\"fail\">FAIL</span> " + esc(String.join("; ", result.failures()))).append("</dd>\n");
        out.append("</dl>\n");
        table(result, out);
        notes(result, out);
        out.append("<h2 id=\"charts\">Distributions</h2>\n<div class=\"figs\">\n");
        for (final Metric metric : CHARTED)
        {
            for (final MetricResult m : result.metrics())
            {
                if (m.metric() == metric)
                {
                    out.append(survival(m)).append(qq(m));
                }
            }
        }
        out.append("</div>\n<footer>Written by tapedeck from a ").append(esc(Calibration.SCHEMA))
            .append(" comparison. Self-contained: no scripts, no network.</footer>\n</body>\n</html>\n");
        return out.toString();
    }

    private static void table(final Result result, final StringBuilder out)
    {
        out.append("<h2 id=\"gates\">Gates</h2>\n<div class=\"plot\"><table>\n<thead><tr><th>metric</th>")
            .append("<th>stat</th><th class=\"n\">PRED ms</th><th class=\"n\">REAL ms</th>")
            .append("<th class=\"n\">rel. error</th><th class=\"n\">tolerance</th><th>gate</th></tr></thead>\n")
            .append("<tbody>\n");
        final String[] stats = {"mean", "p50", "p90", "p99"};
        for (final MetricResult m : result.metrics())
        {
            final double[] pred = {m.pred().meanMs(), m.pred().p50Ms(), m.pred().p90Ms(), m.pred().p99Ms()};
            final double[] real = {m.real().meanMs(), m.real().p50Ms(), m.real().p90Ms(), m.real().p99Ms()};
            for (int i = 0; i < stats.length; i++)
            {
                final boolean ok = !(Math.abs(m.errors()[i]) > m.tolerance() + 1e-12) && !Double.isNaN(m.errors()[i]);
                out.append("<tr><td>").append(esc(m.metric().label())).append("</td><td>").append(stats[i])
                    .append("</td>");
                cell(out, ms(pred[i]));
                cell(out, ms(real[i]));
                cell(out, Calibration.signedPercent(m.errors()[i]));
                cell(out, 0 == i ? "" : Calibration.percent(m.tolerance()));
                out.append("<td>").append(0 == i ? "" : ok ? "<span class=\"pass\">pass</span>" :
                    "<span class=\"fail\">FAIL</span>").append("</td></tr>\n");
            }
            final StringBuilder extra = new StringBuilder();
            extra.append("count ").append(m.pred().count()).append(" / ").append(m.real().count());
            if (!Double.isNaN(m.ks()))
            {
                extra.append(String.format(Locale.ROOT, "; KS D %.3f (5%% critical value %.3f)", m.ks(),
                    m.ksCritical()));
            }
            if (null != m.ape())
            {
                extra.append("; APE median ").append(Calibration.percent(m.ape().median())).append(", mean ")
                    .append(Calibration.percent(m.ape().mean())).append(", p90 ")
                    .append(Calibration.percent(m.ape().p90())).append(" (").append(m.ape().pairs())
                    .append(" pairs)");
            }
            out.append("<tr><td>").append(esc(m.metric().label())).append("</td><td colspan=\"6\" class=\"muted\">")
                .append(esc(extra.toString())).append("</td></tr>\n");
        }
        out.append("</tbody></table></div>\n<p class=\"muted\">Relative error is (PRED - REAL) / max(PRED, REAL); a ")
            .append("metric's gate passes when the error of each of p50, p90 and p99 is within its tolerance. KS is ")
            .append("the largest distance between the two empirical CDFs (both sides need per-request samples); APE ")
            .append("is |PRED - REAL| / REAL per paired request. KS, APE and means are reported, not gated.</p>\n");
    }

    private static void notes(final Result result, final StringBuilder out)
    {
        final List<String> notes = new ArrayList<>();
        result.skipped().forEach(skipped -> notes.add("not compared: " + skipped));
        notes.addAll(Calibration.notes(result));
        if (notes.isEmpty())
        {
            return;
        }
        out.append("<h2 id=\"notes\">Notes</h2>\n<ul>\n");
        for (final String note : notes)
        {
            out.append("<li>").append(esc(note)).append("</li>\n");
        }
        out.append("</ul>\n");
    }

    /**
     * @return the fractions at which curves are drawn: 0.01 ... 0.99, then 0.995, 0.999, 0.9999.
     */
    static double[] fractions()
    {
        final double[] fractions = new double[102];
        for (int i = 0; i < 99; i++)
        {
            fractions[i] = (i + 1) / 100.0;
        }
        fractions[99] = 0.995;
        fractions[100] = 0.999;
        fractions[101] = 0.9999;
        return fractions;
    }

    private static double[] quantiles(final Distribution distribution, final double[] fractions)
    {
        final double[] values = new double[fractions.length];
        for (int i = 0; i < fractions.length; i++)
        {
            values[i] = distribution.quantileMs(fractions[i]);
        }
        return values;
    }

    private static String survival(final MetricResult m)
    {
        final double[] fractions = fractions();
        final double[] above = new double[fractions.length];
        for (int i = 0; i < fractions.length; i++)
        {
            above[i] = 1 - fractions[i];
        }
        final String name = m.metric().label();
        return new SvgChart(name + " survival", name + " (ms, log scale)", "share above (log scale)")
            .xLog(true).yLog(true)
            .caption("share of values above each latency; the tail is at the bottom right")
            .rule(false, 0.5, "p50").rule(false, 0.1, "p90").rule(false, 0.01, "p99")
            .line("REAL", REAL, quantiles(m.real(), fractions), above)
            .line("PRED", PRED, quantiles(m.pred(), fractions), above)
            .figure();
    }

    private static String qq(final MetricResult m)
    {
        final double[] fractions = fractions();
        final double[] real = quantiles(m.real(), fractions);
        final double[] pred = quantiles(m.pred(), fractions);
        double low = Double.POSITIVE_INFINITY;
        double high = 0;
        for (int i = 0; i < fractions.length; i++)
        {
            for (final double v : new double[] {real[i], pred[i]})
            {
                if (Double.isFinite(v) && v > 0)
                {
                    low = Math.min(low, v);
                    high = Math.max(high, v);
                }
            }
        }
        final String name = m.metric().label();
        final SvgChart chart = new SvgChart(name + " Q-Q", "REAL " + name + " quantile (ms, log scale)",
            "PRED " + name + " quantile (ms, log scale)").xLog(true).yLog(true)
            .caption("PRED's quantiles against REAL's at the same shares; on the diagonal they agree")
            .markerLegend("markers: p50, p90, p99 (filled: within tolerance)");
        if (high > 0)
        {
            final double[] ends = {low, high};
            final double keep = 1 - m.tolerance();
            // the band's edges, PRED = REAL x keep and PRED = REAL / keep, inside the data's square (NaN: a gap)
            chart.line("PRED = REAL", EQUAL, ends, ends)
                .line("tolerance band (" + Calibration.percent(m.tolerance()) + ")", BAND,
                    new double[] {low / keep, high, Double.NaN, low, high * keep},
                    new double[] {low, high * keep, Double.NaN, low / keep, high});
        }
        chart.line("quantiles", PRED, real, pred);
        final double[] realMarks = {m.real().p50Ms(), m.real().p90Ms(), m.real().p99Ms()};
        final double[] predMarks = {m.pred().p50Ms(), m.pred().p90Ms(), m.pred().p99Ms()};
        final String[] labels = {"p50", "p90", "p99"};
        for (int i = 0; i < labels.length; i++)
        {
            final double error = m.errors()[i + 1];
            chart.marker(realMarks[i], predMarks[i], labels[i], String.format(Locale.ROOT,
                "%s %s: PRED %s ms, REAL %s ms, error %s", name, labels[i], ms(predMarks[i]), ms(realMarks[i]),
                Calibration.percent(error)), !(Math.abs(error) > m.tolerance() + 1e-12));
        }
        return chart.figure();
    }

    private static void item(final StringBuilder out, final String name, final String value)
    {
        out.append("<dt>").append(esc(name)).append("</dt><dd>").append(esc(value)).append("</dd>\n");
    }

    private static void cell(final StringBuilder out, final String text)
    {
        out.append("<td class=\"n\">").append(esc(text)).append("</td>");
    }

    private static String ms(final double value)
    {
        return Double.isFinite(value) ? String.format(Locale.ROOT, "%.2f", value) : "-";
    }

    private static String esc(final String text)
    {
        return HtmlEscape.escape(text);
    }
}
