package dev.tapedeck.metrics;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * vLLM's {@code vllm:lora_requests_info} gauge, shown only when LoRA is enabled: one series per combination of
 * labels {@code max_lora} ({@code --max-loras}), {@code running_lora_adapters} and {@code waiting_lora_adapters}
 * (adapter names joined by commas, in the order the adapters were first seen; empty when none), whose value is the
 * time, in Unix seconds, the engines last entered that combination. Series of earlier combinations stay with their
 * older times, as prometheus_client keeps every label set it was given, so the series with the largest value is the
 * current state (what a LoRA-aware router reads). Unlike vLLM the series are bounded: the oldest are dropped beyond
 * {@value #MAX_SERIES}. A combination is seen when {@code /metrics} is scraped; the time is that of the change
 * itself. Over several engines the adapters are the union of theirs; there is no {@code engine} or
 * {@code model_name} label (vLLM has none on this gauge).
 * <p>
 * <b>Not thread safe</b>: written on the engines' thread at scrape time, like {@link PrometheusExposition}.
 */
public final class LoraRequestsInfo
{
    /** Most label combinations kept. */
    public static final int MAX_SERIES = 128;

    private static final String NAME = "vllm:lora_requests_info";

    private final String maxLora;
    private final double createdEpochSeconds;
    private final long createdNs;
    private final Map<String, Double> series = new LinkedHashMap<>();

    /**
     * @param maxLoras {@code --max-loras}.
     * @param createdEpochSeconds the wall-clock time of the engines' start, reported before any adapter request came.
     * @param createdNs the same moment on the engines' clock: engine times are dated from it.
     */
    public LoraRequestsInfo(final int maxLoras, final double createdEpochSeconds, final long createdNs)
    {
        this.maxLora = Integer.toString(maxLoras);
        this.createdEpochSeconds = createdEpochSeconds;
        this.createdNs = createdNs;
    }

    /**
     * Record the engines' current combination and write the family.
     *
     * @param out where the exposition text goes.
     * @param engines the engines, on the clock {@code createdNs} was read from.
     */
    public void write(final StringBuilder out, final List<? extends MetricsSource> engines)
    {
        final Set<String> running = new LinkedHashSet<>();
        final Set<String> waiting = new LinkedHashSet<>();
        long changedNs = Long.MIN_VALUE;
        for (final MetricsSource engine : engines)
        {
            engine.loraAdapters(true, running);
            engine.loraAdapters(false, waiting);
            changedNs = Math.max(changedNs, engine.loraAdaptersChangedNs());
        }
        final double value = Long.MIN_VALUE == changedNs ? createdEpochSeconds :
            createdEpochSeconds + (changedNs - createdNs) / 1e9;
        final String labels = "max_lora=\"" + maxLora + "\",running_lora_adapters=\"" +
            PrometheusExposition.escape(String.join(",", running)) + "\",waiting_lora_adapters=\"" +
            PrometheusExposition.escape(String.join(",", waiting)) + "\"";
        series.remove(labels);
        series.put(labels, value);
        final Iterator<String> oldest = series.keySet().iterator();
        while (series.size() > MAX_SERIES)
        {
            oldest.next();
            oldest.remove();
        }
        out.append("# HELP ").append(NAME).append(" Running stats on lora requests.\n");
        out.append("# TYPE ").append(NAME).append(" gauge\n");
        for (final Map.Entry<String, Double> entry : series.entrySet())
        {
            out.append(NAME).append('{').append(entry.getKey()).append("} ").append(GoFloat.format(entry.getValue()))
                .append('\n');
        }
    }
}
