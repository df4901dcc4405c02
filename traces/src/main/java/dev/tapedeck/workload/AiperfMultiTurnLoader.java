package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFiles;

/**
 * AIPerf's {@code multi_turn} custom dataset (ai-dynamo/aiperf, {@code --custom-dataset-type multi_turn}): JSONL, one
 * conversation per line, {@code {"session_id": "...", "turns": [{"text": "...", "output_length": 50,
 * "timestamp": 0 | "delay": 1000, "role": "system"}, ...]}}. Lines with the same {@code session_id} continue one
 * conversation (AIPerf groups them); a line without one is a conversation of its own.
 * <p>
 * The file holds text, not token counts, and AIPerf sends each turn with the whole conversation so far (earlier turns
 * and the answers to them). So a turn's prompt is estimated as the conversation's text up to and including the turn,
 * at {@value #CHARS_PER_TOKEN} characters per token (rounded up), plus the {@code output_length} of every earlier
 * answer (an answer of unknown length adds nothing, noted). A leading text-only {@code "role": "system"} turn without
 * {@code timestamp}, {@code delay}, {@code output_length} or {@code extra} is hoisted as AIPerf hoists it: it is part
 * of every later prompt and no request of its own. Images, audio and video are not sized (noted).
 * <p>
 * Timing: {@code timestamp} is milliseconds on the file's schedule (the turn's arrival); {@code delay} is milliseconds
 * after the previous turn's answer ({@code think_ms}; for a first turn, its arrival); a turn with neither follows its
 * previous turn's answer at once. Setting both is an error, as in AIPerf. Prefix blocks are synthetic, of
 * {@value #BLOCK_SIZE} tokens: a turn's full blocks start with its previous turn's full blocks (its prompt contains the
 * previous prompt) and the rest are new; conversations share nothing. {@link #load} is thread safe: each call reads
 * with an instance of its own, on the calling thread.
 */
final class AiperfMultiTurnLoader
{
    /** Characters per token of the prompt-length estimate (OpenAI's rule of thumb for English text). */
    static final int CHARS_PER_TOKEN = 4;
    /** Tokens per synthetic hash id (vLLM's default KV block). */
    static final int BLOCK_SIZE = 16;

