package dev.tapedeck.load;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A sweep run against several server modes (each point carries its {@code series}, e.g. {@code offload=on}): per
 * series, the Pareto frontier of output throughput against p99 TTFT, and the cliff: the first level at which p99
 * TTFT is at least twice the series' lowest level's ({@code ttft_doubled_at}), and the first at which the prefix-hit
 * rate over all tiers ({@code kv_cache.hit_rate}) falls below half of the lowest level's
 * ({@code hit_rate_collapsed_at}); null when it does not happen within the sweep; and its {@code curve}: per level,
 * output tokens/s (and per GPU, by the report's {@code target.gpus_per_server}, 1 when absent), p99 TTFT and
 * interactivity (the tokens/s one user sees: 1000 / the median TPOT in ms), the axes agentic benchmarks plot. Written
 * to the report's {@code series} object, in the order the series first appear.
 * <p>
 * Stateless; thread safe.
 */
public final class SweepSeries
{
    private SweepSeries()
    {
    }

    /**
     * Add the {@code series} analysis to a report whose points carry {@code series} and {@code level}.
     *
     * @param report the report, changed in place.
     */
    public static void analyse(final ObjectNode report)
    {
        final Map<String, List<JsonNode>> bySeries = new LinkedHashMap<>();
        for (final JsonNode point : report.path("points"))
        {
            if (point.has("series"))
            {
                bySeries.computeIfAbsent(point.path("series").asText(), k -> new ArrayList<>()).add(point);
            }
        }
        final int gpus = gpusPerServer(report);
        final ObjectNode series = report.putObject("series");
        for (final Map.Entry<String, List<JsonNode>> entry : bySeries.entrySet())
        {
            final List<JsonNode> points = new ArrayList<>(entry.getValue());
            points.sort((a, b) -> Double.compare(a.path("level").asDouble(), b.path("level").asDouble()));
            final ObjectNode node = series.putObject(entry.getKey());
            final ArrayNode frontier = node.putArray("pareto");
            for (final JsonNode point : points)
            {
                if (!dominated(point, points))
                {
                    frontier.add(point.path("label").asText());
                }
            }
            final ArrayNode curve = node.putArray("curve");
            for (final JsonNode point : points)
            {
                final double tpotMs = point.path("latency_ms").path("tpot").path("p50").asDouble(Double.NaN);
                final ObjectNode at = curve.addObject();
                at.put("level", point.path("level").asDouble());
                at.put("output_tokens_per_s", throughput(point));
                at.put("output_tokens_per_s_per_gpu", Math.round(throughput(point) * 10 / gpus) / 10.0);
                at.put("ttft_p99_ms", point.path("latency_ms").path("ttft").path("p99").asDouble(Double.NaN));
                if (tpotMs > 0)
                {
                    at.put("interactivity_tokens_per_s", Math.round(1e4 / tpotMs) / 10.0);
                }
                else
                {
                    at.putNull("interactivity_tokens_per_s");
                }
            }
            final double firstTtft = ttftP99(points.get(0));
            final double firstHitRate = points.get(0).path("kv_cache").path("hit_rate").asDouble(Double.NaN);
            node.putNull("ttft_doubled_at");
            node.putNull("hit_rate_collapsed_at");
            for (final JsonNode point : points)
            {
                final double level = point.path("level").asDouble();
                if (node.path("ttft_doubled_at").isNull() && firstTtft > 0 && ttftP99(point) >= 2 * firstTtft)
                {
                    node.put("ttft_doubled_at", level);
                }
                final double hitRate = point.path("kv_cache").path("hit_rate").asDouble(Double.NaN);
                if (node.path("hit_rate_collapsed_at").isNull() && firstHitRate > 0 && hitRate < firstHitRate / 2)
                {
                    node.put("hit_rate_collapsed_at", level);
                }
            }
        }
    }

    /**
     * @param report a report.
     * @return its {@code target.gpus_per_server}, 1 when absent.
     */
    static int gpusPerServer(final JsonNode report)
    {
        return Math.max(1, report.path("target").path("gpus_per_server").asInt(1));
    }

    private static boolean dominated(final JsonNode point, final List<JsonNode> points)
    {
        final double throughput = throughput(point);
        final double ttft = ttftP99(point);
        for (final JsonNode other : points)
        {
            final double t2 = throughput(other);
            final double l2 = ttftP99(other);
            if (other != point && t2 >= throughput && l2 <= ttft && (t2 > throughput || l2 < ttft))
            {
                return true;
            }
        }
        return false;
    }

    private static double throughput(final JsonNode point)
    {
        return point.path("throughput").path("output_tokens_per_s").asDouble();
    }

    private static double ttftP99(final JsonNode point)
    {
        return point.path("latency_ms").path("ttft").path("p99").asDouble(Double.MAX_VALUE);
    }
}
