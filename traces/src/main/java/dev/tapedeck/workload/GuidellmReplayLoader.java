package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFiles;

/**
 * guidellm's replay trace ({@code --data kind=trace_synthetic}): JSONL, one request per line with {@code timestamp} in
 * SECONDS from any origin (absolute or monotonic), {@code input_length} and {@code output_length}. As guidellm does,
 * rows are sorted by timestamp and the first becomes 0; arrivals are {@code timestamp * 1000} ms. Other fields are
 * ignored ({@code hash_ids} with a note: guidellm's {@code mooncake} kind, which has them, is read with
 * {@code --format mooncake}). Streaming; stateless; thread safe.
 */
final class GuidellmReplayLoader
{
    private GuidellmReplayLoader()
    {
    }

    static Workload load(final Path path) throws IOException
    {
        final String name = path.toString();
        final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.GUIDELLM_REPLAY.cliName());
        final NoteTally hashIds = new NoteTally("requests carry hash_ids, which trace_synthetic does not define; " +
            "ignored (a Mooncake file in milliseconds? use --format mooncake)");
        try (JsonlObjects lines = new JsonlObjects(name, TraceFiles.openInput(path)))
        {
            for (JsonNode line = lines.next(); null != line; line = lines.next())
            {
                final String where = lines.where();
                final double timestampS = JsonValues.number(JsonValues.required(line, "timestamp", where), where,
                    "timestamp");
                final long inputLength = JsonValues.natural(JsonValues.required(line, "input_length", where), where,
                    "input_length");
                final long outputLength = JsonValues.natural(JsonValues.required(line, "output_length", where), where,
                    "output_length");
                if (null != JsonValues.optional(line, "hash_ids"))
                {
                    hashIds.add(where);
                }
                builder.add(where, timestampS * 1000.0, inputLength, outputLength, null, null, 0, Double.NaN);
            }
        }
        builder.note("timestamp is in seconds (guidellm trace_synthetic); arrivals are timestamp x 1000 ms");
        hashIds.addTo(builder.notes());
        return builder.build(true);
    }
}
