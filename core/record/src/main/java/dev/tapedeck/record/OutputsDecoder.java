package dev.tapedeck.record;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import org.agrona.concurrent.UnsafeBuffer;

import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * Reads what the tap needs from an {@code EngineCoreOutputs} message (wire-spec.md section 4):
 * <pre>
 *   [engine_index, [EngineCoreOutput...], scheduler_stats, timestamp, utility_output, finished_requests, ...]
 *   EngineCoreOutput = [request_id, new_token_ids, _, _, _, finish_reason, _, _, _, (line-specific tail)]
 * </pre>
 * Per output: the id, the new token ids, the finish reason, and the prompt's cached tokens when this output carries
 * them, at the index the line puts them ({@code num_cached_tokens} at 9, 10 or 11, or the {@code prefill_stats} map
 * at 11, whose local plus external cached tokens count). Either form is accepted at that index. The stats are kept as
 * a tree for the sidecar. Fields the tap does not need are skipped, whatever their size. Reused from message to
 * message; not thread safe.
 */
final class OutputsDecoder
{
    /** No finish reason in this output. */
    static final int NO_FINISH = -1;
    /** This output does not report cached tokens. */
    static final long NO_CACHED = -1;

    private static final byte[] NUM_CACHED_TOKENS = "num_cached_tokens".getBytes();
    private static final byte[] NUM_LOCAL_CACHED_TOKENS = "num_local_cached_tokens".getBytes();
    private static final byte[] NUM_EXTERNAL_CACHED_TOKENS = "num_external_cached_tokens".getBytes();
    private static final int FINISH_INDEX = 5;

    private final MsgPackReader reader = new MsgPackReader();
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private int cachedIndex = 11;
    private int count;
    private String[] requestIds = new String[64];
    private int[] tokenStart = new int[64];
    private int[] tokenCount = new int[64];
    private int[] finishReason = new int[64];
    private long[] cachedTokens = new long[64];
    private int[] tokens = new int[1024];
    private int tokenTotal;
    private JsonNode stats;
    private final List<String> finished = new ArrayList<>();
    private boolean utility;
    private String error;

    /**
     * @param line the engine's line: where outputs report cached tokens.
     * @return this.
     */
    OutputsDecoder line(final VllmLine line)
    {
        switch (line.outputTail())
        {
            case CACHED_AT_9:
                cachedIndex = 9;
                break;
            case CACHED_AT_10:
                cachedIndex = 10;
                break;
            default:
                cachedIndex = 11;
        }
        return this;
    }

    /**
     * @param payload the message's first frame.
     * @return true when it is an {@code EngineCoreOutputs}; otherwise {@link #error()} says why.
     */
    boolean decode(final byte[] payload)
    {
        count = 0;
        tokenTotal = 0;
        stats = null;
        finished.clear();
        utility = false;
        error = null;
        view.wrap(payload);
        reader.wrap(view, 0, payload.length);
        if (ValueType.ARRAY != reader.nextType())
        {
            return fail("not an EngineCoreOutputs array");
        }
        final int fields = reader.readArrayHeader();
        if (fields < 2)
        {
            return fail("EngineCoreOutputs with " + fields + " fields");
        }
        reader.skipValue();
        if (!reader.tryReadNil())
        {
            final int outputs = reader.readArrayHeader();
            for (int i = 0; i < outputs && reader.ok(); i++)
            {
                readOutput();
            }
        }
        if (fields > 2 && !reader.tryReadNil())
        {
            stats = MsgPackTree.read(reader);
        }
        if (fields > 3)
        {
            reader.skipValue();
        }
        if (fields > 4)
        {
            utility = !reader.tryReadNil();
            if (utility)
            {
                reader.skipValue();
            }
        }
        if (fields > 5 && !reader.tryReadNil())
        {
            final int ids = reader.readArrayHeader();
            for (int i = 0; i < ids && reader.ok(); i++)
            {
                finished.add(reader.readString());
            }
        }
        return reader.ok() || fail("malformed EngineCoreOutputs: " + reader.errorMessage());
    }

