package dev.tapedeck.http;

import static java.nio.charset.StandardCharsets.US_ASCII;

import io.netty.buffer.ByteBuf;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.net.JsonBytes;
import dev.tapedeck.structured.OutputPlan;

/**
 * Writes a chat choice whose output is a tool call ({@link OutputPlan#isToolCall()}) as vLLM's tool parsers turn the
 * model's text into {@code tool_calls}: streamed, the call is announced once the text reaches its arguments, and the
 * arguments follow as they are generated; the text around them (Hermes tags, the {@code required} list's
 * punctuation) is not sent. Shapes per parser, as vLLM streams them:
 * <pre>
 * named     {"tool_calls":[{"id":"chatcmpl-tool-..","type":"function","index":0,"function":{"name":"f",
 *           "arguments":".."}}]}, then {"tool_calls":[{"index":0,"function":{"arguments":".."}}]}
 * required  the same, later deltas with "name":null
 * hermes    {"content":null,"tool_calls":[{"index":0,"type":"function","id":"..","function":{"name":"f"}}]}, then
 *           {"content":null,"tool_calls":[{"index":0,"function":{"arguments":".."}}]}
 * </pre>
 * The last chunk has an empty delta and {@code finish_reason} {@code tool_calls} (a named choice: {@code stop}).
 * Whole, the message has {@code content} {@code ""} (named, required) or null (auto) and the call, without
 * {@code index}; a call cut short by {@code max_tokens} is no call (auto: the raw text is the content), except for a
 * named choice, whose arguments are whatever was written. Event-loop confined; allocates only for tool-call choices.
 */
final class ToolCallChunks
{
    private static final byte[] TOOL_CALLS = JsonBytes.ascii("\"tool_calls\":[{");
    private static final byte[] FINISH_TOOL_CALLS = JsonBytes.ascii("\"tool_calls\"");

    private ToolCallChunks()
    {
    }

    /**
     * This flush's events of a streamed tool-call choice: its announcement, its arguments, and its end.
     *
     * @param length bytes of the choice's buffer that may be sent now.
     */
    static void writeEvents(final ByteBuf out, final byte[] head, final Choice choice, final int length)
    {
        final OutputPlan plan = choice.plan;
        final int start = choice.consumedBytes;
        final int end = start + length;
        final int argsFrom = Math.max(start, plan.argumentsStartByte());
        final int argsTo = OutputPlan.Format.ARGUMENTS == plan.format() ? end : Math.min(end, plan.argumentsEndByte());
        final boolean named = OutputPlan.Format.ARGUMENTS == plan.format();
        final boolean parserStyle = OutputPlan.Format.HERMES == plan.format() ||
            OutputPlan.Format.LLAMA3_JSON == plan.format();
        boolean argumentsSent = false;
        if (!choice.callAnnounced && (end > plan.argumentsStartByte() || (named && choice.finished)))
        {
            choice.callAnnounced = true;
            open(out, head, choice);
            if (parserStyle)
            {
                out.writeCharSequence("\"content\":null,", US_ASCII);
            }
            out.writeBytes(TOOL_CALLS);
            if (parserStyle)
            {
                out.writeCharSequence("\"index\":0,\"type\":\"function\",\"id\":", US_ASCII);
                JsonBytes.writeString(out, plan.callId());
                out.writeCharSequence(",\"function\":{\"name\":", US_ASCII);
                JsonBytes.writeString(out, plan.functionName());
                out.writeCharSequence("}}]}", US_ASCII);
            }
            else
            {
                out.writeCharSequence("\"id\":", US_ASCII);
                JsonBytes.writeString(out, plan.callId());
                out.writeCharSequence(",\"type\":\"function\",\"index\":0,\"function\":{\"name\":",
                    US_ASCII);
                JsonBytes.writeString(out, plan.functionName());
                out.writeCharSequence(",\"arguments\":\"", US_ASCII);
                writeRange(out, choice, argsFrom, argsTo);
                out.writeCharSequence("\"}}]}", US_ASCII);
                argumentsSent = true;
            }
            close(out, null, choice);
        }
        if (!argumentsSent && choice.callAnnounced && argsTo > argsFrom)
        {
            open(out, head, choice);
            if (parserStyle)
            {
                out.writeCharSequence("\"content\":null,", US_ASCII);
            }
            out.writeBytes(TOOL_CALLS);
            out.writeCharSequence(OutputPlan.Format.REQUIRED_LIST == plan.format() ?
                "\"index\":0,\"function\":{\"name\":null,\"arguments\":\"" :
                "\"index\":0,\"function\":{\"arguments\":\"", US_ASCII);
            writeRange(out, choice, argsFrom, argsTo);
            out.writeCharSequence("\"}}]}", US_ASCII);
            close(out, null, choice);
        }
        if (choice.finished)
        {
            open(out, head, choice);
            out.writeByte('}');
            close(out, choice.finishReasonJson(), choice);
        }
    }

