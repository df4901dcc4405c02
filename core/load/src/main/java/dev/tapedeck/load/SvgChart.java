package dev.tapedeck.load;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One static chart of the HTML report as an inline SVG inside a {@code <figure>} with its caption and an HTML legend:
 * a linear (from 0) or log-scale axis each way with grid, tick labels and a title, line series (a NaN leaves a gap),
 * labelled markers and dashed reference rules (SLOs, percentiles). The domain covers the data and the rules; a log
 * axis spans whole decades and draws values at or below zero at its lower end. Nothing is fetched or scripted; every
 * text is escaped. Build and render on one thread.
 */
final class SvgChart
{
    /**
     * Okabe and Ito's colours, which stay apart under the common colour-vision deficiencies (their yellow is left out:
     * too faint on white). More series than colours cycle through dash patterns.
     */
    static final String[] PALETTE = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

    private static final String[] DASH_SVG = {"", "7 4", "2 3"};
    private static final String[] DASH_CSS = {"solid", "dashed", "dotted"};
    private static final int WIDTH = 640;
    private static final int HEIGHT = 260;
    private static final int LEFT = 58;
    private static final int RIGHT = 16;
    private static final int TOP = 12;
    private static final int BOTTOM = 42;

    /**
     * How a series is drawn.
     *
     * @param colour CSS colour.
     * @param dash index into the dash patterns (0 solid, 1 dashed, 2 dotted).
     */
    record Style(String colour, int dash)
    {
        /**
         * @param index the series' position.
         * @return its colour from the palette, then its dash pattern once the colours are used up.
         */
        static Style of(final int index)
        {
            return new Style(PALETTE[index % PALETTE.length], (index / PALETTE.length) % DASH_SVG.length);
        }
    }

    private record Line(String name, Style style, double[] x, double[] y)
    {
    }

    private record Marker(double x, double y, String label, String tooltip, boolean highlighted)
    {
    }

    private record Rule(boolean vertical, double value, String label)
    {
    }

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final List<Line> lines = new ArrayList<>();
    private final List<Marker> markers = new ArrayList<>();
    private final List<Rule> rules = new ArrayList<>();
    private boolean xLog;
    private boolean yLog;
    private double yMax = Double.NaN;
    private String caption = "";
    private String markerLegend = "";

