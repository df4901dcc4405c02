package dev.tapedeck.trace.tools;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

import com.fasterxml.jackson.core.JsonGenerator;

import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * {@code inspect perfetto}: a trace as Chrome trace-event JSON, which ui.perfetto.dev (and chrome://tracing) open.
 * Times are microseconds since the capture started (the zero of {@code arrival_ms}).
 * <ul>
 *   <li>Process 1 (named {@code --name}, else {@code inference trace: <model>}) holds the requests. Records are
 *       taken in arrival order (a stable sort on {@code arrival_ms}; request {@code i} is the i-th of that order, as
 *       in replay ids); records without {@code arrival_ms} are skipped and counted.</li>
 *   <li>Each request is a {@code req<i> prefill} slice from arrival for its TTFT, then one slice per ITL gap,
 *       {@code decode} or {@code decode xN} when the chunk closing the gap carried N tokens (a record with only
 *       {@code itl_summary} gets one {@code decode summary} slice of count x mean). Arguments carry the record's
 *       numbers, the gap's {@code itl_ctx} and its token ids when recorded.</li>
 *   <li>Tracks: requests are packed on lanes by greedy interval partitioning in arrival order (a request takes the
 *       lowest lane free at its arrival; a lane is free once its request has ended, ending at the arrival instant
 *       counts), so there are as many lanes as the peak concurrency. {@code trackPerRequest} gives each request its
 *       own track {@code req <i> (p<prompt> o<output>)} instead.</li>
 *   <li>Counters on process 1: {@code active_requests} (+1 at arrival, -1 at the last token), and from
 *       {@code itl_ctx}, sampled at gap ends, {@code engine_running} and {@code prefill_tokens} (the largest value
 *       when requests report the same instant).</li>
 *   <li>With a step-stats sidecar: counters {@code sched_running_reqs}, {@code sched_waiting_reqs},
 *       {@code sched_kv_cache_usage} and {@code sched_accept_rate} (accepted / draft tokens, steps with drafts
 *       only), and process 2 {@code scheduler steps}: one slice per step between consecutive sidecar lines,
 *       {@code prefill+decode B<running> (+<r>r <t>t)}, {@code prefill (+<r>r <t>t)} or {@code decode B<running>}
 *       ({@code r}, {@code t}: requests and prompt tokens that entered prefill, from {@code prefix_cache_stats}).</li>
 * </ul>
 * The records are held in memory (the lanes need arrival order); the JSON is written as it is produced, never held.
 * Counters write a sample only when the value changes. Stateless; thread safe.
 */
public final class PerfettoExport
{
    /** The process of the requests and counters. */
    static final int REQUESTS_PID = 1;
    /** The process of the scheduler steps. */
    static final int STEPS_PID = 2;

    private PerfettoExport()
    {
    }

    /**
     * What to export.
     *
     * @param name the process name, or null for {@code inference trace: <model>}.
     * @param trackPerRequest true for one track per request instead of packed lanes.
     * @param stepStats a step-stats sidecar, or null.
     */
    public record Options(String name, boolean trackPerRequest, Path stepStats)
    {
        /**
         * @return lanes, the default name, no sidecar.
         */
        public static Options defaults()
        {
            return new Options(null, false, null);
        }
    }

    /**
     * What was exported.
     *
     * @param requests requests exported.
     * @param skippedWithoutArrival records skipped because they have no {@code arrival_ms}.
     * @param tracks request tracks (lanes, or requests with {@code trackPerRequest}).
     * @param peakConcurrency the most requests in flight at once (= lanes).
     * @param steps scheduler-step slices from the sidecar.
     * @param events trace events written.
     * @param warnings what the trace reader tolerated.
     */
    public record Result(int requests, int skippedWithoutArrival, int tracks, int peakConcurrency, long steps,
        long events, List<String> warnings)
    {
    }

    /**
     * Export a trace.
     *
     * @param trace the trace file.
     * @param options what to export.
     * @param out where the JSON goes (flushed, not closed).
     * @return what was exported.
     * @throws IOException if a file cannot be read or the output written; a {@link
     *     dev.tapedeck.trace.TraceFormatException} naming file and line for a malformed record or sidecar line.
     */
    public static Result write(final Path trace, final Options options, final OutputStream out) throws IOException
    {
        final List<TraceRecord> records = new ArrayList<>();
        int skipped = 0;
        final TraceMeta meta;
        final List<String> warnings;
        try (TraceReader reader = TraceReader.open(trace))
        {
            for (TraceRecord record = reader.next(); null != record; record = reader.next())
            {
                if (null == record.arrivalMs())
                {
                    skipped++;
                }
                else
                {
                    records.add(record);
                }
            }
            meta = reader.meta();
            warnings = List.copyOf(reader.warnings());
        }
        records.sort(Comparator.comparingDouble(TraceRecord::arrivalMs));
        final int count = records.size();
        final double[] startMs = new double[count];
        final double[] endMs = new double[count];
        for (int i = 0; i < count; i++)
        {
            final TraceRecord record = records.get(i);
            startMs[i] = record.arrivalMs();
            endMs[i] = endMs(record);
        }
        final int[] lanes = lanes(startMs, endMs);
        final int peak = Arrays.stream(lanes).max().orElse(-1) + 1;
        final int tracks = options.trackPerRequest() ? count : peak;
        long steps = 0;
        final long events;
        try (PerfettoEvents writer = new PerfettoEvents(out))
        {
            final String name = null != options.name() ? options.name() :
                null == meta.model() ? "inference trace" : "inference trace: " + meta.model();
            writer.metadata(REQUESTS_PID, 0, "process_name", name, 0);
            writer.metadata(REQUESTS_PID, 0, "process_sort_index", null, 0);
            for (int track = 0; track < tracks; track++)
            {
                final String label = options.trackPerRequest() ? "req " + track + " (p" +
                    records.get(track).promptTokens() + " o" + records.get(track).outputTokens() + ")" :
                    "lane " + track;
                writer.metadata(REQUESTS_PID, track + 1, "thread_name", label, 0);
                writer.metadata(REQUESTS_PID, track + 1, "thread_sort_index", null, track);
            }
            for (int i = 0; i < count; i++)
            {
                writeRequest(writer, i, records.get(i), (options.trackPerRequest() ? i : lanes[i]) + 1);
            }
            writeActiveRequests(writer, startMs, endMs);
            writeContextCounters(writer, records);
            if (null != options.stepStats())
            {
                steps = writeSteps(writer, options.stepStats());
            }
            events = writer.events();
        }
        out.flush();
        return new Result(count, skipped, tracks, peak, steps, events, warnings);
    }

    /**
     * @param startMs arrivals, ascending.
     * @param endMs ends.
     * @return the lane of each request: greedy interval partitioning, lowest free lane first.
     */
    static int[] lanes(final double[] startMs, final double[] endMs)
    {
        final int[] lanes = new int[startMs.length];
        final PriorityQueue<Integer> busy = new PriorityQueue<>(
            Comparator.<Integer>comparingDouble(i -> endMs[i]).thenComparingInt(i -> lanes[i]));
        final PriorityQueue<Integer> free = new PriorityQueue<>();
        int open = 0;
        for (int i = 0; i < startMs.length; i++)
        {
            while (!busy.isEmpty() && endMs[busy.peek()] <= startMs[i])
            {
                free.add(lanes[busy.poll()]);
            }
            lanes[i] = free.isEmpty() ? open++ : free.poll();
            busy.add(i);
        }
        return lanes;
    }

    /**
     * @return when the record's last token came, summed in the order the slices are laid out (so a lane is freed
     *     exactly where its last slice ends).
     */
    private static double endMs(final TraceRecord record)
    {
        double atMs = record.arrivalMs() + record.ttftMs();
        if (null != record.itlMs())
        {
            for (final double gap : record.itlMs())
            {
                atMs += gap;
            }
        }
        else if (null != record.itlSummary() && record.itlSummary().count() > 0)
        {
            atMs += record.itlSummary().count() * record.itlSummary().meanMs();
        }
        return atMs;
    }

    private static void writeRequest(final PerfettoEvents writer, final int index, final TraceRecord record,
        final int tid) throws IOException
    {
        final JsonGenerator json = writer.json();
        final double[] gaps = record.itlMs();
        final int[] chunkTokens = record.itlTokens();
        final int[] ids = record.outputTokenIds();
        long laterTokens = 0;
        if (null != gaps)
        {
            for (int g = 0; g < gaps.length; g++)
            {
                laterTokens += null == chunkTokens ? 1 : Integer.toUnsignedLong(chunkTokens[g]);
            }
        }
        else if (null != record.itlSummary())
        {
            laterTokens = record.itlSummary().count();
        }
        final int firstChunk = (int)Math.max(0, Math.min(Integer.MAX_VALUE, record.outputTokens() - laterTokens));
        final double arrivalMs = record.arrivalMs();
        double atMs = arrivalMs + record.ttftMs();
        writer.beginSlice(REQUESTS_PID, tid, "req" + index + " prefill", "prefill", "rail_animation", arrivalMs,
            atMs);
        json.writeNumberField("req", index);
        json.writeNumberField("prompt_tokens", record.promptTokens());
        json.writeNumberField("cached_tokens", record.cachedTokens());
        json.writeNumberField("output_tokens", record.outputTokens());
        json.writeNumberField("ttft_ms", record.ttftMs());
        json.writeNumberField("first_chunk_tokens", firstChunk);
        if (null != record.finishReason())
        {
            json.writeStringField("finish_reason", record.finishReason());
        }
        writeIds(json, ids, 0, firstChunk);
        writer.endSlice();
        if (null != gaps)
        {
            final TraceRecord.ItlContext context = record.itlContext();
            int idPosition = firstChunk;
            for (int g = 0; g < gaps.length; g++)
            {
                final int tokens = null == chunkTokens ? 1 : chunkTokens[g];
                final double endMs = atMs + gaps[g];
                writer.beginSlice(REQUESTS_PID, tid, 1 == tokens ? "decode" : "decode x" + tokens, "decode",
                    "thread_state_running", atMs, endMs);
                json.writeNumberField("req", index);
                json.writeNumberField("gap_ms", gaps[g]);
                json.writeNumberField("tokens", tokens);
                if (null != context)
                {
                    json.writeNumberField("num_running", Integer.toUnsignedLong(context.numRunning()[g]));
                    json.writeNumberField("prefill_tokens", Integer.toUnsignedLong(context.prefillTokens()[g]));
                }
                writeIds(json, ids, idPosition, tokens);
                writer.endSlice();
                atMs = endMs;
                idPosition += tokens;
            }
        }
        else if (null != record.itlSummary() && record.itlSummary().count() > 0)
        {
            final TraceRecord.ItlSummary summary = record.itlSummary();
            writer.beginSlice(REQUESTS_PID, tid, "decode summary", "decode", "thread_state_running", atMs,
                atMs + summary.count() * summary.meanMs());
            json.writeNumberField("req", index);
            json.writeNumberField("gaps", summary.count());
            json.writeNumberField("mean_ms", summary.meanMs());
            writer.endSlice();
        }
    }

    private static void writeIds(final JsonGenerator json, final int[] ids, final int from, final int length)
        throws IOException
    {
        if (null == ids || length <= 0 || from + length > ids.length)
        {
            return;
        }
        json.writeArrayFieldStart("token_ids");
        for (int i = from; i < from + length; i++)
        {
            json.writeNumber(Integer.toUnsignedLong(ids[i]));
        }
        json.writeEndArray();
    }

    private static void writeActiveRequests(final PerfettoEvents writer, final double[] startMs, final double[] endMs)
        throws IOException
    {
        final int count = startMs.length;
        final double[] times = new double[2 * count];
        final long[] deltas = new long[2 * count];
        for (int i = 0; i < count; i++)
        {
            times[2 * i] = startMs[i];
            deltas[2 * i] = 1;
            times[2 * i + 1] = endMs[i];
            deltas[2 * i + 1] = -1;
        }
        WeightedSamples.sort(times, deltas, 0, times.length - 1);
        final PerfettoEvents.Series series = new PerfettoEvents.Series(REQUESTS_PID, "active_requests");
        long active = 0;
        for (int i = 0; i < times.length; i++)
        {
            active += deltas[i];
            if (i + 1 == times.length || times[i + 1] != times[i])
            {
                series.sample(writer, times[i], active);
            }
        }
    }

    private static void writeContextCounters(final PerfettoEvents writer, final List<TraceRecord> records)
        throws IOException
    {
        int samples = 0;
        for (final TraceRecord record : records)
        {
            samples += null == record.itlContext() ? 0 : record.itlMs().length;
        }
        if (0 == samples)
        {
            return;
        }
        final double[] runningTimes = new double[samples];
        final long[] running = new long[samples];
        final double[] prefillTimes = new double[samples];
        final long[] prefill = new long[samples];
        int n = 0;
        for (final TraceRecord record : records)
        {
            final TraceRecord.ItlContext context = record.itlContext();
            if (null == context)
            {
                continue;
            }
            double atMs = record.arrivalMs() + record.ttftMs();
            for (int g = 0; g < record.itlMs().length; g++)
            {
                atMs += record.itlMs()[g];
                runningTimes[n] = atMs;
                prefillTimes[n] = atMs;
                running[n] = Integer.toUnsignedLong(context.numRunning()[g]);
                prefill[n] = Integer.toUnsignedLong(context.prefillTokens()[g]);
                n++;
            }
        }
        writeSeries(writer, "engine_running", runningTimes, running);
        writeSeries(writer, "prefill_tokens", prefillTimes, prefill);
    }

    private static void writeSeries(final PerfettoEvents writer, final String name, final double[] times,
        final long[] values) throws IOException
    {
        WeightedSamples.sort(times, values, 0, times.length - 1);
        final PerfettoEvents.Series series = new PerfettoEvents.Series(REQUESTS_PID, name);
        long max = Long.MIN_VALUE;
        for (int i = 0; i < times.length; i++)
        {
            max = Math.max(max, values[i]);
            if (i + 1 == times.length || times[i + 1] != times[i])
            {
                series.sample(writer, times[i], max);
                max = Long.MIN_VALUE;
            }
        }
    }

    private static long writeSteps(final PerfettoEvents writer, final Path sidecar) throws IOException
    {
        writer.metadata(STEPS_PID, 0, "process_name", "scheduler steps", 0);
        writer.metadata(STEPS_PID, 0, "process_sort_index", null, 1);
        writer.metadata(STEPS_PID, 1, "thread_name", "steps", 0);
        final PerfettoEvents.Series running = new PerfettoEvents.Series(REQUESTS_PID, "sched_running_reqs");
        final PerfettoEvents.Series waiting = new PerfettoEvents.Series(REQUESTS_PID, "sched_waiting_reqs");
        final PerfettoEvents.Series kvCache = new PerfettoEvents.Series(REQUESTS_PID, "sched_kv_cache_usage");
        final PerfettoEvents.Series acceptRate = new PerfettoEvents.Series(REQUESTS_PID, "sched_accept_rate");
        long steps = 0;
        try (StepStatsSidecar reader = new StepStatsSidecar(sidecar))
        {
            StepStatsSidecar.Step previous = null;
            for (StepStatsSidecar.Step step = reader.next(); null != step; step = reader.next())
            {
                running.sample(writer, step.tsMs(), step.runningRequests());
                waiting.sample(writer, step.tsMs(), step.waitingRequests());
                kvCache.sample(writer, step.tsMs(), step.kvCacheUsage());
                if (step.draftTokens() > 0)
                {
                    acceptRate.sample(writer, step.tsMs(), (double)step.acceptedTokens() / step.draftTokens());
                }
                if (null != previous && step.tsMs() >= previous.tsMs())
                {
                    writeStep(writer, previous.tsMs(), step);
                    steps++;
                }
                previous = step;
            }
        }
        return steps;
    }

    private static void writeStep(final PerfettoEvents writer, final double startMs, final StepStatsSidecar.Step step)
        throws IOException
    {
        final long running = Double.isNaN(step.runningRequests()) ? 0 : (long)step.runningRequests();
        final String prefill = " (+" + step.prefillRequests() + "r " + step.prefillTokens() + "t)";
        final String name;
        final String color;
        if (!step.hasPrefill())
        {
            name = "decode B" + running;
            color = "thread_state_running";
        }
        else if (running > step.prefillRequests())
        {
            name = "prefill+decode B" + running + prefill;
            color = "rail_load";
        }
        else
        {
            name = "prefill" + prefill;
            color = "rail_animation";
        }
        final double stepMs = step.tsMs() - startMs;
        writer.beginSlice(STEPS_PID, 1, name, "step", color, startMs, step.tsMs());
        final JsonGenerator json = writer.json();
        json.writeNumberField("running", running);
        if (!Double.isNaN(step.waitingRequests()))
        {
            json.writeNumberField("waiting", (long)step.waitingRequests());
        }
        json.writeNumberField("prefill_requests", step.prefillRequests());
        json.writeNumberField("prefill_tokens", step.prefillTokens());
        if (!Double.isNaN(step.kvCacheUsage()))
        {
            json.writeNumberField("kv_cache_usage", step.kvCacheUsage());
        }
        json.writeNumberField("step_ms", stepMs);
        if (step.draftTokens() > 0)
        {
            json.writeNumberField("accepted", step.acceptedTokens());
            json.writeNumberField("draft", step.draftTokens());
        }
        writer.endSlice();
    }
}
