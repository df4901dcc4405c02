package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceValidation;
import dev.tapedeck.trace.TraceWriter;

/**
 * The result JSON of {@code vllm bench serve --save-result --save-detailed}: parallel per-request arrays
 * {@code input_lens}, {@code output_lens}, {@code start_times} (seconds of the client's {@code time.perf_counter()},
 * an arbitrary origin), {@code ttfts} (seconds), {@code itls} (per request, one gap per streamed chunk, seconds) and
 * {@code errors} (empty for a success). Failed requests are skipped. Becomes a workload or a vllm-vcr trace. Immutable
 * once read.
 */
final class VllmBenchResult
{
    private static final Set<String> SKIPPED = Set.of("generated_texts");

    private final LocatedJson doc;
    private final JsonNode root;
    private final int count;
    private final boolean[] failed;
    private final List<String> notes = new ArrayList<>();

    private VllmBenchResult(final LocatedJson doc)
    {
        this.doc = doc;
        this.root = doc.root();
        final JsonNode input = root.get("input_lens");
        if (!root.isObject() || null == input || null == root.get("output_lens"))
        {
            throw new TraceFormatException(doc.name() + ": not a detailed vllm bench result: input_lens and " +
                "output_lens are missing (run vllm bench serve with --save-result --save-detailed)");
        }
        this.count = array("input_lens").size();
        array("output_lens");
        this.failed = new boolean[count];
        final JsonNode errors = array("errors");
        long failures = 0;
        for (int i = 0; null != errors && i < count; i++)
        {
            final JsonNode error = errors.get(i);
            failed[i] = null != error && !error.isNull() && !error.asText("").isEmpty();
            failures += failed[i] ? 1 : 0;
        }
        if (failures > 0)
        {
            notes.add(failures + " failed requests (non-empty errors[i]) skipped");
        }
    }

    static VllmBenchResult read(final Path path) throws IOException
    {
        return new VllmBenchResult(LocatedJson.read(path, SKIPPED));
    }

    /**
     * @return the array {@code field}, checked to hold one entry per request, or null when absent.
     */
    private JsonNode array(final String field)
    {
        final JsonNode value = JsonValues.optional(root, field);
        if (null == value)
        {
            return null;
        }
        if (!value.isArray())
        {
            throw JsonValues.error(doc.where(root, field), "must be an array");
        }
        if ("input_lens".equals(field))
        {
            return value;
        }
        if (value.size() != count)
        {
            throw JsonValues.error(doc.where(value, field), "has " + value.size() + " entries, input_lens has " +
                count);
        }
        return value;
    }

    private String where(final String field, final int index)
    {
        return doc.where(root.get(field), field + "[" + index + "]");
    }

