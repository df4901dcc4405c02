package dev.tapedeck.http;

import io.netty.buffer.ByteBuf;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.net.JsonBytes;
import dev.tapedeck.tokens.TokenVocabulary;

/**
 * Byte templates and writers for vLLM's streaming chunks, written straight into a {@link ByteBuf} (no strings, no
 * allocation). Shapes follow vLLM's OpenAI server of the 0.14-0.2x lines (see docs/http-api.md):
 * <pre>
 * chat role   {"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}
 * chat token  {"index":0,"delta":{"content":"..."},"logprobs":null,"finish_reason":null,"token_ids":null}
 * chat final  {"index":0,"delta":{"content":"..."},"logprobs":null,"finish_reason":"stop","stop_reason":null,
 *              "token_ids":null}
 * completion  {"index":0,"text":"...","logprobs":null,"finish_reason":null,"stop_reason":null,
 *              "prompt_token_ids":null,"token_ids":null}
 * </pre>
 * Each event is {@code data: <json>\n\n}; the stream ends with {@code data: [DONE]\n\n}.
 */
final class SseChunks
{
    static final byte[] DATA = JsonBytes.ascii("data: ");
    static final byte[] DONE = JsonBytes.ascii("data: [DONE]\n\n");
    static final byte[] EVENT_END = JsonBytes.ascii("\n\n");
    private static final byte[] INDEX = JsonBytes.ascii("{\"index\":");
    private static final byte[] ROLE_DELTA = JsonBytes.ascii(
        ",\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}");
    private static final byte[] ROLE_CLOSE = JsonBytes.ascii("],\"prompt_token_ids\":null}");
    private static final byte[] PROMPT_TOKEN_IDS_CLOSE = JsonBytes.ascii(",\"prompt_token_ids\":null}");
    private static final byte[] CHAT_DELTA_OPEN = JsonBytes.ascii(",\"delta\":{\"content\":\"");
    private static final byte[] CHAT_DELTA_CLOSE = JsonBytes.ascii("\"},\"logprobs\":");
    private static final byte[] TEXT_OPEN = JsonBytes.ascii(",\"text\":\"");
    private static final byte[] TEXT_CLOSE = JsonBytes.ascii("\",\"logprobs\":");
    private static final byte[] FINISH_REASON = JsonBytes.ascii(",\"finish_reason\":");
    private static final byte[] NULL = JsonBytes.ascii("null");
    private static final byte[] STOP_REASON = JsonBytes.ascii(",\"stop_reason\":");
    private static final byte[] CHAT_TAIL = JsonBytes.ascii(",\"token_ids\":null}");
    private static final byte[] COMPLETION_TAIL = JsonBytes.ascii(",\"prompt_token_ids\":null,\"token_ids\":null}");
    private static final byte[] CHOICES_CLOSE = JsonBytes.ascii("]}");
    private static final byte[] CHOICES_CLOSE_WITH_USAGE = JsonBytes.ascii("],\"usage\":");
    private static final byte[] OBJECT_CLOSE = JsonBytes.ascii("}");
    private static final byte[] USAGE_PROMPT = JsonBytes.ascii("{\"prompt_tokens\":");
    private static final byte[] USAGE_TOTAL = JsonBytes.ascii(",\"total_tokens\":");
    private static final byte[] USAGE_COMPLETION = JsonBytes.ascii(",\"completion_tokens\":");
    private static final byte[] USAGE_DETAILS = JsonBytes.ascii(",\"prompt_tokens_details\":{\"cached_tokens\":");
    /** llm-d-inference-sim's finish reason of a request below its cache-hit threshold. */
    static final byte[] CACHE_THRESHOLD = JsonBytes.ascii("\"cache_threshold\"");
    private static final byte[][] FINISH_REASONS = {
        JsonBytes.ascii("\"stop\""), JsonBytes.ascii("\"length\""), JsonBytes.ascii("\"abort\""),
        JsonBytes.ascii("\"error\""),
    };

    private SseChunks()
    {
    }

    /**
     * {@code data: {...,"choices":[<role choice>],"prompt_token_ids":null}\n\n} (continuous usage adds usage).
     */
    static void writeRoleChunk(final ByteBuf out, final byte[] head, final int index, final int promptTokens,
        final boolean continuousUsage)
    {
        out.writeBytes(head);
        out.writeBytes(INDEX);
        JsonBytes.writeLong(out, index);
        out.writeBytes(ROLE_DELTA);
        if (continuousUsage)
        {
            out.writeBytes(CHOICES_CLOSE_WITH_USAGE);
            writeUsage(out, promptTokens, 0, -1);
            out.writeBytes(PROMPT_TOKEN_IDS_CLOSE);
        }
        else
        {
            out.writeBytes(ROLE_CLOSE);
        }
        out.writeBytes(EVENT_END);
    }

