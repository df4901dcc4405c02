package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.engine.Request;

/**
 * One choice of a response: the text of one engine request on its way to the client, with the frontend's duties
 * vLLM's detokenizer has: UTF-8 boundaries (a partial character is held until complete), stop strings (found in the
 * text, the text cut before them unless {@code include_stop_str_in_output}; the last {@code longest stop - 1} bytes
 * are held back so nothing sent ever has to be taken back), and the finish reason with its {@code stop_reason}.
 * <p>
 * Event-loop confined. Appending a token copies its bytes into a reused buffer; nothing is allocated per token once
 * the buffer has grown to the response's size (streaming: to a few tokens).
 */
final class Choice
{
    private static final int INITIAL_CAPACITY = 64;
    private static final byte[] REPLACEMENT_CHARACTER = {(byte)0xEF, (byte)0xBF, (byte)0xBD};

    final HttpStream stream;
    final int index;
    final Request request;
    /** True on the first choice of each prompt: its prompt and cached tokens count once in usage. */
    final boolean countsPrompt;
    private final byte[][] stopStrings;
    private final int holdbackBytes;
    private final boolean includeStopString;
    /** The choice's structured output (a tool call, a JSON document), or null for free text. */
    final dev.tapedeck.structured.OutputPlan plan;
    /** Bytes of the text already sent and dropped from the buffer ({@link #consume}). */
    int consumedBytes;
    /** Finished before it ran: its prefix-cache hit rate was below llm-d's {@code cache_hit_threshold}. */
    boolean belowCacheThreshold;
    /** A streamed tool call was announced (its id and name sent). */
    boolean callAnnounced;
    /**
     * With logprobs or token-id output: the generated token ids not yet written, and the first one's output
     * position.
     */
    private int[] keptTokenIds;
    private int tokenIdCount;
    private int firstTokenPosition;
    /** With completions' logprobs: characters of the token strings written so far ({@code text_offset}). */
    int textOffset;

    private byte[] pending = new byte[INITIAL_CAPACITY];
    private int pendingLength;
    private int lastTokenLength;
    boolean roleSent;
    boolean finished;
    boolean finalSent;
    FinishReason finishReason;
    String stopReasonText;
    int stopReasonToken = -1;

    Choice(final HttpStream stream, final int index, final Request request, final List<String> stops,
        final boolean includeStopString, final boolean countsPrompt, final dev.tapedeck.structured.OutputPlan plan)
    {
        this.plan = plan;
        this.countsPrompt = countsPrompt;
        this.stream = stream;
        this.index = index;
        this.request = request;
        this.includeStopString = includeStopString;
        if (stops.isEmpty())
        {
            stopStrings = null;
            holdbackBytes = 0;
        }
        else
        {
            stopStrings = new byte[stops.size()][];
            int longest = 0;
            for (int i = 0; i < stopStrings.length; i++)
            {
                stopStrings[i] = stops.get(i).getBytes(StandardCharsets.UTF_8);
                longest = Math.max(longest, stopStrings[i].length);
            }
            holdbackBytes = longest - 1;
        }
    }

    /**
     * Append a generated token's text.
     *
     * @return true when a stop string now ends the choice (the caller ends the engine request).
     */
    boolean appendToken(final byte[] text)
    {
        final int searchFrom = Math.max(0, pendingLength - holdbackBytes);
        appendRaw(text);
        lastTokenLength = text.length;
        if (null == stopStrings || request.numOutputTokens() < request.minTokens())
        {
            return false;
        }
        return findStop(searchFrom);
    }

    private void appendRaw(final byte[] text)
    {
        final int needed = pendingLength + text.length;
        if (needed > pending.length)
        {
            pending = Arrays.copyOf(pending, Math.max(needed, pending.length * 2));
        }
        System.arraycopy(text, 0, pending, pendingLength, text.length);
        pendingLength = needed;
    }

