package dev.tapedeck.trace.tools;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.tapedeck.trace.TraceFiles;
import dev.tapedeck.trace.TraceFormatException;

/**
 * Reads a step-stats sidecar line by line: JSONL (gzip when compressed), one line per engine output that carried
 * scheduler stats, {@code {"ts_ms": <ms since capture start>, "scheduler": {<vLLM SchedulerStats>}}}. The scheduler
 * object's fields differ between vLLM lines; {@link Step} reads the few the exporter uses and tolerates the rest
 * being absent. Not thread safe.
 */
final class StepStatsSidecar implements Closeable
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final String name;
    private final BufferedReader reader;
    private long lineNumber;

    /**
     * One line of the sidecar.
     *
     * @param line its 1-based line number.
     * @param tsMs milliseconds since capture start (the zero of {@code arrival_ms}).
     * @param runningRequests {@code num_running_reqs}, or NaN.
     * @param waitingRequests {@code num_waiting_reqs}, or NaN.
     * @param kvCacheUsage {@code kv_cache_usage} (0..1), or NaN.
     * @param prefillRequests {@code prefix_cache_stats.requests}: requests that started prefill in the step, or 0.
     * @param prefillTokens {@code prefix_cache_stats.queries}: their prompt tokens looked up, or 0.
     * @param draftTokens {@code spec_decoding_stats.num_draft_tokens}, or 0.
     * @param acceptedTokens {@code spec_decoding_stats.num_accepted_tokens}, or 0.
     */
    record Step(long line, double tsMs, double runningRequests, double waitingRequests, double kvCacheUsage,
        long prefillRequests, long prefillTokens, long draftTokens, long acceptedTokens)
    {
        boolean hasPrefill()
        {
            return prefillRequests > 0 || prefillTokens > 0;
        }
    }

    StepStatsSidecar(final Path path) throws IOException
    {
        name = path.toString();
        reader = new BufferedReader(new InputStreamReader(TraceFiles.openInput(path), StandardCharsets.UTF_8),
            64 * 1024);
    }

    /**
     * @return the next line's step, or null at the end.
     * @throws IOException if reading fails; {@link TraceFormatException} naming file and line if a line is bad.
     */
    Step next() throws IOException
    {
        while (true)
        {
            final String line = reader.readLine();
            if (null == line)
            {
                return null;
            }
            lineNumber++;
            if (line.isBlank())
            {
                continue;
            }
            final JsonNode node;
            try
            {
                node = MAPPER.readTree(line);
            }
            catch (final JsonProcessingException ex)
            {
                throw error("not valid JSON: " + ex.getOriginalMessage());
            }
            if (null == node || !node.isObject())
            {
                throw error("a step-stats line must be an object {\"ts_ms\": ..., \"scheduler\": {...}}");
            }
            final JsonNode ts = node.get("ts_ms");
            if (null == ts || !ts.isNumber() || !Double.isFinite(ts.asDouble()))
            {
                throw error("ts_ms must be a number");
            }
            final JsonNode scheduler = node.get("scheduler");
            if (null == scheduler || !scheduler.isObject())
            {
                throw error("scheduler must be an object");
            }
            final JsonNode prefix = scheduler.path("prefix_cache_stats");
            final JsonNode spec = scheduler.path("spec_decoding_stats");
            return new Step(lineNumber, ts.asDouble(), number(scheduler, "num_running_reqs"),
                number(scheduler, "num_waiting_reqs"), number(scheduler, "kv_cache_usage"),
                prefix.path("requests").asLong(0), prefix.path("queries").asLong(0),
                spec.path("num_draft_tokens").asLong(0), spec.path("num_accepted_tokens").asLong(0));
        }
    }

    private static double number(final JsonNode object, final String field)
    {
        final JsonNode value = object.get(field);
        return null != value && value.isNumber() ? value.asDouble() : Double.NaN;
    }

    private TraceFormatException error(final String message)
    {
        return new TraceFormatException(name + ":" + lineNumber + ": " + message);
    }

    @Override
    public void close() throws IOException
    {
        reader.close();
    }
}
