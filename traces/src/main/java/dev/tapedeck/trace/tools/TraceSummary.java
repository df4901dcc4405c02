package dev.tapedeck.trace.tools;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * {@code inspect summarize}: a trace's records grouped by their exact {@code concurrency}, one row per value (in
 * ascending order) plus an "all" row: record count, prompt and output token ranges, TTFT and ITL percentiles, finish
 * reasons.
 * <ul>
 *   <li>TTFT: one sample per record ({@code ttft_ms}).</li>
 *   <li>ITL: per token, pooled over every token gap of every record in the row. A gap of {@code itl_ms} closed by a
 *       chunk of {@code n} tokens ({@code itl_tokens}, 1 when absent) counts as {@code n} samples of
 *       {@code gap / n}; a record with only {@code itl_summary} counts as {@code count} samples of {@code mean_ms}.
 *       The first chunk (TTFT) is not an ITL sample.</li>
 *   <li>Percentiles are nearest rank ({@link WeightedSamples}): always a value that occurs in the data.</li>
 *   <li>Records without {@code finish_reason} count as {@code none}.</li>
 * </ul>
 * The file is read once, streaming; memory is 8 bytes per gap and per record (16 with multi-token chunks or
 * summaries); the "all" row merges the rows' samples without copying them. Immutable once built.
 */
public final class TraceSummary
{
    /** The finish-reason key of records that have none. */
    public static final String NO_FINISH_REASON = "none";

    private final String file;
    private final TraceMeta meta;
    private final List<Row> rows;
    private final Row all;
    private final List<String> warnings;

    /**
     * The three percentiles reported, in milliseconds; NaN when there are no samples.
     *
     * @param p50 median.
     * @param p90 90th percentile.
     * @param p99 99th percentile.
     */
    public record Quantiles(double p50, double p90, double p99)
    {
        /**
         * @param samples the samples.
         * @return their p50, p90 and p99 (nearest rank).
         */
        public static Quantiles of(final WeightedSamples samples)
        {
            return new Quantiles(samples.percentile(50), samples.percentile(90), samples.percentile(99));
        }

        /**
         * @param values p50, p90 and p99.
         * @return them as quantiles.
         */
        public static Quantiles of(final double[] values)
        {
            return new Quantiles(values[0], values[1], values[2]);
        }
    }

    /**
     * One row of the table.
     *
     * @param concurrency the exact concurrency of the row's records, or null for the "all" row.
     * @param count records.
     * @param promptTokensMin shortest prompt.
     * @param promptTokensMax longest prompt.
     * @param outputTokensMin shortest output.
     * @param outputTokensMax longest output.
     * @param ttftMs TTFT percentiles.
     * @param itlMs per-token ITL percentiles.
     * @param itlSamples per-token ITL samples behind {@code itlMs}.
     * @param finishReasons records per finish reason, by name ({@value #NO_FINISH_REASON} for none).
     */
    public record Row(Long concurrency, long count, long promptTokensMin, long promptTokensMax, long outputTokensMin,
        long outputTokensMax, Quantiles ttftMs, Quantiles itlMs, long itlSamples, SortedMap<String, Long> finishReasons)
    {
        /**
         * @return the concurrency as text, or {@code all}.
         */
        public String label()
        {
            return null == concurrency ? "all" : Long.toString(concurrency);
        }
    }

    private TraceSummary(final String file, final TraceMeta meta, final List<Row> rows, final Row all,
        final List<String> warnings)
    {
        this.file = file;
        this.meta = meta;
        this.rows = rows;
        this.all = all;
        this.warnings = warnings;
    }

    /**
     * Read and summarise a trace file.
     *
     * @param path the trace (gzip or plain).
     * @return its summary.
     * @throws IOException if the file cannot be read; {@link dev.tapedeck.trace.TraceFormatException} (naming file
     *     and line) if a record is malformed.
     */
    public static TraceSummary of(final Path path) throws IOException
    {
        final TreeMap<Long, Accumulator> buckets = new TreeMap<>();
        try (TraceReader reader = TraceReader.open(path))
        {
            for (TraceRecord record = reader.next(); null != record; record = reader.next())
            {
                buckets.computeIfAbsent(record.concurrency(), key -> new Accumulator()).add(record);
            }
            return build(path.toString(), reader.meta(), buckets, reader.warnings());
        }
    }

    /**
     * Summarise records already in memory.
     *
     * @param name the trace's name, for the report.
     * @param meta its meta line.
     * @param records its records.
     * @return the summary.
     */
    public static TraceSummary of(final String name, final TraceMeta meta, final Iterable<TraceRecord> records)
    {
        final TreeMap<Long, Accumulator> buckets = new TreeMap<>();
        for (final TraceRecord record : records)
        {
            buckets.computeIfAbsent(record.concurrency(), key -> new Accumulator()).add(record);
        }
        return build(name, meta, buckets, List.of());
    }

