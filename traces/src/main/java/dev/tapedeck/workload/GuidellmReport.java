package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceWriter;

/**
 * A guidellm benchmark report ({@code benchmarks.json}; layouts of guidellm 0.3 to 0.7): the successful requests of
 * every benchmark with their sizes, start times (Unix seconds) and measured TTFT and mean ITL. Becomes a workload
 * (arrivals from the start times) or a vllm-vcr trace the way vcr's {@code from-guidellm} makes one. Immutable once
 * read; not thread safe to build.
 */
final class GuidellmReport
{
    /** Per-request fields never needed here, dropped while reading (texts can make a report huge). */
    private static final Set<String> SKIPPED = Set.of("output", "reasoning_output", "request_args", "tool_calls",
        "prompt", "generated_text");

    /**
     * One successful request.
     *
     * @param where {@code file:line: path} of its object.
     * @param startS start time in Unix seconds, NaN when the report has none.
     * @param ttftMs time to first token, NaN when absent.
     * @param itlMeanMs mean inter-token latency, NaN when absent.
     */
    record Entry(String where, long promptTokens, long outputTokens, long cachedTokens, double startS, double ttftMs,
        double itlMeanMs, long concurrency)
    {
    }

    private final String name;
    private final String model;
    private final List<Entry> entries = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    private GuidellmReport(final LocatedJson doc)
    {
        this.name = doc.name();
        final JsonNode root = doc.root();
        final JsonNode args = root.path("args");
        final String argModel = args.path("model").isTextual() ? args.path("model").textValue() :
            args.path("target").isTextual() ? args.path("target").textValue() : null;
        this.model = argModel;
        final JsonNode benchmarks = root.get("benchmarks");
        if (null == benchmarks || !benchmarks.isArray() || benchmarks.isEmpty())
        {
            throw new TraceFormatException(name + ": not a guidellm report with results: benchmarks is missing or " +
                "empty");
        }
        long incomplete = 0;
        long errored = 0;
        for (int b = 0; b < benchmarks.size(); b++)
        {
            final JsonNode benchmark = benchmarks.get(b);
            final String path = "benchmarks[" + b + "]";
            final long concurrency = concurrency(benchmark, doc.where(benchmark, path));
            final JsonNode requests = benchmark.path("requests");
            final JsonNode successful = requests.path("successful");
            if (!successful.isArray())
            {
                throw JsonValues.error(doc.where(benchmark, path), "requests.successful is missing (a report saved " +
                    "without per-request data?)");
            }
            incomplete += requests.path("incomplete").size();
            errored += requests.path("errored").size();
            for (int r = 0; r < successful.size(); r++)
            {
                final JsonNode request = successful.get(r);
                entries.add(entry(request, doc.where(request, path + ".requests.successful[" + r + "]"),
                    concurrency));
            }
        }
        if (incomplete + errored > 0)
        {
            notes.add(incomplete + " incomplete and " + errored + " errored requests skipped (only successful " +
                "requests are read)");
        }
        if (benchmarks.size() > 1)
        {
            notes.add(benchmarks.size() + " benchmarks (a sweep?) read one after another");
        }
    }

    static GuidellmReport read(final Path path) throws IOException
    {
        return new GuidellmReport(LocatedJson.read(path, SKIPPED));
    }

    private long concurrency(final JsonNode benchmark, final String where)
    {
        final JsonNode strategy = benchmark.path("config").path("strategy");
        final String type = strategy.path("type_").asText("");
        switch (type)
        {
            case "concurrent":
                if (strategy.path("streams").canConvertToLong())
                {
                    return JsonValues.natural(strategy.get("streams"), where, "config.strategy.streams");
                }
                break;
            case "synchronous":
                return 1;
            case "throughput":
                if (strategy.path("max_concurrency").canConvertToLong())
                {
                    return JsonValues.natural(strategy.get("max_concurrency"), where,
                        "config.strategy.max_concurrency");
                }
                break;
            default:
                break;
        }
        notes.add(where + ": concurrency unknown for strategy '" + type + "'; 1 used, as vllm-vcr does");
        return 1;
    }