    /**
     * One choice's delta: a token chunk, or the final chunk when {@code finishReason} is not null.
     *
     * @param logprobsVocabulary with logprobs asked for, the vocabulary that spells their tokens; else null.
     * @param topLogprobs alternatives per token.
     */
    static void writeDeltaChunk(
        final ByteBuf out,
        final byte[] head,
        final boolean chat,
        final Choice choice,
        final int textLength,
        final FinishReason finishReason,
        final int promptTokens,
        final boolean continuousUsage,
        final TokenVocabulary logprobsVocabulary,
        final int topLogprobs)
    {
        out.writeBytes(head);
        out.writeBytes(INDEX);
        JsonBytes.writeLong(out, choice.index);
        out.writeBytes(chat ? CHAT_DELTA_OPEN : TEXT_OPEN);
        JsonBytes.writeEscaped(out, choice.pendingBytes(), 0, textLength);
        out.writeBytes(chat ? CHAT_DELTA_CLOSE : TEXT_CLOSE);
        if (null == logprobsVocabulary)
        {
            out.writeBytes(NULL);
        }
        else
        {
            Logprobs.writeChoiceLogprobs(out, logprobsVocabulary, choice, chat, topLogprobs);
        }
        out.writeBytes(FINISH_REASON);
        if (null == finishReason)
        {
            out.writeBytes(NULL);
            if (!chat)
            {
                out.writeBytes(STOP_REASON);
                out.writeBytes(NULL);
            }
        }
        else
        {
            out.writeBytes(choice.finishReasonJson());
            out.writeBytes(STOP_REASON);
            writeStopReason(out, choice);
        }
        out.writeBytes(chat ? CHAT_TAIL : COMPLETION_TAIL);
        if (continuousUsage)
        {
            out.writeBytes(CHOICES_CLOSE_WITH_USAGE);
            final int completion = choice.request.numOutputTokens();
            writeUsage(out, promptTokens, completion, -1);
            out.writeBytes(OBJECT_CLOSE);
        }
        else
        {
            out.writeBytes(CHOICES_CLOSE);
        }
        out.writeBytes(EVENT_END);
    }

    /**
     * The final usage event: {@code data: {...,"choices":[],"usage":{...}}\n\n}.
     */
    static void writeUsageChunk(final ByteBuf out, final byte[] head, final int promptTokens,
        final int completionTokens, final int cachedTokensOrMinusOne)
    {
        out.writeBytes(head);
        out.writeBytes(CHOICES_CLOSE_WITH_USAGE);
        writeUsage(out, promptTokens, completionTokens, cachedTokensOrMinusOne);
        out.writeBytes(OBJECT_CLOSE);
        out.writeBytes(EVENT_END);
    }

    /**
     * {@code {"prompt_tokens":P,"total_tokens":T,"completion_tokens":C[,"prompt_tokens_details":{...}]}}.
     */
    static void writeUsage(final ByteBuf out, final int promptTokens, final int completionTokens,
        final int cachedTokensOrMinusOne)
    {
        out.writeBytes(USAGE_PROMPT);
        JsonBytes.writeLong(out, promptTokens);
        out.writeBytes(USAGE_TOTAL);
        JsonBytes.writeLong(out, (long)promptTokens + completionTokens);
        out.writeBytes(USAGE_COMPLETION);
        JsonBytes.writeLong(out, completionTokens);
        if (cachedTokensOrMinusOne >= 0)
        {
            out.writeBytes(USAGE_DETAILS);
            JsonBytes.writeLong(out, cachedTokensOrMinusOne);
            out.writeByte('}');
        }
        out.writeByte('}');
    }

    static void writeStopReason(final ByteBuf out, final Choice choice)
    {
        if (null != choice.stopReasonText)
        {
            JsonBytes.writeString(out, choice.stopReasonText);
        }
        else if (choice.stopReasonToken >= 0)
        {
            JsonBytes.writeLong(out, choice.stopReasonToken);
        }
        else
        {
            out.writeBytes(NULL);
        }
    }

    static byte[] finishReasonJson(final FinishReason reason)
    {
        return FINISH_REASONS[reason.ordinal()];
    }
}
