package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFiles;
import dev.tapedeck.trace.TraceFormatException;

/**
 * Mooncake's request traces (kvcache-ai/Mooncake FAST'25, also aiperf's {@code mooncake_trace}): JSONL, one request
 * per line: {@code timestamp} in milliseconds, {@code input_length}, {@code output_length} (optional), {@code hash_ids}
 * (optional) naming 512-token blocks, {@code len(hash_ids) == ceil(input_length / 512)}; aiperf's {@code session_id}
 * groups lines into sessions (turns in file order), and its {@code delay} (ms) is a later turn's think time after the
 * previous answer (such a turn may go without a timestamp). Rule violations are noted with file and line, not fatal.
 * Streaming; stateless; thread safe.
 */
final class MooncakeLoader
{
    /** Tokens per hash id in Mooncake traces. */
    static final int BLOCK_SIZE = 512;

    private MooncakeLoader()
    {
    }

    static Workload load(final Path path) throws IOException
    {
        final String name = path.toString();
        final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.MOONCAKE.cliName())
            .hashBlockSize(BLOCK_SIZE);
        final NoteTally ceilRule = new NoteTally("requests break Mooncake's block rule len(hash_ids) == " +
            "ceil(input_length / 512)");
        final NoteTally noOutput = new NoteTally("requests have no output_length (the server decides)");
        final NoteTally firstDelays = new NoteTally("first turns carry aiperf's delay field, which only times a " +
            "later turn (after the previous answer) and is ignored there");
        final Map<String, Integer> turns = new HashMap<>();
        final Map<String, Double> lastArrivalMs = new HashMap<>();
        boolean anyHashIds = false;
        try (JsonlObjects lines = new JsonlObjects(name, TraceFiles.openInput(path)))
        {
            for (JsonNode line = lines.next(); null != line; line = lines.next())
            {
                final String where = lines.where();
                final JsonNode sessionValue = JsonValues.optional(line, "session_id");
                final String session = null == sessionValue ? null : sessionValue.asText();
                final Double previousMs = null == session ? null : lastArrivalMs.get(session);
                final JsonNode timestamp = JsonValues.optional(line, "timestamp");
                if (null == timestamp && null == previousMs)
                {
                    throw new TraceFormatException(where + ": missing \"timestamp\" (only a " +
                        "later turn of a session_id may go without one: its delay times it after the previous answer)");
                }
                final double timestampMs = null == timestamp ? previousMs :
                    JsonValues.number(timestamp, where, "timestamp");
                final long inputLength = JsonValues.natural(JsonValues.required(line, "input_length", where), where,
                    "input_length");
                final JsonNode output = JsonValues.optional(line, "output_length");
                final long outputLength = null == output ? -1 : JsonValues.natural(output, where, "output_length");
                if (null == output)
                {
                    noOutput.add(where);
                }
                final JsonNode ids = JsonValues.optional(line, "hash_ids");
                final long[] hashIds = null == ids ? null : JsonValues.unsignedLongs(ids, where, "hash_ids");
                if (null != hashIds)
                {
                    anyHashIds = true;
                    final long expected = (inputLength + BLOCK_SIZE - 1) / BLOCK_SIZE;
                    if (hashIds.length != expected)
                    {
                        ceilRule.add(where + ": " + hashIds.length + " ids for " + inputLength + " tokens, expected " +
                            expected);
                    }
                }
                final JsonNode delay = JsonValues.optional(line, "delay");
                final double delayMs = null == delay ? Double.NaN : JsonValues.number(delay, where, "delay");
                if (delayMs < 0)
                {
                    throw new TraceFormatException(where + ": \"delay\" must not be negative, got " + delayMs);
                }
                if (null != delay && null == previousMs)
                {
                    firstDelays.add(where);
                }
                final int turn = null == session ? 0 : turns.merge(session, 1, Integer::sum) - 1;
                if (null != session)
                {
                    lastArrivalMs.put(session, timestampMs);
                }
                builder.add(where, timestampMs, inputLength, outputLength, hashIds, session, turn,
                    null == previousMs ? Double.NaN : delayMs);
            }
        }
        builder.hashBlockSize(anyHashIds ? BLOCK_SIZE : 0);
        builder.note("timestamp is in milliseconds (Mooncake)" + (anyHashIds ? "; hash_ids name 512-token blocks" :
            "; no hash_ids"));
        ceilRule.addTo(builder.notes());
        noOutput.addTo(builder.notes());
        firstDelays.addTo(builder.notes());
        return builder.build(true);
    }
}