    Workload toWorkload()
    {
        final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.VLLM_BENCH.cliName());
        final JsonNode input = array("input_lens");
        final JsonNode output = array("output_lens");
        final double[] startS = startTimes();
        final double earliestS = earliest(startS);
        for (int i = 0; i < count; i++)
        {
            if (failed[i])
            {
                continue;
            }
            builder.add(where("input_lens", i), null == startS ? 0 : (startS[i] - earliestS) * 1000.0,
                JsonValues.natural(input.get(i), where("input_lens", i), "input_lens[" + i + "]"),
                JsonValues.natural(output.get(i), where("output_lens", i), "output_lens[" + i + "]"),
                null, null, 0, Double.NaN);
        }
        if (0 == builder.size())
        {
            throw new TraceFormatException(doc.name() + ": no successful request; nothing to replay");
        }
        builder.note(null == startS ? "start_times is absent (an older vLLM): every request arrives at 0 ms, in " +
            "file order" : "start_times are seconds of the client's perf_counter; arrivals are (start - earliest) x " +
            "1000 ms; output lengths as measured");
        builder.notes().addAll(notes);
        return builder.build(false);
    }

    private double[] startTimes()
    {
        final JsonNode starts = array("start_times");
        if (null == starts)
        {
            return null;
        }
        final double[] seconds = new double[count];
        for (int i = 0; i < count; i++)
        {
            seconds[i] = JsonValues.number(starts.get(i), where("start_times", i), "start_times[" + i + "]");
        }
        return seconds;
    }

    private double earliest(final double[] startS)
    {
        double earliest = Double.POSITIVE_INFINITY;
        for (int i = 0; null != startS && i < count; i++)
        {
            if (!failed[i])
            {
                earliest = Math.min(earliest, startS[i]);
            }
        }
        return earliest;
    }

    TraceConversion.Result writeTrace(final Path out, final String modelOverride) throws IOException
    {
        final JsonNode ttfts = array("ttfts");
        final JsonNode itls = array("itls");
        if (null == ttfts || null == itls)
        {
            throw new TraceFormatException(doc.name() + ": ttfts and itls are needed for a trace (run vllm bench " +
                "serve with --save-detailed)");
        }
        final List<String> resultNotes = new ArrayList<>(notes);
        final JsonNode modelId = JsonValues.optional(root, "model_id");
        final String model = null != modelOverride ? modelOverride : null == modelId ? null : modelId.asText();
        if (null == model)
        {
            resultNotes.add("the result names no model_id; pass --model to set one");
        }
        final double[] startS = startTimes();
        final double earliestS = earliest(startS);
        final double[][] itlMs = new double[count][];
        final double[] ttftMs = new double[count];
        final NoteTally gapCounts = new NoteTally("requests have a gap count other than output_tokens - 1 (chunks " +
            "of several tokens, or another token count): itl_ms written as measured");
        for (int i = 0; i < count; i++)
        {
            if (failed[i])
            {
                continue;
            }
            ttftMs[i] = JsonValues.nonNegative(ttfts.get(i), where("ttfts", i), "ttfts[" + i + "]") * 1000.0;
            final JsonNode gaps = itls.get(i);
            if (!gaps.isArray())
            {
                throw JsonValues.error(where("itls", i), "itls[" + i + "] must be an array of seconds");
            }
            itlMs[i] = new double[gaps.size()];
            for (int g = 0; g < gaps.size(); g++)
            {
                itlMs[i][g] = JsonValues.nonNegative(gaps.get(g), where("itls", i), "itls[" + i + "][" + g + "]") *
                    1000.0;
            }
        }
        final long[] concurrency = null == startS ? null : concurrency(startS, ttftMs, itlMs);
        final JsonNode input = array("input_lens");
        final JsonNode output = array("output_lens");
        long written = 0;
        double lastMs = 0;
        try (TraceWriter writer = TraceWriter.open(out, new TraceMeta().model(model).source("vllm-bench")))
        {
            for (int i = 0; i < count; i++)
            {
                if (failed[i])
                {
                    continue;
                }
                final String where = where("input_lens", i);
                final long outputTokens = JsonValues.natural(output.get(i), where("output_lens", i),
                    "output_lens[" + i + "]");
                if (outputTokens > 0 && itlMs[i].length != outputTokens - 1)
                {
                    gapCounts.add(where + ": " + itlMs[i].length + " gaps for " + outputTokens + " tokens");
                }
                final TraceRecord record = new TraceRecord()
                    .promptTokens(JsonValues.natural(input.get(i), where, "input_lens[" + i + "]"))
                    .outputTokens(outputTokens).ttftMs(ttftMs[i]).itlMs(itlMs[i]);
                if (null != startS)
                {
                    record.arrivalMs((startS[i] - earliestS) * 1000.0).concurrency(concurrency[i]);
                    lastMs = Math.max(lastMs, record.arrivalMs());
                }
                final List<String> problems = TraceValidation.problems(record);
                if (!problems.isEmpty())
                {
                    throw JsonValues.error(where, String.join("; ", problems));
                }
                writer.write(record, false);
                written++;
            }
        }
        resultNotes.add("ttfts and itls are seconds, written as ttft_ms and itl_ms" + (null == startS ?
            "; start_times is absent, so no arrival_ms or concurrency" : "; arrival_ms = (start - earliest) x 1000; " +
            "concurrency = requests in flight at the arrival (start to start + ttft + sum(itl)) + 1"));
        gapCounts.addTo(resultNotes);
        return new TraceConversion.Result(written, lastMs, resultNotes);
    }

    /**
     * Requests in flight when each one starts, itself included: a sweep over start times with a heap of the ends of
     * those already started (end = start + ttft + the sum of its gaps, the last token).
     */
    private long[] concurrency(final double[] startS, final double[] ttftMs, final double[][] itlMs)
    {
        final List<Integer> order = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            if (!failed[i])
            {
                order.add(i);
            }
        }
        order.sort(Comparator.comparingDouble(i -> startS[i]));
        final PriorityQueue<Double> endsMs = new PriorityQueue<>();
        final long[] concurrency = new long[count];
        for (final int i : order)
        {
            final double startMs = startS[i] * 1000.0;
            while (!endsMs.isEmpty() && endsMs.peek() <= startMs)
            {
                endsMs.poll();
            }
            concurrency[i] = endsMs.size() + 1;
            double endMs = startMs + ttftMs[i];
            for (final double gap : itlMs[i])
            {
                endMs += gap;
            }
            endsMs.add(endMs);
        }
        return concurrency;
    }
}
