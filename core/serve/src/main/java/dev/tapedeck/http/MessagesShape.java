package dev.tapedeck.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;

import dev.tapedeck.engine.FinishReason;

/**
 * Anthropic's Messages API as vLLM serves it ({@code POST /v1/messages}, on the OpenAI server's port):
 * <pre>
 * {"id":"chatcmpl-..","type":"message","role":"assistant","content":[{"type":"text","text":".."}],"model":"m",
 *  "stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":34}}
 * </pre>
 * A tool call is a {@code tool_use} block ({@code stop_reason} {@code tool_use}); the limit gives
 * {@code max_tokens}, a stop string {@code stop_sequence} with the string. Streamed as named events, no ping and no
 * {@code [DONE]}: {@code message_start}, {@code content_block_start}, {@code content_block_delta}
 * ({@code text_delta}, or {@code input_json_delta} for a call)..., {@code content_block_stop},
 * {@code message_delta} (stop reason and usage), {@code message_stop}. One choice.
 */
final class MessagesShape extends ResponseShape
{
    private boolean started;
    private boolean blockStarted;

    MessagesShape(final HttpStream stream)
    {
        super(stream);
    }

    @Override
    void writeEvents(final ByteBuf frame, final boolean finishedAll)
    {
        final Choice choice = stream.choices[0];
        if (!started)
        {
            started = true;
            final ObjectNode message = NODES.objectNode().put("id", responseId()).put("type", "message")
                .put("role", "assistant");
            message.putArray("content");
            message.put("model", stream.modelName()).putNull("stop_reason").putNull("stop_sequence");
            message.putObject("usage").put("input_tokens", stream.promptTokens).put("output_tokens", 0);
            event(frame, "message_start", NODES.objectNode().put("type", "message_start").set("message", message));
        }
        if (!blockStarted && (!choice.isToolCall() || callStarted(choice)))
        {
            blockStarted = true;
            final ObjectNode start = NODES.objectNode().put("type", "content_block_start").put("index", 0);
            start.set("content_block", choice.isToolCall() ? toolUse(choice, NODES.objectNode()) :
                NODES.objectNode().put("type", "text").put("text", ""));
            event(frame, "content_block_start", start);
        }
        final String delta = takeText(choice);
        if (!delta.isEmpty())
        {
            final ObjectNode body = NODES.objectNode().put("type", "content_block_delta").put("index", 0);
            body.set("delta", choice.isToolCall() ?
                NODES.objectNode().put("type", "input_json_delta").put("partial_json", delta) :
                NODES.objectNode().put("type", "text_delta").put("text", delta));
            event(frame, "content_block_delta", body);
        }
        if (finishedAll && !choice.finalSent)
        {
            choice.finalSent = true;
            if (blockStarted)
            {
                event(frame, "content_block_stop", NODES.objectNode().put("type", "content_block_stop")
                    .put("index", 0));
            }
            final ObjectNode end = NODES.objectNode().put("type", "message_delta");
            final ObjectNode stop = end.putObject("delta");
            stopFields(stop, choice);
            end.putObject("usage").put("input_tokens", stream.promptTokens)
                .put("output_tokens", stream.completionTokens());
            event(frame, "message_delta", end);
            event(frame, "message_stop", NODES.objectNode().put("type", "message_stop"));
        }
    }

    @Override
    void writeFull(final ByteBuf out)
    {
        final Choice choice = stream.choices[0];
        final ObjectNode message = NODES.objectNode().put("id", responseId()).put("type", "message")
            .put("role", "assistant");
        final ArrayNode content = message.putArray("content");
        if (callMade(choice))
        {
            content.add(toolUse(choice, argumentsObject(wholeArguments(choice))));
        }
        else
        {
            content.addObject().put("type", "text").put("text", wholeText(choice));
        }
        message.put("model", stream.modelName());
        stopFields(message, choice);
        message.putObject("usage").put("input_tokens", stream.promptTokens)
            .put("output_tokens", stream.completionTokens());
        write(out, message);
    }

    private static ObjectNode toolUse(final Choice choice, final com.fasterxml.jackson.databind.JsonNode input)
    {
        final ObjectNode block = NODES.objectNode().put("type", "tool_use").put("id", choice.plan.callId())
            .put("name", choice.plan.functionName());
        block.set("input", input);
        return block;
    }

    /** {@code stop_reason} and {@code stop_sequence}, Anthropic's names for the finish reason. */
    private static void stopFields(final ObjectNode into, final Choice choice)
    {
        if (FinishReason.LENGTH == choice.finishReason)
        {
            into.put("stop_reason", "max_tokens").putNull("stop_sequence");
        }
        else if (callMade(choice) && FinishReason.STOP == choice.finishReason)
        {
            into.put("stop_reason", "tool_use").putNull("stop_sequence");
        }
        else if (null != choice.stopReasonText)
        {
            into.put("stop_reason", "stop_sequence").put("stop_sequence", choice.stopReasonText);
        }
        else
        {
            into.put("stop_reason", "end_turn").putNull("stop_sequence");
        }
    }
}
