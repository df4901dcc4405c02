package dev.tapedeck.metrics;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * llm-d-inference-sim's {@code --fake-metrics}: {@code /metrics} reports set values instead of the engine's, for
 * testing what reads them (autoscalers, routers' scorers) against a chosen load. The JSON object's keys, as
 * llm-d-inference-sim reads them:
 * <ul>
 *   <li>{@code running-requests}, {@code waiting-requests}, {@code kv-cache-usage}: a number, or
 *       {@code "fn:start:end:period"} with fn {@code oscillate} (a sine between start and end), {@code ramp} (start to
 *       end over the period, then end), {@code rampreset} (the ramp again every period) or {@code squarewave} (start
 *       for half a period, then end); recomputed every {@code --fake-metrics-refresh-interval}, request counts
 *       rounded;</li>
 *   <li>{@code loras}: {@code [{"running":"a,b","waiting":"c","timestamp":..}]}, the last entry reported in
 *       {@code vllm:lora_requests_info};</li>
 *   <li>per-bucket counts of histograms ({@code ttft-buckets-values}, {@code tpot-buckets-values} (inter-token
 *       latency), {@code request-tpot-buckets-values}, {@code e2erl-buckets-values},
 *       {@code queue-time-buckets-values}, {@code inf-time-buckets-values}, {@code prefill-time-buckets-values},
 *       {@code decode-time-buckets-values}, {@code request-prompt-tokens}, {@code request-generation-tokens},
 *       {@code request-params-max-tokens}, {@code request-max-generation-tokens}): count i falls in bucket i, one
 *       more than the bounds for {@code +Inf};</li>
 *   <li>counters {@code total-prompt-tokens}, {@code total-generation-tokens}, {@code prefix-cache-hits},
 *       {@code prefix-cache-queries}, {@code request-success-total} ({@code {"stop":n,"length":m}}).</li>
 * </ul>
 * An unknown key or a malformed value is refused at start, by name.
 * <p>
 * Read on the face's thread, as {@link MetricsSource}s are.
 */
public final class FakeMetrics implements MetricsSource
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final double NS_PER_SECOND = 1e9;

    private final EngineMetrics metrics;
    private final Wave running;
    private final Wave waiting;
    private final Wave kvCacheUsage;
    private final List<String> lorasRunning = new ArrayList<>();
    private final List<String> lorasWaiting = new ArrayList<>();
    private final boolean hasLoras;
    private final long refreshNs;
    private final LongSupplier clockNs;
    private final long startNs;

    /** A gauge's value over time: fixed, or one of llm-d-inference-sim's four shapes. */
    private record Wave(String shape, double start, double end, double periodSeconds)
    {
        static Wave parse(final JsonNode node, final String key)
        {
            if (null == node || node.isNull())
            {
                return new Wave("fixed", 0, 0, 1);
            }
            if (node.isNumber())
            {
                return new Wave("fixed", node.asDouble(), node.asDouble(), 1);
            }
            final String[] parts = node.asText().split(":");
            if (4 != parts.length || !List.of("oscillate", "ramp", "rampreset", "squarewave").contains(parts[0]))
            {
                throw new IllegalArgumentException("--fake-metrics " + key + ": a number or " +
                    "\"oscillate|ramp|rampreset|squarewave:start:end:period\", got " + node);
            }
            try
            {
                final double period = seconds(parts[3]);
                if (!(period > 0))
                {
                    throw new IllegalArgumentException("--fake-metrics " + key + ": the period must be positive");
                }
                return new Wave(parts[0], Double.parseDouble(parts[1]), Double.parseDouble(parts[2]), period);
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("--fake-metrics " + key + ": not numbers in " + node, ex);
            }
        }

        double at(final double seconds)
        {
            final double phase = seconds / periodSeconds;
            final double span = end - start;
            return switch (shape)
            {
                case "oscillate" -> start + span * (1 + Math.sin(2 * Math.PI * phase)) / 2;
                case "ramp" -> start + span * Math.min(1, phase);
                case "rampreset" -> start + span * (phase - Math.floor(phase));
                case "squarewave" -> 0 == (long)Math.floor(2 * phase) % 2 ? start : end;
                default -> start;
            };
        }

        /** A period as a Go duration ({@code 30s}, {@code 500ms}, {@code 2m}) or in seconds. */
        private static double seconds(final String text)
        {
            final String value = text.trim().toLowerCase(Locale.ROOT);
            if (value.endsWith("ms"))
            {
                return Double.parseDouble(value.substring(0, value.length() - 2)) / 1000;
            }
            if (value.endsWith("s"))
            {
                return Double.parseDouble(value.substring(0, value.length() - 1));
            }
            if (value.endsWith("m"))
            {
                return Double.parseDouble(value.substring(0, value.length() - 1)) * 60;
            }
            if (value.endsWith("h"))
            {
                return Double.parseDouble(value.substring(0, value.length() - 1)) * 3600;
            }
            return Double.parseDouble(value);
        }
    }

    private FakeMetrics(final JsonNode root, final int maxModelLen, final long refreshNs, final LongSupplier clockNs)
    {
        this.metrics = new EngineMetrics(maxModelLen);
        this.refreshNs = refreshNs;
        this.clockNs = clockNs;
        this.startNs = clockNs.getAsLong();
        running = Wave.parse(root.get("running-requests"), "running-requests");
        waiting = Wave.parse(root.get("waiting-requests"), "waiting-requests");
        kvCacheUsage = Wave.parse(root.get("kv-cache-usage"), "kv-cache-usage");
        final JsonNode loras = root.get("loras");
        hasLoras = null != loras && loras.isArray() && !loras.isEmpty();
        if (hasLoras)
        {
            final JsonNode last = loras.get(loras.size() - 1);
            names(last.path("running").asText(""), lorasRunning);
            names(last.path("waiting").asText(""), lorasWaiting);
        }
        for (final Map.Entry<String, JsonNode> field : root.properties())
        {
            apply(field.getKey(), field.getValue());
        }
    }

    /**
     * @param json the {@code --fake-metrics} JSON object.
     * @param maxModelLen the served context length (the token histograms' buckets).
     * @param refreshNs how often the function-valued gauges change ({@code --fake-metrics-refresh-interval}).
     * @param clockNs the face's clock.
     * @return the fake source.
     * @throws IllegalArgumentException naming an unknown key or a malformed value.
     */
    public static FakeMetrics parse(final String json, final int maxModelLen, final long refreshNs,
        final LongSupplier clockNs)
    {
        final JsonNode root;
        try
        {
            root = JSON.readTree(json);
        }
        catch (final java.io.IOException ex)
        {
            throw new IllegalArgumentException("--fake-metrics is not JSON: " + String.valueOf(ex.getMessage())
                .lines().findFirst().orElse(""), ex);
        }
        if (null == root || !root.isObject())
        {
            throw new IllegalArgumentException("--fake-metrics must be a JSON object");
        }
        if (refreshNs <= 0)
        {
            throw new IllegalArgumentException("--fake-metrics-refresh-interval must be positive");
        }
        return new FakeMetrics(root, maxModelLen, refreshNs, clockNs);
    }

    private static void names(final String list, final List<String> into)
    {
        for (final String name : list.split(","))
        {
            if (!name.isBlank())
            {
                into.add(name.trim());
            }
        }
    }

    private void apply(final String key, final JsonNode value)
    {
        switch (key)
        {
            case "running-requests", "waiting-requests", "kv-cache-usage", "loras" ->
            {
                // the gauges and LoRA info, read at scrape time
            }
            case "ttft-buckets-values" -> buckets(key, value, metrics.timeToFirstToken);
            case "tpot-buckets-values" -> buckets(key, value, metrics.interTokenLatency);
            case "request-tpot-buckets-values" -> buckets(key, value, metrics.requestTimePerOutputToken);
            case "e2erl-buckets-values" -> buckets(key, value, metrics.e2eRequestLatency);
            case "queue-time-buckets-values" -> buckets(key, value, metrics.requestQueueTime);
            case "inf-time-buckets-values" -> buckets(key, value, metrics.requestInferenceTime);
            case "prefill-time-buckets-values" -> buckets(key, value, metrics.requestPrefillTime);
            case "decode-time-buckets-values" -> buckets(key, value, metrics.requestDecodeTime);
            case "request-prompt-tokens" -> buckets(key, value, metrics.requestPromptTokens);
            case "request-generation-tokens" -> buckets(key, value, metrics.requestGenerationTokens);
            case "request-params-max-tokens" -> buckets(key, value, metrics.requestParamsMaxTokens);
            case "request-max-generation-tokens" -> buckets(key, value, metrics.requestMaxNumGenerationTokens);
            case "total-prompt-tokens" ->
            {
                metrics.promptTokens = count(key, value);
                metrics.promptTokensLocalCompute = metrics.promptTokens;
            }
            case "total-generation-tokens" -> metrics.generationTokens = count(key, value);
            case "prefix-cache-hits" -> metrics.prefixCacheHits = count(key, value);
            case "prefix-cache-queries" -> metrics.prefixCacheQueries = count(key, value);
            case "request-success-total" ->
            {
                for (final Map.Entry<String, JsonNode> reason : value.properties())
                {
                    final EngineMetrics.FinishLabel label;
                    try
                    {
                        label = EngineMetrics.FinishLabel.valueOf(reason.getKey().toUpperCase(Locale.ROOT));
                    }
                    catch (final IllegalArgumentException ex)
                    {
                        throw new IllegalArgumentException("--fake-metrics request-success-total: unknown reason '" +
                            reason.getKey() + "' (stop, length, abort, error, repetition)", ex);
                    }
                    metrics.requestSuccess[label.ordinal()] = count(key, reason.getValue());
                }
            }
            default -> throw new IllegalArgumentException("--fake-metrics: unknown key '" + key + "'");
        }
    }

    private static long count(final String key, final JsonNode value)
    {
        if (!value.canConvertToLong() || value.asLong() < 0)
        {
            throw new IllegalArgumentException("--fake-metrics " + key + ": a count must be a whole number >= 0, " +
                "got " + value);
        }
        return value.asLong();
    }

    /** Count i of the list falls in bucket i (at its upper bound; past the last bound, in +Inf). */
    private static void buckets(final String key, final JsonNode counts, final Histogram histogram)
    {
        final double[] bounds = histogram.upperBounds();
        if (!counts.isArray() || counts.size() > bounds.length + 1)
        {
            throw new IllegalArgumentException("--fake-metrics " + key + ": a list of at most " + (bounds.length + 1) +
                " bucket counts, got " + counts);
        }
        for (int i = 0; i < counts.size(); i++)
        {
            histogram.observe(i < bounds.length ? bounds[i] : 2 * bounds[bounds.length - 1], count(key,
                counts.get(i)));
        }
    }

    private double seconds()
    {
        final long elapsedNs = clockNs.getAsLong() - startNs;
        return (elapsedNs - elapsedNs % refreshNs) / NS_PER_SECOND;
    }

    /**
     * @return true when the JSON lists LoRA adapters ({@code vllm:lora_requests_info} is then reported).
     */
    public boolean hasLoras()
    {
        return hasLoras;
    }

    @Override
    public EngineMetrics metrics()
    {
        return metrics;
    }

    @Override
    public int numRunning()
    {
        return (int)Math.round(running.at(seconds()));
    }

    @Override
    public int numWaiting()
    {
        return (int)Math.round(waiting.at(seconds()));
    }

    @Override
    public double kvCacheUsage()
    {
        return Math.max(0, Math.min(1, kvCacheUsage.at(seconds())));
    }

    @Override
    public void loraAdapters(final boolean runningAdapters, final Collection<String> names)
    {
        names.addAll(runningAdapters ? lorasRunning : lorasWaiting);
    }

    @Override
    public long loraAdaptersChangedNs()
    {
        return startNs;
    }
}