    private final String name;
    private final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.AIPERF_MULTI_TURN.cliName())
        .hashBlockSize(BLOCK_SIZE);
    private final NoteTally unknownAnswers = new NoteTally("turns follow an answer without output_length: that " +
        "answer's tokens are not in their prompt estimate");
    private final NoteTally noOutput = new NoteTally("turns have no output_length (the server decides)");
    private final NoteTally media = new NoteTally("turns carry images, audio or video, which are not sized (text " +
        "only)");
    private final Map<String, Conversation> conversations = new HashMap<>();
    private long nextBlockId;
    private boolean anyTimestamp;
    private int hoisted;

    private AiperfMultiTurnLoader(final String name)
    {
        this.name = name;
    }

    /**
     * A conversation's state as its turns are read.
     */
    private static final class Conversation
    {
        final String name;
        long historyTokens;
        long[] fullBlockIds = new long[0];
        int turns;
        double lastArrivalMs;
        boolean lastAnswerUnknown;

        Conversation(final String name)
        {
            this.name = name;
        }
    }

    static Workload load(final Path path) throws IOException
    {
        return new AiperfMultiTurnLoader(path.toString()).read(path);
    }

    private Workload read(final Path path) throws IOException
    {
        try (JsonlObjects lines = new JsonlObjects(name, TraceFiles.openInput(path)))
        {
            for (JsonNode line = lines.next(); null != line; line = lines.next())
            {
                final String lineWhere = lines.where();
                final JsonNode turns = JsonValues.required(line, "turns", lineWhere);
                if (!turns.isArray() || turns.isEmpty())
                {
                    throw JsonValues.error(lineWhere, "turns must be a non-empty array of turns, got " +
                        JsonValues.describe(turns));
                }
                final JsonNode sessionValue = JsonValues.optional(line, "session_id");
                final String session = null == sessionValue ? "line-" + lines.line() :
                    sessionValue.isValueNode() ? sessionValue.asText() :
                        JsonValues.string(sessionValue, lineWhere, "session_id");
                final Conversation c = conversations.computeIfAbsent(session, Conversation::new);
                for (int t = 0; t < turns.size(); t++)
                {
                    final String where = lineWhere + ": turns[" + t + "]";
                    final JsonNode turn = turns.get(t);
                    if (!turn.isObject())
                    {
                        throw JsonValues.error(where, "a turn must be an object, got " + JsonValues.describe(turn));
                    }
                    readTurn(c, turn, where);
                }
            }
        }
        builder.note("AIPerf multi_turn: prompts estimated from the conversation's text at " + CHARS_PER_TOKEN +
            " characters per token plus earlier answers' output_length; synthetic hash ids of " + BLOCK_SIZE +
            "-token blocks, each turn's prompt starting with its previous turn's");
        builder.note(anyTimestamp ? "timestamp and delay are in milliseconds (AIPerf)" : "no timestamp: every " +
            "conversation starts at 0 ms (or its first turn's delay); AIPerf paces them by concurrency instead");
        if (hoisted > 0)
        {
            builder.note(hoisted + " leading system turns are part of every prompt of their conversation, not " +
                "requests");
        }
        unknownAnswers.addTo(builder.notes());
        noOutput.addTo(builder.notes());
        media.addTo(builder.notes());
        return builder.build(false);
    }

    private void readTurn(final Conversation c, final JsonNode turn, final String where)
    {
        final long textTokens = (textChars(turn, where) + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN;
        if (hasMedia(turn))
        {
            media.add(where);
        }
        final JsonNode timestamp = JsonValues.optional(turn, "timestamp");
        final JsonNode delay = JsonValues.optional(turn, "delay");
        final JsonNode output = JsonValues.optional(turn, "output_length");
        if (0 == c.turns && 0 == c.historyTokens && isHoistedSystemTurn(turn, timestamp, delay, output))
        {
            c.historyTokens = textTokens;
            hoisted++;
            return;
        }
        if (null != timestamp && null != delay)
        {
            throw JsonValues.error(where, "timestamp and delay cannot be set together (AIPerf refuses them too)");
        }
        if (c.lastAnswerUnknown)
        {
            unknownAnswers.add(where);
        }
        final long promptTokens = c.historyTokens + textTokens;
        if (promptTokens < 1)
        {
            throw JsonValues.error(where, "no text to size the prompt by (text or texts)");
        }
        final double arrivalMs;
        double thinkMs = Double.NaN;
        if (null != timestamp)
        {
            anyTimestamp = true;
            arrivalMs = JsonValues.nonNegative(timestamp, where, "timestamp");
            if (c.turns > 0 && arrivalMs < c.lastArrivalMs)
            {
                throw JsonValues.error(where, "timestamp " + Workload.formatMs(arrivalMs) + " is before the " +
                    "previous turn's " + Workload.formatMs(c.lastArrivalMs) + " in session " + c.name);
            }
        }
        else if (null != delay && 0 == c.turns)
        {
            arrivalMs = JsonValues.nonNegative(delay, where, "delay");
        }
        else
        {
            arrivalMs = c.lastArrivalMs;
            thinkMs = null == delay ? Double.NaN : JsonValues.nonNegative(delay, where, "delay");
        }
        long outputTokens = WorkloadRequest.UNKNOWN;
        if (null == output)
        {
            noOutput.add(where);
        }
        else
        {
            outputTokens = JsonValues.natural(output, where, "output_length");
        }
        final int fullBlocks = (int)Math.min(Integer.MAX_VALUE, promptTokens / BLOCK_SIZE);
        final long[] ids = Arrays.copyOf(c.fullBlockIds, fullBlocks);
        for (int b = Math.min(c.fullBlockIds.length, fullBlocks); b < fullBlocks; b++)
        {
            ids[b] = nextBlockId++;
        }
        builder.add(where, arrivalMs, promptTokens, outputTokens, ids, c.name, c.turns, thinkMs);
        c.fullBlockIds = ids;
        c.historyTokens = promptTokens + Math.max(0, outputTokens);
        c.lastArrivalMs = arrivalMs;
        c.turns++;
        c.lastAnswerUnknown = outputTokens < 0;
    }

    private static boolean isHoistedSystemTurn(final JsonNode turn, final JsonNode timestamp, final JsonNode delay,
        final JsonNode output)
    {
        return "system".equals(turn.path("role").asText(null)) && null == timestamp && null == delay &&
            null == output && null == JsonValues.optional(turn, "extra") && !hasMedia(turn);
    }

    private static boolean hasMedia(final JsonNode turn)
    {
        for (final String field : new String[] {"image", "images", "audio", "audios", "video", "videos"})
        {
            if (null != JsonValues.optional(turn, field))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return characters of the turn's {@code text}, or of every string in {@code texts} (strings, or objects with
     *     {@code contents} arrays).
     */
    private static long textChars(final JsonNode turn, final String where)
    {
        final JsonNode text = JsonValues.optional(turn, "text");
        final JsonNode texts = JsonValues.optional(turn, "texts");
        if (null != text && null != texts)
        {
            throw JsonValues.error(where, "text and texts cannot be set together (AIPerf refuses them too)");
        }
        if (null != text)
        {
            return JsonValues.string(text, where, "text").length();
        }
        if (null == texts)
        {
            return 0;
        }
        if (!texts.isArray())
        {
            throw JsonValues.error(where, "texts must be an array, got " + JsonValues.describe(texts));
        }
        long chars = 0;
        for (int i = 0; i < texts.size(); i++)
        {
            final JsonNode entry = texts.get(i);
            if (entry.isObject())
            {
                final JsonNode contents = JsonValues.required(entry, "contents", where + ": texts[" + i + "]");
                if (!contents.isArray())
                {
                    throw JsonValues.error(where, "texts[" + i + "].contents must be an array of strings, got " +
                        JsonValues.describe(contents));
                }
                for (int k = 0; k < contents.size(); k++)
                {
                    chars += JsonValues.string(contents.get(k), where, "texts[" + i + "].contents[" + k + "]")
                        .length();
                }
            }
            else
            {
                chars += JsonValues.string(entry, where, "texts[" + i + "]").length();
            }
        }
        return chars;
    }
}
