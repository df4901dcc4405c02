package dev.tapedeck.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The HTML report of {@code tapedeck load}, rendered from the JSON report ({@value LoadReport#SCHEMA}, as built or as
 * read back from disk) into one self-contained page: header (target, model, options, date, version), the summary table,
 * the TTFT split of a prefill/decode run, errors by kind, notes, latency CDFs, the Pareto frontier of a sweep and the
 * timeline of every point. Charts are inline SVG drawn here; the page references no script, stylesheet, font or image,
 * so it opens offline and can be attached anywhere. Every text taken from the report is escaped, and the markup is
 * XHTML-compatible (it parses as XML). Stateless; any thread.
 */
public final class HtmlReport
{
    /** The page's style sheet, shared with {@link CalibrationHtml}. */
    static final String STYLE = String.join("\n",
        "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:0 auto;",
        "max-width:1400px;padding:16px 24px;color:#1b1b1b;background:#fff;font-size:14px;line-height:1.4}",
        "h1{font-size:22px;margin:4px 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}",
        "h3{font-size:15px;margin:18px 0 6px}",
        "table{border-collapse:collapse;margin:6px 0}th,td{padding:3px 8px;border-bottom:1px solid #e4e4e4}",
        "th{text-align:left;background:#f4f6f8;font-weight:600}td.n,th.n{text-align:right;",
        "font-variant-numeric:tabular-nums}",
        "dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:4px 0}",
        "dl.meta dt{color:#555}dl.meta dd{margin:0;overflow-wrap:anywhere}",
        ".muted{color:#666}code{font-size:13px}",
        ".figs{display:flex;flex-wrap:wrap;gap:12px 24px}",
        "figure{margin:0;flex:1 1 560px;max-width:700px}figcaption{font-weight:600;margin-bottom:2px}",
        "figcaption small{font-weight:400;color:#666}",
        ".plot{overflow-x:auto}svg.chart{width:100%;min-width:420px;height:auto;font-size:11px}",
        "svg .grid line{stroke:#e6e6e6;stroke-width:1}svg .ticks text{fill:#444}",
        "svg .axis{fill:none;stroke:#333;stroke-width:1}svg .label{fill:#222;font-size:12px}",
        "svg .rule{fill:none;stroke:#888;stroke-width:1;stroke-dasharray:4 3}svg .rl{fill:#666;font-size:10px}",
        "svg path.s{fill:none;stroke-width:1.8;stroke-linejoin:round}",
        "svg circle.mk{fill:#fff;stroke:#0072B2;stroke-width:2}svg circle.mk.on{fill:#0072B2}",
        "svg .ml{fill:#222;font-size:11px}",
        "ul.legend{list-style:none;padding:0;margin:2px 0 0;display:flex;flex-wrap:wrap;gap:2px 14px;",
        "font-size:12px}",
        "ul.legend .sw{display:inline-block;width:22px;height:0;border-top-width:3px;margin-right:5px;",
        "vertical-align:middle}",
        "footer{margin-top:32px;color:#777;font-size:12px}");

    private HtmlReport()
    {
    }

    /**
     * @param report a load report.
     * @param path where to write the page (parent directories are created).
     * @throws IOException if writing fails.
     */
    public static void write(final JsonNode report, final Path path) throws IOException
    {
        final Path parent = path.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        Files.writeString(path, render(report), StandardCharsets.UTF_8);
    }

    /**
     * @param report a load report.
     * @return the whole page.
     */
    public static String render(final JsonNode report)
    {
        final JsonNode target = report.path("target");
        final String model = target.path("model").asText("");
        final StringBuilder out = new StringBuilder(131072);
        out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
            .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>")
            .append(esc("tapedeck load: " + model + " " + report.path("created").asText(""))).append("</title>\n")
            .append("<style>\n").append(STYLE).append("\n</style>\n</head>\n<body>\n");
        header(report, out);
        summary(report, out);
        prefillDecode(report, out);
        errors(report, out);
        notes(report, out);
        final JsonNode points = report.path("points");
        out.append("<h2 id=\"latency\">Latency distributions</h2>\n").append(ReportCharts.distributions(report));
        if (points.size() >= 2)
        {
            out.append("<h2 id=\"pareto\">Throughput vs latency</h2>\n").append(ReportCharts.pareto(report));
        }
        if (report.has("series"))
        {
            out.append("<h2 id=\"cliff\">Server modes: the cliff</h2>\n").append(ReportCharts.cliff(report))
                .append(ReportCharts.perGpu(report));
        }
        out.append("<h2 id=\"timeline\">Timeline</h2>\n");
        if (points.isEmpty())
        {
            out.append("<p class=\"muted\">The report has no points.</p>\n");
        }
        for (final JsonNode point : points)
        {
            out.append("<h3>").append(esc(point.path("label").asText())).append(" <span class=\"muted\">")
                .append(esc(point.path("plan").asText(""))).append("</span></h3>\n")
                .append(ReportCharts.timeline(point));
        }
        out.append("<footer>Written by tapedeck ").append(esc(report.path("tapedeck_version").asText("?")))
            .append(" from a ").append(esc(report.path("schema").asText("?")))
            .append(" report. Self-contained: no scripts, no network.</footer>\n</body>\n</html>\n");
        return out.toString();
    }

    private static void header(final JsonNode report, final StringBuilder out)
    {
        final JsonNode target = report.path("target");
        out.append("<h1>tapedeck load report</h1>\n<dl class=\"meta\">\n");
        item(out, "target", target.has("prefill_url") ? "prefill " + target.path("prefill_url").asText() +
            ", then decode " + target.path("decode_url").asText() : target.path("url").asText("-"));
        item(out, "model", target.path("model").asText("-"));
        if (target.path("metrics_scraped").size() > 1)
        {
            item(out, "server series", "summed over the " + target.path("metrics_scraped").size() + " scraped " +
                "endpoints (KV cache usage: their mean)");
        }
        else if (target.path("metrics_scraped").size() == 1)
        {
            item(out, "server series", "from " + target.path("metrics_scraped").path(0).asText());
        }
        item(out, "endpoint", target.path("endpoint").asText("-") + (target.path("stream").asBoolean(false) ?
            ", streamed" : ", not streamed"));
        if (report.has("sweep"))
        {
            item(out, "sweep", report.path("sweep").asText() + " over " + report.path("points").size() + " levels");
        }
        item(out, "date", report.path("created").asText("-"));
        item(out, "tapedeck", report.path("tapedeck_version").asText("-"));
        item(out, "SLO", mapText(report.path("slo"), "none (every completed request is good)"));
        item(out, "options", mapText(report.path("options"), "-"));
        out.append("</dl>\n");
    }

    private static void item(final StringBuilder out, final String name, final String value)
    {
        out.append("<dt>").append(esc(name)).append("</dt><dd>").append(esc(value)).append("</dd>\n");
    }

    private static String mapText(final JsonNode object, final String empty)
    {
        if (!object.isObject() || object.isEmpty())
        {
            return empty;
        }
        final StringBuilder text = new StringBuilder();
        for (final Map.Entry<String, JsonNode> field : object.properties())
        {
            text.append(0 == text.length() ? "" : "  ").append(field.getKey()).append('=')
                .append(field.getValue().isValueNode() ? field.getValue().asText() : field.getValue().toString());
        }
        return text.toString();
    }

    private static void summary(final JsonNode report, final StringBuilder out)
    {
        final Set<String> frontier = new HashSet<>();
        report.path("pareto").forEach(label -> frontier.add(label.asText()));
        final boolean sweep = report.has("pareto");
        out.append("<h2 id=\"summary\">Summary</h2>\n<div class=\"plot\"><table>\n<thead><tr><th>point</th>");
        for (final String column : new String[] {"completed", "failed", "req/s", "output tok/s", "TTFT p50 ms",
            "TTFT p99 ms", "ITL p50 ms", "ITL p99 ms", "E2E p50 ms", "E2E p99 ms", "dispatch late p99 ms",
            "goodput req/s", "goodput"})
        {
            out.append("<th class=\"n\">").append(esc(column)).append("</th>");
        }
        out.append(sweep ? "<th>Pareto</th>" : "").append("</tr></thead>\n<tbody>\n");
        for (final JsonNode point : report.path("points"))
        {
            final JsonNode latency = point.path("latency_ms");
            final String label = point.path("label").asText();
            out.append("<tr><td>").append(esc(label)).append("</td>");
            cell(out, String.format(Locale.ROOT, "%,d", point.path("requests").path("completed").asLong()));
            cell(out, String.format(Locale.ROOT, "%,d", point.path("requests").path("failed").asLong()));
            cell(out, String.format(Locale.ROOT, "%.2f", point.path("throughput").path("requests_per_s").asDouble()));
            cell(out, String.format(Locale.ROOT, "%,.1f",
                point.path("throughput").path("output_tokens_per_s").asDouble()));
            for (final String metric : new String[] {"ttft", "itl", "e2e"})
            {
                cell(out, ms(latency.path(metric).path("p50")));
                cell(out, ms(latency.path(metric).path("p99")));
            }
            cell(out, ms(latency.path("dispatch_lateness").path("p99")));
            cell(out, String.format(Locale.ROOT, "%.2f", point.path("goodput").path("requests_per_s").asDouble()));
            cell(out, String.format(Locale.ROOT, "%.1f%%", 100 * point.path("goodput").path("fraction").asDouble()));
            if (sweep)
            {
                out.append("<td>").append(frontier.contains(label) ? "on the frontier" : "").append("</td>");
            }
            out.append("</tr>\n");
        }
        out.append("</tbody></table></div>\n<p class=\"muted\">Latencies are measured from each request's intended "
            + "send time. ITL is per token, pooled over every token gap. Goodput counts completed requests that met "
            + "every SLO; its share is of completed plus failed requests. Dispatch lateness is how late the client "
            + "sent a request; a high value means the load generator, not the server, was the bottleneck.</p>\n");
    }

    /**
     * A prefill/decode run: each point's TTFT split into the prefill hop, the client's handoff and the decode hop's
     * first token, and the server's mean KV transfer time.
     */
    private static void prefillDecode(final JsonNode report, final StringBuilder out)
    {
        if (!report.path("points").path(0).has("prefill_decode"))
        {
            return;
        }
        out.append("<h2 id=\"prefill-decode\">Prefill/decode: TTFT split</h2>\n<div class=\"plot\"><table>\n")
            .append("<thead><tr><th>point</th>");
        for (final String column : new String[] {"TTFT p50 ms", "prefill p50 ms", "prefill p99 ms", "handoff p50 ms",
            "handoff p99 ms", "decode first token p50 ms", "decode first token p99 ms", "KV transfer mean ms (server)",
            "decode first token after transfer, mean ms"})
        {
            out.append("<th class=\"n\">").append(esc(column)).append("</th>");
        }
        out.append("</tr></thead>\n<tbody>\n");
        for (final JsonNode point : report.path("points"))
        {
            final JsonNode split = point.path("prefill_decode").path("ttft_split_ms");
            final JsonNode kv = point.path("prefill_decode").path("kv_transfer");
            out.append("<tr><td>").append(esc(point.path("label").asText())).append("</td>");
            cell(out, ms(point.path("latency_ms").path("ttft").path("p50")));
            for (final String part : new String[] {"prefill", "handoff", "decode_first_token"})
            {
                cell(out, ms(split.path(part).path("p50")));
                cell(out, ms(split.path(part).path("p99")));
            }
            cell(out, kv.has("mean_ms") ? ms(kv.path("mean_ms")) : kv.path("note").asText("-"));
            cell(out, ms(kv.path("decode_first_token_after_transfer_mean_ms")));
            out.append("</tr>\n");
        }
        out.append("</tbody></table></div>\n<p class=\"muted\">Each request went to the prefill server first ")
            .append("(max_tokens 1, not streamed), then to the decode server with the prefill's kv_transfer_params. ")
            .append("TTFT, from the intended send, is dispatch lateness + prefill (the first hop, its write to its ")
            .append("whole answer) + handoff (the client's time between the hops) + decode first token (the second ")
            .append("hop, its write to its first token). The KV transfer time is the server's own, from ")
            .append("vllm:nixl_xfer_time_seconds on the scraped metrics (the decode server's), part of the decode ")
            .append("hop's first token.</p>\n");
    }

    private static void cell(final StringBuilder out, final String text)
    {
        out.append("<td class=\"n\">").append(esc(text)).append("</td>");
    }

    private static void errors(final JsonNode report, final StringBuilder out)
    {
        out.append("<h2 id=\"errors\">Errors</h2>\n");
        final StringBuilder rows = new StringBuilder();
        for (final JsonNode point : report.path("points"))
        {
            final long requests = point.path("requests").path("completed").asLong() +
                point.path("requests").path("failed").asLong();
            for (final Map.Entry<String, JsonNode> kind : point.path("errors").properties())
            {
                final long count = kind.getValue().asLong();
                rows.append("<tr><td>").append(esc(point.path("label").asText())).append("</td><td><code>")
                    .append(esc(kind.getKey())).append("</code></td>");
                cell(rows, String.format(Locale.ROOT, "%,d", count));
                cell(rows, requests > 0 ? String.format(Locale.ROOT, "%.2f%%", 100.0 * count / requests) : "-");
                rows.append("<td>").append(esc(point.path("error_messages").path(kind.getKey()).asText("")))
                    .append("</td></tr>\n");
            }
        }
        if (0 == rows.length())
        {
            out.append("<p>No request failed.</p>\n");
        }
        else
        {
            out.append("<table>\n<thead><tr><th>point</th><th>kind</th><th class=\"n\">requests</th>")
                .append("<th class=\"n\">share</th><th>first message from the server</th></tr></thead>\n<tbody>\n")
                .append(rows).append("</tbody></table>\n");
        }
        for (final JsonNode point : report.path("points"))
        {
            if (!point.path("faults_injected").isEmpty())
            {
                out.append("<p>").append(esc(point.path("label").asText())).append(": faults injected by the server ")
                    .append("(<code>tapedeck:faults_injected_total</code>): ")
                    .append(esc(ResultTable.faults(point.path("faults_injected")))).append("</p>\n");
            }
        }
    }

    private static void notes(final JsonNode report, final StringBuilder out)
    {
        final StringBuilder items = new StringBuilder();
        for (final JsonNode point : report.path("points"))
        {
            for (final JsonNode note : point.path("notes"))
            {
                items.append("<li>").append(esc(point.path("label").asText())).append(": ")
                    .append(esc(note.asText())).append("</li>\n");
            }
        }
        if (0 != items.length())
        {
            out.append("<h2 id=\"notes\">Notes</h2>\n<ul>\n").append(items).append("</ul>\n");
        }
    }

    private static String ms(final JsonNode value)
    {
        if (!value.isNumber())
        {
            return "-";
        }
        final double v = value.asDouble();
        return v >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String esc(final String text)
    {
        return HtmlEscape.escape(text);
    }
}
