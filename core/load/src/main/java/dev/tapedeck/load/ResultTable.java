package dev.tapedeck.load;

import java.io.PrintStream;
import java.util.Locale;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The final table a load prints (one row per point of the report) and the live progress line. Stateless apart from
 * the stream; call from one thread.
 */
public final class ResultTable
{
    private ResultTable()
    {
    }

    /**
     * @param report a load report.
     * @param out where to print.
     */
    public static void print(final ObjectNode report, final PrintStream out)
    {
        out.println();
        out.println(String.format(Locale.ROOT, "%-18s %9s %7s %7s %9s %11s %17s %17s %17s %10s %8s", "point",
            "completed", "failed", "peak", "req/s", "out tok/s", "TTFT p50/p99 ms", "ITL p50/p99 ms", "E2E p50/p99 ms",
            "late p99", "goodput"));
        for (final JsonNode point : report.path("points"))
        {
            final JsonNode latency = point.path("latency_ms");
            out.println(String.format(Locale.ROOT, "%-18s %,9d %,7d %,7d %9.2f %,11.1f %17s %17s %17s %10s %7.1f%%",
                truncate(point.path("label").asText(), 18), point.path("requests").path("completed").asLong(),
                point.path("requests").path("failed").asLong(), point.path("requests").path("peak_in_flight").asLong(),
                point.path("throughput").path("requests_per_s").asDouble(),
                point.path("throughput").path("output_tokens_per_s").asDouble(),
                pair(latency.path("ttft")), pair(latency.path("itl")), pair(latency.path("e2e")),
                ms(latency.path("dispatch_lateness").path("p99")),
                100 * point.path("goodput").path("fraction").asDouble()));
            if (point.has("prefill_decode"))
            {
                out.println(prefillDecode(point.path("prefill_decode")));
            }
            final JsonNode errors = point.path("errors");
            if (!errors.isEmpty())
            {
                out.println("  errors: " + errors);
                point.path("error_messages").properties().forEach(m ->
                    out.println("    " + m.getKey() + ": " + m.getValue().asText()));
            }
            if (!point.path("faults_injected").isEmpty())
            {
                out.println("  faults injected by the server: " + faults(point.path("faults_injected")));
            }
        }
        if (report.has("pareto"))
        {
            out.println("pareto frontier (output tokens/s vs p99 TTFT): " + report.get("pareto"));
        }
    }

    /**
     * @param elapsedNs time since the run started.
     * @param sent requests sent.
     * @param completed requests completed.
     * @param failed requests failed.
     * @param inFlight requests running.
     * @param planned requests planned (0 when unbounded).
     * @param label the point.
     * @return one status line.
     */
    public static String progress(final long elapsedNs, final long sent, final long completed, final long failed,
        final long inFlight, final long planned, final String label)
    {
        final double seconds = Math.max(1e-9, elapsedNs / 1e9);
        final double rate = completed / seconds;
        String eta = "";
        if (planned > 0 && sent > 0 && sent < planned)
        {
            eta = String.format(Locale.ROOT, " | ETA %.0fs", (planned - sent) * seconds / sent);
        }
        else if (sent >= planned && inFlight > 0)
        {
            eta = " | draining";
        }
        return String.format(Locale.ROOT, "[%s %5.0fs] sent %,d  done %,d  failed %,d  in flight %,d | %.1f req/s%s",
            label, seconds, sent, completed, failed, inFlight, rate, eta);
    }

    /**
     * @return the line under a prefill/decode point: its TTFT split and the server's KV transfer time.
     */
    static String prefillDecode(final JsonNode section)
    {
        final JsonNode split = section.path("ttft_split_ms");
        final JsonNode kv = section.path("kv_transfer");
        final String transfer = kv.has("mean_ms") ? "mean " + ms(kv.path("mean_ms")) + " ms over " +
            kv.path("transfers").asLong() + " (server)" : kv.path("note").asText("-");
        return "  TTFT split p50/p99 ms: prefill " + pair(split.path("prefill")) + " | handoff " +
            pair(split.path("handoff")) + " | decode first token " + pair(split.path("decode_first_token")) +
            " | KV transfer: " + transfer;
    }

    private static String pair(final JsonNode distribution)
    {
        if (distribution.path("count").asLong() == 0)
        {
            return "-";
        }
        return ms(distribution.path("p50")) + " / " + ms(distribution.path("p99"));
    }

    private static String ms(final JsonNode value)
    {
        if (value.isMissingNode())
        {
            return "-";
        }
        final double v = value.asDouble();
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String truncate(final String text, final int width)
    {
        return text.length() <= width ? text : text.substring(0, width - 1) + "~";
    }

    /**
     * @param faults a point's {@code faults_injected}.
     * @return them as {@code rate_limit 41, reset 12}.
     */
    static String faults(final JsonNode faults)
    {
        final StringBuilder out = new StringBuilder();
        faults.properties().forEach(f -> out.append(out.length() > 0 ? ", " : "").append(f.getKey()).append(' ')
            .append(f.getValue().asLong()));
        return out.toString();
    }
}