    private static void open(final ByteBuf out, final byte[] head, final Choice choice)
    {
        out.writeBytes(head);
        out.writeCharSequence("{\"index\":", US_ASCII);
        JsonBytes.writeLong(out, choice.index);
        out.writeCharSequence(",\"delta\":{", US_ASCII);
    }

    private static void close(final ByteBuf out, final byte[] finishReason, final Choice choice)
    {
        out.writeCharSequence(",\"logprobs\":", US_ASCII);
        final HttpStream stream = choice.stream;
        if (null != stream && stream.logprobs.sampled())
        {
            // the tokens generated since the last chunk, the call's wrapper text included
            Logprobs.writeChoiceLogprobs(out, stream.front.vocabulary(), choice, true, stream.logprobs.topLogprobs());
        }
        else
        {
            out.writeCharSequence("null", US_ASCII);
        }
        out.writeCharSequence(",\"finish_reason\":", US_ASCII);
        if (null == finishReason)
        {
            out.writeCharSequence("null", US_ASCII);
        }
        else
        {
            out.writeBytes(finishReason);
            out.writeCharSequence(",\"stop_reason\":", US_ASCII);
            SseChunks.writeStopReason(out, choice);
        }
        out.writeCharSequence(",\"token_ids\":null}]}", US_ASCII);
        out.writeBytes(SseChunks.EVENT_END);
    }

    /** Bytes {@code [from, to)} of the choice's text (absolute offsets), escaped. */
    private static void writeRange(final ByteBuf out, final Choice choice, final int from, final int to)
    {
        if (to > from)
        {
            JsonBytes.writeEscaped(out, choice.pendingBytes(), from - choice.consumedBytes, to - from);
        }
    }

    /**
     * @return the finish reason a tool-call choice reports: {@code tool_calls} when the call was written whole
     *     (not for a named choice, which reports {@code stop} as OpenAI does), else the engine's.
     */
    static byte[] finishReasonJson(final Choice choice)
    {
        if (FinishReason.STOP == choice.finishReason && OutputPlan.Format.ARGUMENTS != choice.plan.format())
        {
            return FINISH_TOOL_CALLS;
        }
        return SseChunks.finishReasonJson(choice.finishReason);
    }

    /**
     * The non-streaming message of a tool-call choice, from {@code "content"} to the end of {@code "tool_calls"}:
     * {@code "content":"","refusal":null,...,"tool_calls":[{"id":..,"type":"function","function":{..}}]}.
     */
    static void writeMessageFields(final ByteBuf out, final Choice choice)
    {
        final OutputPlan plan = choice.plan;
        final boolean named = OutputPlan.Format.ARGUMENTS == plan.format();
        final boolean whole = FinishReason.STOP == choice.finishReason;
        final boolean parserStyle = OutputPlan.Format.HERMES == plan.format() ||
            OutputPlan.Format.LLAMA3_JSON == plan.format();
        out.writeCharSequence("\"content\":", US_ASCII);
        if (!named && !whole && parserStyle)
        {
            out.writeByte('"');
            JsonBytes.writeEscaped(out, choice.pendingBytes(), 0, choice.pendingLength());
            out.writeByte('"');
        }
        else
        {
            out.writeCharSequence(parserStyle ? "null" : "\"\"", US_ASCII);
        }
        out.writeCharSequence(",\"refusal\":null,\"annotations\":null,\"audio\":null,\"function_call\":null," +
            "\"tool_calls\":[", US_ASCII);
        if (named || whole)
        {
            out.writeCharSequence("{\"id\":", US_ASCII);
            JsonBytes.writeString(out, plan.callId());
            out.writeCharSequence(",\"type\":\"function\",\"function\":{\"name\":",
                US_ASCII);
            JsonBytes.writeString(out, plan.functionName());
            out.writeCharSequence(",\"arguments\":\"", US_ASCII);
            final int from = named ? 0 : plan.argumentsStartByte();
            final int to = named ? choice.pendingLength() : Math.min(plan.argumentsEndByte(), choice.pendingLength());
            JsonBytes.writeEscaped(out, choice.pendingBytes(), from, Math.max(0, to - from));
            out.writeCharSequence("\"}}", US_ASCII);
        }
        out.writeByte(']');
    }
}
