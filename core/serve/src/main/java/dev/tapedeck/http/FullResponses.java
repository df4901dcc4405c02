package dev.tapedeck.http;

import io.netty.buffer.ByteBuf;

import dev.tapedeck.net.JsonBytes;

/**
 * Writes non-streaming chat and completion bodies in vLLM's shape (every field present, nulls included), e.g.
 * <pre>
 * {"id":"chatcmpl-..","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":
 * "assistant","content":"..","refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[],
 * "reasoning":null},"logprobs":null,"finish_reason":"stop","stop_reason":null,"token_ids":null}],"service_tier":null,
 * "system_fingerprint":null,"usage":{"prompt_tokens":9,"total_tokens":12,"completion_tokens":3,
 * "prompt_tokens_details":null},"prompt_logprobs":null,"prompt_token_ids":null,"kv_transfer_params":null}
 * </pre>
 */
final class FullResponses
{
    private static final byte[] MESSAGE_OPEN = JsonBytes.ascii(",\"message\":{\"role\":\"assistant\",");
    private static final byte[] CONTENT_OPEN = JsonBytes.ascii("\"content\":\"");
    private static final byte[] CONTENT_CLOSE = JsonBytes.ascii("\",\"refusal\":null,\"annotations\":null," +
        "\"audio\":null,\"function_call\":null,\"tool_calls\":[]");
    private static final byte[] MESSAGE_CLOSE = JsonBytes.ascii(",\"reasoning\":null},\"logprobs\":");
    private static final byte[] TEXT_OPEN = JsonBytes.ascii(",\"text\":\"");
    private static final byte[] TEXT_CLOSE = JsonBytes.ascii("\",\"logprobs\":");
    private static final byte[] FINISH_REASON = JsonBytes.ascii(",\"finish_reason\":");
    private static final byte[] STOP_REASON = JsonBytes.ascii(",\"stop_reason\":");
    private static final byte[] CHAT_CHOICE_TAIL = JsonBytes.ascii(",\"token_ids\":null}");
    private static final byte[] COMPLETION_CHOICE_TAIL = JsonBytes.ascii(",\"token_ids\":null,\"prompt_logprobs\":");
    private static final byte[] COMPLETION_CHOICE_END = JsonBytes.ascii(",\"prompt_token_ids\":null}");
    private static final byte[] USAGE_OPEN = JsonBytes.ascii(
        "],\"service_tier\":null,\"system_fingerprint\":null,\"usage\":");
    private static final byte[] CHAT_PROMPT_LOGPROBS = JsonBytes.ascii(",\"prompt_logprobs\":");
    private static final byte[] CHAT_TAIL = JsonBytes.ascii(",\"prompt_token_ids\":null,\"kv_transfer_params\":");
    private static final byte[] NULL = JsonBytes.ascii("null");
    private static final byte[] COMPLETION_TAIL = JsonBytes.ascii(",\"kv_transfer_params\":");
    private static final byte[] USAGE_NO_DETAILS_TAIL = JsonBytes.ascii(",\"prompt_tokens_details\":null}");

    private FullResponses()
    {
    }

    /** {@code prompt_logprobs} of the choice's prompt, or null when not asked for. */
    private static void writePromptLogprobs(final ByteBuf out, final HttpStream stream, final Choice choice)
    {
        if (stream.logprobs.prompt())
        {
            Logprobs.writePromptLogprobs(out, stream.front.vocabulary(), choice.request.promptTokenIds(),
                Math.min(stream.logprobs.promptLogprobs(), stream.front.vocabulary().randomTokenIds().length));
        }
        else
        {
            out.writeBytes(NULL);
        }
    }

    static void write(final ByteBuf out, final HttpStream stream, final String model, final int completionTokens,
        final boolean promptTokensDetails)
    {
        final String head = "{\"id\":" + JsonBytes.quote(stream.responseId) + ",\"object\":\"" +
            (stream.chat ? "chat.completion" : "text_completion") + "\",\"created\":" + stream.createdSeconds +
            ",\"model\":" + JsonBytes.quote(model) + ",\"choices\":[";
        out.writeCharSequence(head, java.nio.charset.StandardCharsets.UTF_8);
        boolean first = true;
        for (final Choice choice : stream.choices)
        {
            if (!first)
            {
                out.writeByte(',');
            }
            first = false;
            out.writeCharSequence("{\"index\":", java.nio.charset.StandardCharsets.US_ASCII);
            JsonBytes.writeLong(out, choice.index);
            if (stream.chat)
            {
                out.writeBytes(MESSAGE_OPEN);
                if (choice.isToolCall())
                {
                    ToolCallChunks.writeMessageFields(out, choice);
                }
                else
                {
                    out.writeBytes(CONTENT_OPEN);
                    JsonBytes.writeEscaped(out, choice.pendingBytes(), 0, choice.pendingLength());
                    out.writeBytes(CONTENT_CLOSE);
                }
                out.writeBytes(MESSAGE_CLOSE);
            }
            else
            {
                out.writeBytes(TEXT_OPEN);
                JsonBytes.writeEscaped(out, choice.pendingBytes(), 0, choice.pendingLength());
                out.writeBytes(TEXT_CLOSE);
            }
            if (stream.logprobs.sampled())
            {
                Logprobs.writeChoiceLogprobs(out, stream.front.vocabulary(), choice, stream.chat,
                    stream.logprobs.topLogprobs());
            }
            else
            {
                out.writeBytes(NULL);
            }
            out.writeBytes(FINISH_REASON);
            out.writeBytes(choice.finishReasonJson());
            out.writeBytes(STOP_REASON);
            SseChunks.writeStopReason(out, choice);
            if (stream.chat)
            {
                out.writeBytes(CHAT_CHOICE_TAIL);
            }
            else
            {
                out.writeBytes(COMPLETION_CHOICE_TAIL);
                writePromptLogprobs(out, stream, choice);
                out.writeBytes(COMPLETION_CHOICE_END);
            }
        }
        out.writeBytes(USAGE_OPEN);
        if (promptTokensDetails)
        {
            SseChunks.writeUsage(out, stream.promptTokens, completionTokens, stream.cachedTokens());
        }
        else
        {
            SseChunks.writeUsage(out, stream.promptTokens, completionTokens, -1);
            // writeUsage closed the object; reopen to add the null details as vLLM's full dump does
            out.writerIndex(out.writerIndex() - 1);
            out.writeBytes(USAGE_NO_DETAILS_TAIL);
        }
        if (stream.chat)
        {
            out.writeBytes(CHAT_PROMPT_LOGPROBS);
            writePromptLogprobs(out, stream, stream.choices[0]);
            out.writeBytes(CHAT_TAIL);
        }
        else
        {
            out.writeBytes(COMPLETION_TAIL);
        }
        final dev.tapedeck.engine.KvTransferParams kvTransferResult = stream.choices[0].request.kvTransferResult();
        if (null == kvTransferResult)
        {
            out.writeCharSequence("null", java.nio.charset.StandardCharsets.US_ASCII);
        }
        else
        {
            kvTransferResult.writeJson(out);
        }
        out.writeByte('}');
    }
}
