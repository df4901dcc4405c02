package dev.tapedeck.trace.tools;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import dev.tapedeck.trace.TraceMeta;

/**
 * The two forms of a {@link TraceSummary}: an aligned text table for people and JSON for programs. Stateless;
 * thread safe.
 */
public final class TraceSummaryFormat
{
    private static final JsonFactory JSON = new JsonFactory();
    private static final String[] HEADER = {"concurrency", "count", "prompt", "output", "ttft_p50", "ttft_p90",
        "ttft_p99", "itl_p50", "itl_p90", "itl_p99", "finish_reasons"};

    private TraceSummaryFormat()
    {
    }

    /**
     * @param summary the summary.
     * @return the text report: the trace and its meta, the table (times in ms, two decimals; {@code -} where there
     *     are no samples), a legend and any reader warnings, each line ending with a newline.
     */
    public static String text(final TraceSummary summary)
    {
        final TraceMeta meta = summary.meta();
        final StringBuilder out = new StringBuilder();
        out.append("trace: ").append(summary.file()).append(" (").append(summary.all().count()).append(" records)\n");
        out.append("meta: model=").append(orDash(meta.model())).append(" gpu=").append(orDash(meta.gpu()))
            .append(" source=").append(orDash(meta.source())).append(" vllm_version=")
            .append(orDash(meta.vllmVersion())).append(" config_hash=").append(orDash(meta.configHash()))
            .append("\n\n");
        final List<String[]> table = new ArrayList<>();
        table.add(HEADER);
        for (final TraceSummary.Row row : summary.rows())
        {
            table.add(cells(row));
        }
        table.add(cells(summary.all()));
        appendTable(out, table);
        out.append("\ntimes in ms; percentiles are nearest rank; ITL is per token, pooled over every token gap (")
            .append(summary.all().itlSamples()).append(" samples in all)\n");
        for (final String warning : summary.warnings())
        {
            out.append("warning: ").append(warning).append('\n');
        }
        return out.toString();
    }

    /**
     * Write the summary as one JSON object: {@code file}, {@code meta} (model, gpu, source, vllm_version,
     * config_hash; null when absent), {@code records}, {@code percentile_method}, {@code rows} (one per
     * concurrency), {@code all}, {@code warnings}. A row holds {@code concurrency}, {@code count},
     * {@code prompt_tokens} and {@code output_tokens} ({@code min}, {@code max}), {@code ttft_ms} and
     * {@code itl_ms} ({@code p50}, {@code p90}, {@code p99}; null without samples; ITL also {@code samples}) and
     * {@code finish_reasons}.
     *
     * @param summary the summary.
     * @param out where to write (not closed).
     * @throws IOException if writing fails.
     */
    public static void writeJson(final TraceSummary summary, final Writer out) throws IOException
    {
        try (JsonGenerator json = JSON.createGenerator(out))
        {
            json.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            json.useDefaultPrettyPrinter();
            json.writeStartObject();
            json.writeStringField("file", summary.file());
            final TraceMeta meta = summary.meta();
            json.writeObjectFieldStart("meta");
            json.writeStringField("model", meta.model());
            json.writeStringField("gpu", meta.gpu());
            json.writeStringField("source", meta.source());
            json.writeStringField("vllm_version", meta.vllmVersion());
            json.writeStringField("config_hash", meta.configHash());
            json.writeEndObject();
            json.writeNumberField("records", summary.all().count());
            json.writeStringField("percentile_method", "nearest rank: smallest sample whose cumulative count " +
                "reaches ceil(p/100 x N)");
            json.writeArrayFieldStart("rows");
            for (final TraceSummary.Row row : summary.rows())
            {
                writeRow(json, row);
            }
            json.writeEndArray();
            json.writeFieldName("all");
            writeRow(json, summary.all());
            json.writeArrayFieldStart("warnings");
            for (final String warning : summary.warnings())
            {
                json.writeString(warning);
            }
            json.writeEndArray();
            json.writeEndObject();
        }
        out.write('\n');
        out.flush();
    }

    private static void writeRow(final JsonGenerator json, final TraceSummary.Row row) throws IOException
    {
        json.writeStartObject();
        if (null == row.concurrency())
        {
            json.writeStringField("concurrency", "all");
        }
        else
        {
            json.writeNumberField("concurrency", row.concurrency());
        }
        json.writeNumberField("count", row.count());
        writeRange(json, "prompt_tokens", row.promptTokensMin(), row.promptTokensMax());
        writeRange(json, "output_tokens", row.outputTokensMin(), row.outputTokensMax());
        json.writeObjectFieldStart("ttft_ms");
        writeQuantiles(json, row.ttftMs());
        json.writeEndObject();
        json.writeObjectFieldStart("itl_ms");
        writeQuantiles(json, row.itlMs());
        json.writeNumberField("samples", row.itlSamples());
        json.writeEndObject();
        json.writeObjectFieldStart("finish_reasons");
        for (final Map.Entry<String, Long> reason : row.finishReasons().entrySet())
        {
            json.writeNumberField(reason.getKey(), reason.getValue());
        }
        json.writeEndObject();
        json.writeEndObject();
    }

    private static void writeRange(final JsonGenerator json, final String name, final long min, final long max)
        throws IOException
    {
        json.writeObjectFieldStart(name);
        json.writeNumberField("min", min);
        json.writeNumberField("max", max);
        json.writeEndObject();
    }

    private static void writeQuantiles(final JsonGenerator json, final TraceSummary.Quantiles quantiles)
        throws IOException
    {
        writeMs(json, "p50", quantiles.p50());
        writeMs(json, "p90", quantiles.p90());
        writeMs(json, "p99", quantiles.p99());
    }

    private static void writeMs(final JsonGenerator json, final String name, final double value) throws IOException
    {
        if (Double.isNaN(value))
        {
            json.writeNullField(name);
        }
        else
        {
            json.writeNumberField(name, value);
        }
    }

    private static String[] cells(final TraceSummary.Row row)
    {
        final StringBuilder reasons = new StringBuilder();
        for (final Map.Entry<String, Long> reason : row.finishReasons().entrySet())
        {
            reasons.append(reasons.length() > 0 ? " " : "").append(reason.getKey()).append('=')
                .append(reason.getValue());
        }
        return new String[] {row.label(), Long.toString(row.count()),
            row.promptTokensMin() + "-" + row.promptTokensMax(), row.outputTokensMin() + "-" + row.outputTokensMax(),
            ms(row.ttftMs().p50()), ms(row.ttftMs().p90()), ms(row.ttftMs().p99()),
            ms(row.itlMs().p50()), ms(row.itlMs().p90()), ms(row.itlMs().p99()), reasons.toString()};
    }

    private static void appendTable(final StringBuilder out, final List<String[]> table)
    {
        final int[] widths = new int[HEADER.length];
        for (final String[] row : table)
        {
            for (int i = 0; i < row.length; i++)
            {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (final String[] row : table)
        {
            final StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++)
            {
                final boolean last = i == row.length - 1;
                if (last)
                {
                    line.append(row[i]);
                }
                else
                {
                    line.append(" ".repeat(widths[i] - row[i].length())).append(row[i]).append("  ");
                }
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
    }

    /**
     * @param value milliseconds, or NaN.
     * @return two decimals, or {@code -} for NaN.
     */
    static String ms(final double value)
    {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String orDash(final String value)
    {
        return null == value ? "-" : value;
    }
}
