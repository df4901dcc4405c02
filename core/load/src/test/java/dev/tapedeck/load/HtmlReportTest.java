package dev.tapedeck.load;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTML report on reports built by {@link LoadReport#build}: it parses as XML, has one SVG per chart, labels the
 * Pareto chart, escapes every text from the report, references nothing outside the page and stays small.
 */
class HtmlReportTest
{
    private static final Pattern EXTERNAL = Pattern.compile("(?i)(src|href|xlink:href)\\s*=\\s*[\"']?\\s*" +
        "(https?:|//|file:|data:)");

    @TempDir
    Path dir;

    private static Document parse(final String html) throws Exception
    {
        final DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        factory.setExpandEntityReferences(false);
        final DocumentBuilder builder = factory.newDocumentBuilder();
        return builder.parse(new InputSource(new StringReader(html)));
    }

    private static List<Element> elements(final Document document, final String tag)
    {
        final NodeList nodes = document.getElementsByTagName(tag);
        final List<Element> list = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++)
        {
            list.add((Element)nodes.item(i));
        }
        return list;
    }

    private static Element chart(final Document document, final String title)
    {
        for (final Element svg : elements(document, "svg"))
        {
            if (svg.getAttribute("aria-label").startsWith(title))
            {
                return svg;
            }
        }
        throw new AssertionError("no chart " + title);
    }

    private static int vertices(final Element path)
    {
        final String d = path.getAttribute("d");
        return d.replaceAll("[^ML]", "").length();
    }

    private static void assertSelfContained(final String html)
    {
        final Matcher external = EXTERNAL.matcher(html);
        assertFalse(external.find(), () -> "external reference: " + external.group());
        final String lower = html.toLowerCase(Locale.ROOT);
        for (final String forbidden : new String[] {"<script", "<link", "<img", "<iframe", "@import", "url("})
        {
            assertFalse(lower.contains(forbidden), forbidden);
        }
    }

    @Test
    void shouldRenderOnePointWithServerMetricsAsWellFormedEscapedSelfContainedMarkup() throws Exception
    {
        final String html = HtmlReport.render(LoadReportSamples.single());
        final Document document = parse(html);
        // 3 CDFs (TTFT, ITL, E2E) + timeline: requests/s, tokens/s, in flight, KV cache usage
        assertEquals(7, elements(document, "svg").size(), "one svg per chart");
        assertEquals(0, html.indexOf("<!DOCTYPE html>"));
        assertSelfContained(html);
        assertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the model name is shown, escaped");
        assertFalse(html.contains("<b>"), "a note's markup stays text");
        assertTrue(html.contains("note of run: &lt;b&gt;not bold&lt;/b&gt;"));
        assertTrue(html.contains("<code>http_503</code>"), "errors by kind");
        assertTrue(html.contains("running (server)") && html.contains("waiting (server)"), "scraped gauges drawn");
        final Element kv = chart(document, "KV cache usage");
        assertEquals(1, elements(document, "svg").stream().filter(s -> s == kv).count());
        assertFalse(html.contains("Pareto frontier"), "no Pareto chart for one point");
        final Element ttft = chart(document, "TTFT CDF");
        final NodeList lines = ttft.getElementsByTagName("path");
        int series = 0;
        for (int i = 0; i < lines.getLength(); i++)
        {
            final Element line = (Element)lines.item(i);
            if ("s".equals(line.getAttribute("class")))
            {
                series++;
                assertEquals(104, vertices(line), "101 percentiles plus the tail points");
            }
        }
        assertEquals(1, series, "one CDF line per point");
        assertTrue(ttft.getTextContent().contains("SLO 500 ms"), "the TTFT SLO is drawn");
        // the summary row: 200 completed, 2 failed
        final String row = html.substring(html.indexOf("<tr><td>run</td>"));
        assertTrue(row.startsWith("<tr><td>run</td><td class=\"n\">200</td><td class=\"n\">2</td>"), row);
    }

    @Test
    void shouldDrawTheParetoFrontierOfASweepWithEveryLevelLabelled() throws Exception
    {
        final ObjectNode report = LoadReportSamples.sweep();
        final String html = HtmlReport.render(report);
        final Document document = parse(html);
        // 3 CDFs + Pareto + 3 points x (requests/s, tokens/s, in flight); no server metrics, so no KV chart
        assertEquals(13, elements(document, "svg").size());
        assertSelfContained(html);
        final Element pareto = chart(document, "Pareto frontier");
        final String text = pareto.getTextContent();
        for (final String label : new String[] {"concurrency=1", "concurrency=8", "concurrency=64"})
        {
            assertTrue(text.contains(label), label + " in " + text);
        }
        assertEquals("output tokens/s", elements(document, "text").stream().filter(t -> pareto == t.getParentNode())
            .filter(t -> "label".equals(t.getAttribute("class"))).findFirst().orElseThrow().getTextContent(),
            "throughput on the x axis");
        int filled = 0;
        int hollow = 0;
        for (final Element circle : elements(document, "circle"))
        {
            if ("mk on".equals(circle.getAttribute("class")))
            {
                filled++;
            }
            else if ("mk".equals(circle.getAttribute("class")))
            {
                hollow++;
                assertTrue(circle.getTextContent().startsWith("concurrency=64"), "64 is dominated by 8");
            }
        }
        assertEquals(2, filled, "1 and 8 are on the frontier");
        assertEquals(1, hollow);
        final NodeList paths = pareto.getElementsByTagName("path");
        Element frontier = null;
        for (int i = 0; i < paths.getLength(); i++)
        {
            if ("s".equals(((Element)paths.item(i)).getAttribute("class")))
            {
                frontier = (Element)paths.item(i);
            }
        }
        assertTrue(null != frontier && 2 == vertices(frontier), "the two frontier points are connected");
        assertEquals(3, elements(chart(document, "ITL CDF"), "path").stream()
            .filter(p -> "s".equals(p.getAttribute("class"))).count(), "one ITL CDF line per point");
        assertTrue(html.contains("on the frontier"), "summary marks the frontier");
    }

    private static List<Element> elements(final Element parent, final String tag)
    {
        final NodeList nodes = parent.getElementsByTagName(tag);
        final List<Element> list = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++)
        {
            list.add((Element)nodes.item(i));
        }
        return list;
    }

    @Test
    void shouldRenderAReportReadBackFromDiskExactlyLikeTheBuiltOne() throws Exception
    {
        final ObjectNode report = LoadReportSamples.sweep();
        final Path json = dir.resolve("sweep.json");
        LoadReport.write(report, json);
        final Path html = dir.resolve("out/sweep.html");
        HtmlReport.write(LoadReport.read(json), html);
        assertEquals(HtmlReport.render(report), Files.readString(html, StandardCharsets.UTF_8));
    }

    @Test
    void shouldDownsampleAnHourLongTimeline() throws Exception
    {
        final int seconds = 3600;
        final ObjectNode report = LoadReportSamples.report("m", List.of(new LoadReport.Point(
            LoadReportSamples.run("run", 20_000, seconds, 50, 8, 0), Double.NaN, LoadReportSamples.server(seconds))),
            null);
        assertEquals(seconds, report.path("points").path(0).path("timeline").size());
        final String html = HtmlReport.render(report);
        final Document document = parse(html);
        for (final Element path : elements(document, "path"))
        {
            if ("s".equals(path.getAttribute("class")))
            {
                assertTrue(vertices(path) <= ReportCharts.MAX_TIMELINE_POINTS, "downsampled: " + vertices(path));
            }
        }
        assertTrue(html.contains("each point is the mean of 12 s"), "the caption says how it was downsampled");
        assertTrue(html.contains("time since start (min)"));
        assertTrue(html.length() < 150_000, "page size " + html.length());
    }

    @Test
    void shouldRenderAnEmptyReportWithoutFailing() throws Exception
    {
        final String html = HtmlReport.render(LoadReportSamples.report("m", List.of(), null));
        final Document document = parse(html);
        assertEquals(3, elements(document, "svg").size(), "the CDF frames, empty");
        assertTrue(html.contains("no data"));
        assertTrue(html.contains("The report has no points."));
    }
}