    private void readOutput()
    {
        final int fields = reader.readArrayHeader();
        if (fields < 2)
        {
            // not an output the tap can use: skip it, keep the rest of the message
            for (int i = 0; i < fields; i++)
            {
                reader.skipValue();
            }
            return;
        }
        grow();
        requestIds[count] = reader.readString();
        tokenStart[count] = tokenTotal;
        tokenCount[count] = 0;
        finishReason[count] = NO_FINISH;
        cachedTokens[count] = NO_CACHED;
        if (!reader.tryReadNil())
        {
            final int n = reader.readArrayHeader();
            for (int t = 0; t < n && reader.ok(); t++)
            {
                if (tokenTotal == tokens.length)
                {
                    tokens = Arrays.copyOf(tokens, tokens.length * 2);
                }
                tokens[tokenTotal++] = reader.readInt();
            }
            tokenCount[count] = n;
        }
        for (int index = 2; index < fields && reader.ok(); index++)
        {
            if (FINISH_INDEX == index && ValueType.INTEGER == reader.nextType())
            {
                finishReason[count] = reader.readInt();
            }
            else if (cachedIndex == index && ValueType.INTEGER == reader.nextType())
            {
                cachedTokens[count] = reader.readLong();
            }
            else if (cachedIndex == index && ValueType.MAP == reader.nextType())
            {
                cachedTokens[count] = readPrefillStats();
            }
            else
            {
                reader.skipValue();
            }
        }
        count++;
    }

    /**
     * @return local plus external cached tokens of a {@code prefill_stats} map ({@code num_cached_tokens} when it
     * has neither).
     */
    private long readPrefillStats()
    {
        final int pairs = reader.readMapHeader();
        long local = -1;
        long external = -1;
        long cached = -1;
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            if (ValueType.STRING != reader.nextType())
            {
                reader.skipValue();
                reader.skipValue();
                continue;
            }
            final int keyStart = reader.position();
            if (reader.readStringEquals(NUM_LOCAL_CACHED_TOKENS) && ValueType.INTEGER == reader.nextType())
            {
                local = reader.readLong();
                continue;
            }
            reader.seek(keyStart);
            if (reader.readStringEquals(NUM_EXTERNAL_CACHED_TOKENS) && ValueType.INTEGER == reader.nextType())
            {
                external = reader.readLong();
                continue;
            }
            reader.seek(keyStart);
            if (reader.readStringEquals(NUM_CACHED_TOKENS) && ValueType.INTEGER == reader.nextType())
            {
                cached = reader.readLong();
                continue;
            }
            reader.skipValue();
        }
        if (local < 0 && external < 0)
        {
            return Math.max(cached, 0);
        }
        return Math.max(local, 0) + Math.max(external, 0);
    }

    private void grow()
    {
        if (count == requestIds.length)
        {
            final int capacity = count * 2;
            requestIds = Arrays.copyOf(requestIds, capacity);
            tokenStart = Arrays.copyOf(tokenStart, capacity);
            tokenCount = Arrays.copyOf(tokenCount, capacity);
            finishReason = Arrays.copyOf(finishReason, capacity);
            cachedTokens = Arrays.copyOf(cachedTokens, capacity);
        }
    }

    private boolean fail(final String why)
    {
        if (null == error)
        {
            error = why;
        }
        return false;
    }

    /** @return why the last decode failed. */
    String error()
    {
        return error;
    }

    /** @return request outputs in the message. */
    int count()
    {
        return count;
    }

    /** @return output i's request id. */
    String requestId(final int i)
    {
        return requestIds[i];
    }

    /** @return new tokens in output i. */
    int tokenCount(final int i)
    {
        return tokenCount[i];
    }

    /** @return token t of output i. */
    int token(final int i, final int t)
    {
        return tokens[tokenStart[i] + t];
    }

    /** @return output i's wire finish reason, or {@link #NO_FINISH}. */
    int finishReason(final int i)
    {
        return finishReason[i];
    }

    /** @return the cached tokens output i reports, or {@link #NO_CACHED}. */
    long cachedTokens(final int i)
    {
        return cachedTokens[i];
    }

    /** @return the message's {@code scheduler_stats} as sent, or null. */
    JsonNode stats()
    {
        return stats;
    }

    /** @return {@code finished_requests}, empty when absent. */
    List<String> finished()
    {
        return finished;
    }

    /** @return true when the message answers a utility call. */
    boolean isUtility()
    {
        return utility;
    }
}