    private static TraceSummary build(final String name, final TraceMeta meta, final TreeMap<Long, Accumulator> buckets,
        final List<String> warnings)
    {
        final List<Row> rows = new ArrayList<>();
        final List<WeightedSamples> ttftParts = new ArrayList<>();
        final List<WeightedSamples> itlParts = new ArrayList<>();
        final Accumulator total = new Accumulator(1, 1);
        long itlSamples = 0;
        for (final Map.Entry<Long, Accumulator> bucket : buckets.entrySet())
        {
            final Accumulator accumulator = bucket.getValue();
            rows.add(accumulator.toRow(bucket.getKey()));
            total.addRangesAndReasons(accumulator);
            ttftParts.add(accumulator.ttftMs);
            itlParts.add(accumulator.itlMs);
            itlSamples += accumulator.itlMs.count();
        }
        // the "all" row merges the rows' sorted samples instead of copying them
        final Row all = total.toRow(null, Quantiles.of(WeightedSamples.percentiles(ttftParts, 50, 90, 99)),
            Quantiles.of(WeightedSamples.percentiles(itlParts, 50, 90, 99)), itlSamples);
        return new TraceSummary(name, meta, Collections.unmodifiableList(rows), all, List.copyOf(warnings));
    }

    /**
     * @return the trace's name (its path).
     */
    public String file()
    {
        return file;
    }

    /**
     * @return the trace's meta line (empty when it has none).
     */
    public TraceMeta meta()
    {
        return meta;
    }

    /**
     * @return one row per exact concurrency, ascending.
     */
    public List<Row> rows()
    {
        return rows;
    }

    /**
     * @return the row over every record.
     */
    public Row all()
    {
        return all;
    }

    /**
     * @return what the reader tolerated (a cut last line, a missing gzip trailer).
     */
    public List<String> warnings()
    {
        return warnings;
    }

    /**
     * The samples and ranges of one row while the file is read.
     */
    private static final class Accumulator
    {
        private long count;
        private long promptMin = Long.MAX_VALUE;
        private long promptMax = Long.MIN_VALUE;
        private long outputMin = Long.MAX_VALUE;
        private long outputMax = Long.MIN_VALUE;
        private final WeightedSamples ttftMs;
        private final WeightedSamples itlMs;
        private final TreeMap<String, Long> finishReasons = new TreeMap<>();

        Accumulator()
        {
            this(64, 64);
        }

        Accumulator(final int ttftCapacity, final int itlCapacity)
        {
            ttftMs = new WeightedSamples(ttftCapacity);
            itlMs = new WeightedSamples(itlCapacity);
        }

        void add(final TraceRecord record)
        {
            count++;
            promptMin = Math.min(promptMin, record.promptTokens());
            promptMax = Math.max(promptMax, record.promptTokens());
            outputMin = Math.min(outputMin, record.outputTokens());
            outputMax = Math.max(outputMax, record.outputTokens());
            ttftMs.add(record.ttftMs());
            addItl(record, itlMs);
            finishReasons.merge(null == record.finishReason() ? NO_FINISH_REASON : record.finishReason(), 1L,
                Long::sum);
        }

        void addRangesAndReasons(final Accumulator other)
        {
            count += other.count;
            promptMin = Math.min(promptMin, other.promptMin);
            promptMax = Math.max(promptMax, other.promptMax);
            outputMin = Math.min(outputMin, other.outputMin);
            outputMax = Math.max(outputMax, other.outputMax);
            other.finishReasons.forEach((reason, n) -> finishReasons.merge(reason, n, Long::sum));
        }

        Row toRow(final Long concurrency)
        {
            return toRow(concurrency, Quantiles.of(ttftMs), Quantiles.of(itlMs), itlMs.count());
        }

        Row toRow(final Long concurrency, final Quantiles ttft, final Quantiles itl, final long itlSamples)
        {
            final boolean empty = 0 == count;
            return new Row(concurrency, count, empty ? 0 : promptMin, empty ? 0 : promptMax, empty ? 0 : outputMin,
                empty ? 0 : outputMax, ttft, itl, itlSamples,
                Collections.unmodifiableSortedMap(new TreeMap<>(finishReasons)));
        }
    }

    /**
     * Add a record's per-token ITL samples (see the class comment).
     *
     * @param record the record.
     * @param samples where to add them.
     */
    public static void addItl(final TraceRecord record, final WeightedSamples samples)
    {
        final double[] gaps = record.itlMs();
        if (null != gaps)
        {
            final int[] tokens = record.itlTokens();
            for (int i = 0; i < gaps.length; i++)
            {
                final long n = null == tokens ? 1 : Math.max(1, Integer.toUnsignedLong(tokens[i]));
                samples.add(gaps[i] / n, n);
            }
        }
        else if (null != record.itlSummary())
        {
            samples.add(record.itlSummary().meanMs(), record.itlSummary().count());
        }
    }
}
