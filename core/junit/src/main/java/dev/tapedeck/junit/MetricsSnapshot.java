package dev.tapedeck.junit;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * One scrape of a Prometheus text exposition ({@code /metrics}), as sample name with labels to value, e.g.
 * {@code vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"}} to 3.0. Immutable; any thread.
 */
public final class MetricsSnapshot
{
    private final Map<String, Double> samples;

    private MetricsSnapshot(final Map<String, Double> samples)
    {
        this.samples = Collections.unmodifiableMap(samples);
    }

    /**
     * @param exposition Prometheus text format 0.0.4.
     * @return its samples (comments and blank lines skipped; a sample's optional timestamp ignored).
     * @throws IllegalArgumentException naming the line that is not a sample.
     */
    public static MetricsSnapshot parse(final String exposition)
    {
        final Map<String, Double> samples = new LinkedHashMap<>();
        int lineNumber = 0;
        for (final String raw : exposition.split("\n"))
        {
            lineNumber++;
            final String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#"))
            {
                continue;
            }
            final int labelsEnd = line.indexOf('{') >= 0 ? line.lastIndexOf('}') : -1;
            final int nameEnd = line.indexOf(' ', Math.max(labelsEnd, 0));
            if (nameEnd < 0)
            {
                throw new IllegalArgumentException("line " + lineNumber + " is not a sample: " + line);
            }
            final String value = line.substring(nameEnd + 1).strip().split(" ")[0];
            try
            {
                samples.put(line.substring(0, nameEnd), parseValue(value));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("line " + lineNumber + " has no number: " + line, ex);
            }
        }
        return new MetricsSnapshot(samples);
    }

    private static double parseValue(final String value)
    {
        switch (value)
        {
            case "+Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            case "NaN":
                return Double.NaN;
            default:
                return Double.parseDouble(value);
        }
    }

    /**
     * @param sample a sample name with its labels exactly as exposed, or a bare name for an unlabelled sample.
     * @return its value, or empty when absent.
     */
    public OptionalDouble value(final String sample)
    {
        final Double value = samples.get(sample);
        return null == value ? OptionalDouble.empty() : OptionalDouble.of(value);
    }

    /**
     * @param metric a sample name without labels, e.g. {@code vllm:generation_tokens_total}.
     * @return the sum over every label set of that name (0 when there is none).
     */
    public double sum(final String metric)
    {
        double sum = 0;
        for (final Map.Entry<String, Double> e : samples.entrySet())
        {
            final String key = e.getKey();
            if (key.equals(metric) || key.startsWith(metric) && key.length() > metric.length() &&
                '{' == key.charAt(metric.length()))
            {
                sum += e.getValue();
            }
        }
        return sum;
    }

    /**
     * @return every sample, in exposition order.
     */
    public Map<String, Double> samples()
    {
        return samples;
    }
}