    private static Entry entry(final JsonNode request, final String where, final long concurrency)
    {
        final long prompt = JsonValues.natural(JsonValues.required(request, "prompt_tokens", where), where,
            "prompt_tokens");
        final long output = JsonValues.natural(JsonValues.required(request, "output_tokens", where), where,
            "output_tokens");
        final JsonNode cached = JsonValues.optional(request, "cached_tokens");
        double startS = seconds(request, where, "request_start_time");
        if (Double.isNaN(startS))
        {
            startS = seconds(request.path("info").path("timings"), where, "request_start");
        }
        if (Double.isNaN(startS))
        {
            startS = seconds(request, where, "start_time"); // guidellm 0.3
        }
        double ttftMs = milliseconds(request, where, "time_to_first_token_ms");
        final double firstTokenS = seconds(request, where, "first_token_time");
        if (Double.isNaN(ttftMs) && !Double.isNaN(firstTokenS) && !Double.isNaN(startS))
        {
            ttftMs = (firstTokenS - startS) * 1000.0; // guidellm 0.3
        }
        double itlMs = milliseconds(request, where, "inter_token_latency_ms");
        final double lastTokenS = seconds(request, where, "last_token_time");
        if (Double.isNaN(itlMs) && output > 1 && !Double.isNaN(firstTokenS) && !Double.isNaN(lastTokenS))
        {
            itlMs = (lastTokenS - firstTokenS) * 1000.0 / (output - 1); // guidellm 0.3
        }
        return new Entry(where, prompt, output, null == cached ? 0 : JsonValues.natural(cached, where,
            "cached_tokens"), startS, ttftMs, itlMs, concurrency);
    }

    private static double seconds(final JsonNode object, final String where, final String field)
    {
        final JsonNode value = JsonValues.optional(object, field);
        return null == value ? Double.NaN : JsonValues.number(value, where, field);
    }

    private static double milliseconds(final JsonNode object, final String where, final String field)
    {
        final JsonNode value = JsonValues.optional(object, field);
        return null == value ? Double.NaN : JsonValues.nonNegative(value, where, field);
    }

    private double earliestStartS()
    {
        double earliest = Double.NaN;
        for (final Entry entry : entries)
        {
            if (!Double.isNaN(entry.startS()) && !(entry.startS() >= earliest))
            {
                earliest = entry.startS();
            }
        }
        return earliest;
    }

    Workload toWorkload()
    {
        final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.GUIDELLM.cliName());
        final NoteTally noStart = new NoteTally("successful requests have no start time and were skipped");
        final double earliestS = earliestStartS();
        for (final Entry entry : entries)
        {
            if (Double.isNaN(entry.startS()))
            {
                noStart.add(entry.where());
                continue;
            }
            builder.add(entry.where(), (entry.startS() - earliestS) * 1000.0, entry.promptTokens(),
                entry.outputTokens(), null, null, 0, Double.NaN);
        }
        if (0 == builder.size())
        {
            throw new TraceFormatException(name + ": no successful request with a start time; nothing to replay");
        }
        builder.note("request start times are Unix seconds; arrivals are (start - earliest start) x 1000 ms; " +
            "output lengths as measured");
        builder.notes().addAll(notes);
        noStart.addTo(builder.notes());
        return builder.build(false);
    }

    TraceConversion.Result writeTrace(final Path out, final String modelOverride) throws IOException
    {
        final List<String> resultNotes = new ArrayList<>(notes);
        final String traceModel = null != modelOverride ? modelOverride : model;
        if (null == traceModel)
        {
            resultNotes.add("the report names no model (args.model, args.target); pass --model to set one");
        }
        if (entries.isEmpty())
        {
            throw new TraceFormatException(name + ": no successful request to convert");
        }
        final double earliestS = earliestStartS();
        final TraceMeta meta = new TraceMeta().model(traceModel).source("guidellm");
        double firstMs = Double.POSITIVE_INFINITY;
        double lastMs = Double.NEGATIVE_INFINITY;
        try (TraceWriter writer = TraceWriter.open(out, meta))
        {
            for (final Entry entry : entries)
            {
                if (Double.isNaN(entry.ttftMs()))
                {
                    throw JsonValues.error(entry.where(), "time_to_first_token_ms is missing");
                }
                final TraceRecord record = new TraceRecord().promptTokens(entry.promptTokens())
                    .cachedTokens(entry.cachedTokens()).outputTokens(entry.outputTokens()).ttftMs(entry.ttftMs())
                    .concurrency(entry.concurrency());
                if (entry.outputTokens() > 1)
                {
                    record.itlSummary(new TraceRecord.ItlSummary(Double.isNaN(entry.itlMeanMs()) ? 0 :
                        entry.itlMeanMs(), entry.outputTokens() - 1));
                }
                if (!Double.isNaN(entry.startS()))
                {
                    final double arrivalMs = (entry.startS() - earliestS) * 1000.0;
                    record.arrivalMs(arrivalMs);
                    firstMs = Math.min(firstMs, arrivalMs);
                    lastMs = Math.max(lastMs, arrivalMs);
                }
                writer.write(record, false);
            }
        }
        resultNotes.add("itl_summary{mean_ms = inter_token_latency_ms, count = output_tokens - 1}; arrival_ms = " +
            "(request start - earliest start) x 1000");
        return new TraceConversion.Result(entries.size(), lastMs > firstMs ? lastMs - firstMs : 0, resultNotes);
    }
}
