package dev.tapedeck.load;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Service-level objectives for goodput ({@code --slo ttft_ms=500,itl_ms=50,tpot_ms=60,e2e_ms=20000}): a request is
 * good when it completed and meets every objective given: its TTFT, its mean gap between tokens, its TPOT and its
 * end-to-end latency, each measured from the intended send time. Immutable.
 *
 * @param ttftMs largest TTFT, or +inf.
 * @param itlMs largest mean inter-token gap, or +inf.
 * @param tpotMs largest time per output token after the first, or +inf.
 * @param e2eMs largest end-to-end latency, or +inf.
 */
public record Slo(double ttftMs, double itlMs, double tpotMs, double e2eMs)
{
    /** No objectives: every completed request is good. */
    public static final Slo NONE = new Slo(Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY,
        Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY);

    /**
     * @param spec {@code key=value,...} with keys ttft_ms, itl_ms, tpot_ms, e2e_ms.
     * @return the objectives.
     */
    public static Slo parse(final String spec)
    {
        double ttft = Double.POSITIVE_INFINITY;
        double itl = Double.POSITIVE_INFINITY;
        double tpot = Double.POSITIVE_INFINITY;
        double e2e = Double.POSITIVE_INFINITY;
        for (final String part : spec.split(","))
        {
            final String[] kv = part.trim().split("=");
            if (2 != kv.length)
            {
                throw new IllegalArgumentException("--slo expects key=value pairs, got '" + part + "'");
            }
            final double value;
            try
            {
                value = Double.parseDouble(kv[1].trim());
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--slo " + kv[0] + " needs a number of milliseconds");
            }
            if (!(value > 0))
            {
                throw new IllegalArgumentException("--slo " + kv[0] + " must be > 0");
            }
            switch (kv[0].trim().toLowerCase(Locale.ROOT))
            {
                case "ttft_ms" -> ttft = value;
                case "itl_ms" -> itl = value;
                case "tpot_ms" -> tpot = value;
                case "e2e_ms" -> e2e = value;
                default -> throw new IllegalArgumentException("--slo keys are ttft_ms, itl_ms, tpot_ms, e2e_ms; got '" +
                    kv[0] + "'");
            }
        }
        return new Slo(ttft, itl, tpot, e2e);
    }

    /**
     * @param ttftNs the request's TTFT.
     * @param meanGapNs its mean gap between token chunks (-1 when it had fewer than two).
     * @param e2eNs its end-to-end latency.
     * @param outputTokens its output tokens.
     * @return true when every objective is met.
     */
    public boolean isMet(final long ttftNs, final long meanGapNs, final long e2eNs, final long outputTokens)
    {
        final double tpotMs = outputTokens > 1 ? (e2eNs - ttftNs) / 1e6 / (outputTokens - 1) : 0;
        return ttftNs / 1e6 <= ttftMs && (meanGapNs < 0 || meanGapNs / 1e6 <= itlMs) && tpotMs <= this.tpotMs &&
            e2eNs / 1e6 <= e2eMs;
    }

    /**
     * @return the objectives that are set, for the report.
     */
    public Map<String, Double> asMap()
    {
        final Map<String, Double> map = new LinkedHashMap<>();
        if (Double.isFinite(ttftMs))
        {
            map.put("ttft_ms", ttftMs);
        }
        if (Double.isFinite(itlMs))
        {
            map.put("itl_ms", itlMs);
        }
        if (Double.isFinite(tpotMs))
        {
            map.put("tpot_ms", tpotMs);
        }
        if (Double.isFinite(e2eMs))
        {
            map.put("e2e_ms", e2eMs);
        }
        return map;
    }
}