    /**
     * The engine finished this choice.
     */
    void finish(final FinishReason reason)
    {
        if (finished)
        {
            return;
        }
        finished = true;
        finishReason = reason;
        if (FinishReason.STOP == reason && null == stopReasonText && !request.lastTokenIsEos() &&
            request.isStopToken(request.lastTokenId()))
        {
            stopReasonToken = request.lastTokenId();
            if (!includeStopString)
            {
                pendingLength -= Math.min(lastTokenLength, pendingLength);
            }
        }
        // after the stop token's text is dropped: what is left may end inside a character
        final int complete = utf8Boundary(pending, pendingLength);
        if (complete != pendingLength)
        {
            // the answer ended inside a character (echo of byte-level tokens): the detokenizer shows U+FFFD
            pendingLength = complete;
            appendRaw(REPLACEMENT_CHARACTER);
        }
    }

    /**
     * @return bytes that may be sent now: all of them once finished, otherwise what is neither held back for stop
     * strings nor an incomplete UTF-8 character.
     */
    int emittableLength()
    {
        if (finished)
        {
            return pendingLength;
        }
        return utf8Boundary(pending, Math.max(0, pendingLength - holdbackBytes));
    }

    byte[] pendingBytes()
    {
        return pending;
    }

    int pendingLength()
    {
        return pendingLength;
    }

    /**
     * Drop the first {@code length} bytes (they were sent).
     */
    void consume(final int length)
    {
        System.arraycopy(pending, length, pending, 0, pendingLength - length);
        pendingLength -= length;
        consumedBytes += length;
    }

    /**
     * Keep a generated token for its logprobs or its id (only when the response writes them).
     */
    void recordTokenId(final int tokenId)
    {
        if (null == keptTokenIds)
        {
            keptTokenIds = new int[16];
        }
        else if (tokenIdCount == keptTokenIds.length)
        {
            keptTokenIds = Arrays.copyOf(keptTokenIds, tokenIdCount * 2);
        }
        keptTokenIds[tokenIdCount++] = tokenId;
    }

    int tokenIdCount()
    {
        return tokenIdCount;
    }

    int tokenId(final int i)
    {
        return keptTokenIds[i];
    }

    /**
     * @return the output position of the first kept token.
     */
    int firstTokenPosition()
    {
        return firstTokenPosition;
    }

    /**
     * The kept tokens were written.
     */
    void tokenIdsWritten()
    {
        firstTokenPosition += tokenIdCount;
        tokenIdCount = 0;
    }

    /**
     * @return the finish reason as the response writes it: the engine's, {@code tool_calls} for a whole tool call
     *     (not a named one), or llm-d's {@code cache_threshold}.
     */
    byte[] finishReasonJson()
    {
        if (belowCacheThreshold)
        {
            return SseChunks.CACHE_THRESHOLD;
        }
        return isToolCall() ? ToolCallChunks.finishReasonJson(this) : SseChunks.finishReasonJson(finishReason);
    }

    /**
     * @return true when this choice's output is a tool call.
     */
    boolean isToolCall()
    {
        return null != plan && plan.isToolCall();
    }

    boolean hasStopReason()
    {
        return null != stopReasonText || stopReasonToken >= 0;
    }

    private boolean findStop(final int searchFrom)
    {
        int best = -1;
        int bestIndex = -1;
        for (int s = 0; s < stopStrings.length; s++)
        {
            final int at = indexOf(pending, pendingLength, stopStrings[s], searchFrom);
            if (at >= 0 && (best < 0 || at < best))
            {
                best = at;
                bestIndex = s;
            }
        }
        if (best < 0)
        {
            return false;
        }
        pendingLength = includeStopString ? best + stopStrings[bestIndex].length : best;
        stopReasonText = new String(stopStrings[bestIndex], StandardCharsets.UTF_8);
        return true;
    }

    private static int indexOf(final byte[] haystack, final int length, final byte[] needle, final int from)
    {
        outer:
        for (int i = from, last = length - needle.length; i <= last; i++)
        {
            for (int j = 0; j < needle.length; j++)
            {
                if (haystack[i + j] != needle[j])
                {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * @return the largest length not above {@code limit} that does not split a UTF-8 sequence.
     */
    static int utf8Boundary(final byte[] bytes, final int limit)
    {
        int i = limit;
        int back = 0;
        while (i > 0 && back < 3 && (bytes[i - 1] & 0xC0) == 0x80)
        {
            i--;
            back++;
        }
        if (0 == i)
        {
            return limit;
        }
        final int lead = bytes[i - 1] & 0xff;
        final int sequenceLength = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
        final int available = limit - (i - 1);
        return available >= sequenceLength ? limit : i - 1;
    }
}