    /**
     * @param title the figure's caption.
     * @param xLabel the x axis title, with its unit.
     * @param yLabel the y axis title, with its unit.
     */
    SvgChart(final String title, final String xLabel, final String yLabel)
    {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    SvgChart xLog(final boolean log)
    {
        this.xLog = log;
        return this;
    }

    SvgChart yLog(final boolean log)
    {
        this.yLog = log;
        return this;
    }

    /**
     * @param max a fixed upper end of the y axis (1 for a CDF, 100 for a percentage).
     * @return this.
     */
    SvgChart yMax(final double max)
    {
        this.yMax = max;
        return this;
    }

    SvgChart caption(final String text)
    {
        this.caption = text;
        return this;
    }

    SvgChart line(final String name, final Style style, final double[] x, final double[] y)
    {
        lines.add(new Line(name, style, x, y));
        return this;
    }

    SvgChart marker(final double x, final double y, final String label, final String tooltip,
        final boolean highlighted)
    {
        markers.add(new Marker(x, y, label, tooltip, highlighted));
        return this;
    }

    /**
     * @param text what the filled and hollow markers mean, shown in the legend.
     * @return this.
     */
    SvgChart markerLegend(final String text)
    {
        this.markerLegend = text;
        return this;
    }

    SvgChart rule(final boolean vertical, final double value, final String label)
    {
        if (Double.isFinite(value) && value > 0)
        {
            rules.add(new Rule(vertical, value, label));
        }
        return this;
    }

    /**
     * @return the {@code <figure>}: caption, the SVG (in a box that scrolls sideways on narrow screens), legend.
     */
    String figure()
    {
        final StringBuilder out = new StringBuilder(8192);
        out.append("<figure><figcaption>").append(HtmlEscape.escape(title));
        if (!caption.isEmpty())
        {
            out.append(" <small>").append(HtmlEscape.escape(caption)).append("</small>");
        }
        out.append("</figcaption>\n<div class=\"plot\">");
        svg(out);
        out.append("</div>\n");
        legend(out);
        return out.append("</figure>\n").toString();
    }

    private void svg(final StringBuilder out)
    {
        final Axis x = axis(true, xLog, Double.NaN, LEFT, WIDTH - RIGHT);
        final Axis y = axis(false, yLog, yMax, HEIGHT - BOTTOM, TOP);
        out.append("<svg class=\"chart\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
            .append("\" role=\"img\" aria-label=\"").append(HtmlEscape.escape(title)).append("\"><title>")
            .append(HtmlEscape.escape(title)).append("</title>\n<g class=\"grid\">");
        for (final double tick : x.ticks)
        {
            final String px = fmt(x.px(tick));
            out.append("<line x1=\"").append(px).append("\" x2=\"").append(px).append("\" y1=\"").append(TOP)
                .append("\" y2=\"").append(HEIGHT - BOTTOM).append("\"/>");
        }
        for (final double tick : y.ticks)
        {
            final String py = fmt(y.px(tick));
            out.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - RIGHT).append("\" y1=\"")
                .append(py).append("\" y2=\"").append(py).append("\"/>");
        }
        out.append("</g>\n<g class=\"ticks\">");
        for (final double tick : x.ticks)
        {
            text(out, x.px(tick), HEIGHT - BOTTOM + 15, "middle", number(tick), null);
        }
        for (final double tick : y.ticks)
        {
            text(out, LEFT - 6, y.px(tick) + 4, "end", number(tick), null);
        }
        out.append("</g>\n<path class=\"axis\" d=\"M").append(LEFT).append(' ').append(TOP).append('V')
            .append(HEIGHT - BOTTOM).append('H').append(WIDTH - RIGHT).append("\"/>\n");
        text(out, LEFT + (WIDTH - LEFT - RIGHT) / 2.0, HEIGHT - 6, "middle", xLabel, "label");
        out.append("<text class=\"label\" text-anchor=\"middle\" transform=\"translate(14 ")
            .append(fmt(TOP + (HEIGHT - TOP - BOTTOM) / 2.0)).append(") rotate(-90)\">")
            .append(HtmlEscape.escape(yLabel)).append("</text>\n");
        rules(out, x, y);
        boolean drawn = false;
        for (final Line line : lines)
        {
            drawn |= path(out, line, x, y);
        }
        for (final Marker marker : markers)
        {
            drawn |= marker(out, marker, x, y);
        }
        if (!drawn)
        {
            text(out, LEFT + (WIDTH - LEFT - RIGHT) / 2.0, TOP + (HEIGHT - TOP - BOTTOM) / 2.0, "middle", "no data",
                "label");
        }
        out.append("</svg>");
    }

    private void rules(final StringBuilder out, final Axis x, final Axis y)
    {
        for (final Rule rule : rules)
        {
            if (rule.vertical())
            {
                final double px = x.px(rule.value());
                out.append("<path class=\"rule\" d=\"M").append(fmt(px)).append(' ').append(TOP).append('V')
                    .append(HEIGHT - BOTTOM).append("\"/>");
                final boolean left = px - LEFT > 110;
                text(out, left ? px - 3 : px + 3, TOP + 10, left ? "end" : "start", rule.label(), "rl");
            }
            else
            {
                final double py = y.px(rule.value());
                out.append("<path class=\"rule\" d=\"M").append(LEFT).append(' ').append(fmt(py)).append('H')
                    .append(WIDTH - RIGHT).append("\"/>");
                text(out, WIDTH - RIGHT - 3, py - 3, "end", rule.label(), "rl");
            }
            out.append('\n');
        }
    }

    private static boolean path(final StringBuilder out, final Line line, final Axis x, final Axis y)
    {
        final StringBuilder d = new StringBuilder(line.x().length * 12);
        boolean penDown = false;
        for (int i = 0; i < line.x().length; i++)
        {
            final double vx = line.x()[i];
            final double vy = line.y()[i];
            if (Double.isNaN(vx) || Double.isNaN(vy))
            {
                penDown = false;
                continue;
            }
            d.append(penDown ? 'L' : 'M').append(fmt(x.px(vx))).append(' ').append(fmt(y.px(vy)));
            penDown = true;
        }
        if (0 == d.length())
        {
            return false;
        }
        out.append("<path class=\"s\" stroke=\"").append(line.style().colour()).append('"');
        if (0 != line.style().dash())
        {
            out.append(" stroke-dasharray=\"").append(DASH_SVG[line.style().dash()]).append('"');
        }
        out.append(" d=\"").append(d).append("\"><title>").append(HtmlEscape.escape(line.name()))
            .append("</title></path>\n");
        return true;
    }

    private static boolean marker(final StringBuilder out, final Marker marker, final Axis x, final Axis y)
    {
        if (!Double.isFinite(marker.x()) || !Double.isFinite(marker.y()))
        {
            return false;
        }
        final double px = x.px(marker.x());
        final double py = y.px(marker.y());
        out.append("<circle class=\"").append(marker.highlighted() ? "mk on" : "mk").append("\" cx=\"").append(fmt(px))
            .append("\" cy=\"").append(fmt(py)).append("\" r=\"4.5\"><title>").append(HtmlEscape.escape(
                marker.tooltip())).append("</title></circle>");
        final boolean right = px < WIDTH - RIGHT - 100;
        final double labelY = py < TOP + 14 ? py + 15 : py - 7;
        text(out, right ? px + 7 : px - 7, labelY, right ? "start" : "end", marker.label(), "ml");
        out.append('\n');
        return true;
    }

    private void legend(final StringBuilder out)
    {
        if (lines.isEmpty() && markerLegend.isEmpty())
        {
            return;
        }
        out.append("<ul class=\"legend\">");
        for (final Line line : lines)
        {
            out.append("<li><span class=\"sw\" style=\"border-top-color:").append(line.style().colour())
                .append(";border-top-style:").append(DASH_CSS[line.style().dash()]).append("\"></span>")
                .append(HtmlEscape.escape(line.name())).append("</li>");
        }
        if (!markerLegend.isEmpty())
        {
            out.append("<li>").append(HtmlEscape.escape(markerLegend)).append("</li>");
        }
        out.append("</ul>\n");
    }

    private static void text(final StringBuilder out, final double x, final double y, final String anchor,
        final String text, final String cssClass)
    {
        out.append("<text x=\"").append(fmt(x)).append("\" y=\"").append(fmt(y)).append('"');
        if (!"start".equals(anchor))
        {
            out.append(" text-anchor=\"").append(anchor).append('"');
        }
        if (null != cssClass)
        {
            out.append(" class=\"").append(cssClass).append('"');
        }
        out.append('>').append(HtmlEscape.escape(text)).append("</text>");
    }

    private Axis axis(final boolean horizontal, final boolean log, final double fixedMax, final double pixelLow,
        final double pixelHigh)
    {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (final Line line : lines)
        {
            for (final double v : horizontal ? line.x() : line.y())
            {
                if (Double.isFinite(v) && (!log || v > 0))
                {
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
            }
        }
        for (final Marker marker : markers)
        {
            final double v = horizontal ? marker.x() : marker.y();
            if (Double.isFinite(v) && (!log || v > 0))
            {
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }
        for (final Rule rule : rules)
        {
            if (rule.vertical() == horizontal)
            {
                min = Math.min(min, rule.value());
                max = Math.max(max, rule.value());
            }
        }
        if (!Double.isNaN(fixedMax))
        {
            max = fixedMax;
        }
        return log ? Axis.log(min, max, pixelLow, pixelHigh) : Axis.linear(max, pixelLow, pixelHigh);
    }

    /**
     * @param value a tick value.
     * @return it compactly: {@code 0.25}, {@code 40}, {@code 2.5k}, {@code 1M}.
     */
    static String number(final double value)
    {
        final double magnitude = Math.abs(value);
        if (magnitude >= 1e6)
        {
            return plain(value / 1e6) + "M";
        }
        if (magnitude >= 1e4 || (magnitude >= 1e3 && 0 == value % 100))
        {
            return plain(value / 1e3) + "k";
        }
        return plain(value);
    }

    private static String plain(final double value)
    {
        if (0 != value && Math.abs(value) < 0.001)
        {
            return new BigDecimal(value).round(new MathContext(3)).stripTrailingZeros().toPlainString();
        }
        final double rounded = Math.round(value * 1000) / 1000.0;
        if (0 == rounded)
        {
            return "0";
        }
        return BigDecimal.valueOf(rounded).stripTrailingZeros().toPlainString();
    }

    private static String fmt(final double pixels)
    {
        final long tenths = Math.round(pixels * 10);
        return 0 == tenths % 10 ? Long.toString(tenths / 10) : String.format(Locale.ROOT, "%.1f", tenths / 10.0);
    }

    /**
     * An axis: its domain, ticks and the mapping to pixels.
     */
    private static final class Axis
    {
        private final boolean log;
        private final double low;
        private final double high;
        private final double pixelLow;
        private final double pixelHigh;
        private final List<Double> ticks = new ArrayList<>();

        private Axis(final boolean log, final double low, final double high, final double pixelLow,
            final double pixelHigh)
        {
            this.log = log;
            this.low = low;
            this.high = high;
            this.pixelLow = pixelLow;
            this.pixelHigh = pixelHigh;
        }

        static Axis linear(final double max, final double pixelLow, final double pixelHigh)
        {
            final double top = max > 0 && Double.isFinite(max) ? max : 1;
            final double step = niceStep(top / 5);
            final double high = Math.ceil(top / step - 1e-9) * step;
            final Axis axis = new Axis(false, 0, high, pixelLow, pixelHigh);
            for (int i = 0; i * step <= high * (1 + 1e-9); i++)
            {
                axis.ticks.add(i * step);
            }
            return axis;
        }

        static Axis log(final double min, final double max, final double pixelLow, final double pixelHigh)
        {
            final boolean empty = !(min > 0) || !Double.isFinite(max);
            final int lowDecade = empty ? 0 : (int)Math.floor(Math.log10(min) + 1e-9);
            int highDecade = empty ? 1 : (int)Math.ceil(Math.log10(max) - 1e-9);
            if (highDecade <= lowDecade)
            {
                highDecade = lowDecade + 1;
            }
            final Axis axis = new Axis(true, Math.pow(10, lowDecade), Math.pow(10, highDecade), pixelLow, pixelHigh);
            final int decades = highDecade - lowDecade;
            final int every = (decades + 6) / 7;
            for (int d = lowDecade; d <= highDecade; d += every)
            {
                axis.ticks.add(Math.pow(10, d));
                if (decades <= 2 && d < highDecade)
                {
                    axis.ticks.add(2 * Math.pow(10, d));
                    axis.ticks.add(5 * Math.pow(10, d));
                }
            }
            return axis;
        }

        private static double niceStep(final double raw)
        {
            final double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
            final double fraction = raw / magnitude;
            final double nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
            return nice * magnitude;
        }

        double px(final double value)
        {
            double fraction;
            if (log)
            {
                fraction = (Math.log10(Math.max(value, low)) - Math.log10(low)) / (Math.log10(high) - Math.log10(low));
            }
            else
            {
                fraction = (value - low) / (high - low);
            }
            fraction = Math.max(0, Math.min(1, fraction));
            return pixelLow + fraction * (pixelHigh - pixelLow);
        }
    }
}
