package dev.tapedeck.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;

import dev.tapedeck.engine.FinishReason;

/**
 * OpenAI's Responses API as vLLM serves it ({@code POST /v1/responses}): a {@code response} object with one output
 * item, a {@code message} with its {@code output_text}, or a {@code function_call}; {@code status} {@code incomplete}
 * with {@code incomplete_details.reason = "max_output_tokens"} when cut by the limit. Streamed as named events with a
 * {@code sequence_number} from 0 and no {@code [DONE]}: {@code response.created}, {@code response.in_progress},
 * {@code response.output_item.added}, {@code response.content_part.added}, {@code response.output_text.delta}...,
 * {@code response.output_text.done}, {@code response.content_part.done}, {@code response.output_item.done},
 * {@code response.completed} (a call: {@code response.function_call_arguments.delta}... and {@code .done} in place
 * of the content part's events). One choice.
 */
final class ResponsesShape extends ResponseShape
{
    private int sequence;
    private boolean started;
    private boolean itemAdded;
    private final String itemId;

    ResponsesShape(final HttpStream stream)
    {
        super(stream);
        itemId = stream.responseId.replace("resp_", "");
    }

    @Override
    void writeEvents(final ByteBuf frame, final boolean finishedAll)
    {
        final Choice choice = stream.choices[0];
        if (!started)
        {
            started = true;
            event(frame, "response.created", next("response.created").set("response",
                response("in_progress", false)));
            event(frame, "response.in_progress", next("response.in_progress").set("response",
                response("in_progress", false)));
        }
        if (choice.isToolCall() ? !itemAdded && callStarted(choice) : !itemAdded)
        {
            itemAdded = true;
            final ObjectNode item = choice.isToolCall() ? functionCall(choice, "", "in_progress") :
                message("in_progress", null);
            event(frame, "response.output_item.added", next("response.output_item.added").put("output_index", 0)
                .set("item", item));
            if (!choice.isToolCall())
            {
                final ObjectNode part = next("response.content_part.added").put("output_index", 0)
                    .put("item_id", itemId).put("content_index", 0);
                part.set("part", outputText("", true));
                event(frame, "response.content_part.added", part);
            }
        }
        final String delta = takeText(choice);
        if (!delta.isEmpty())
        {
            if (choice.isToolCall())
            {
                event(frame, "response.function_call_arguments.delta", next("response.function_call_arguments" +
                    ".delta").put("item_id", itemId).put("output_index", 0).put("delta", delta));
            }
            else
            {
                final ObjectNode event = next("response.output_text.delta").put("item_id", itemId)
                    .put("output_index", 0).put("content_index", 0).put("delta", delta);
                event.putArray("logprobs");
                event(frame, "response.output_text.delta", event);
            }
        }
        if (finishedAll && !choice.finalSent)
        {
            choice.finalSent = true;
            writeItemDone(frame, choice);
            event(frame, "response.completed", next("response.completed").set("response",
                response(status(choice), true)));
        }
    }

    private void writeItemDone(final ByteBuf frame, final Choice choice)
    {
        if (choice.isToolCall())
        {
            if (itemAdded)
            {
                event(frame, "response.function_call_arguments.done", next("response.function_call_arguments.done")
                    .put("item_id", itemId).put("output_index", 0).put("arguments", fullArguments())
                    .put("name", choice.plan.functionName()));
                event(frame, "response.output_item.done", next("response.output_item.done").put("output_index", 0)
                    .set("item", functionCall(choice, fullArguments(), "completed")));
            }
            return;
        }
        final String text = fullText();
        final ObjectNode textDone = next("response.output_text.done").put("item_id", itemId).put("output_index", 0)
            .put("content_index", 0).put("text", text);
        textDone.putArray("logprobs");
        event(frame, "response.output_text.done", textDone);
        final ObjectNode partDone = next("response.content_part.done").put("item_id", itemId).put("output_index", 0)
            .put("content_index", 0);
        partDone.set("part", outputText(text, false));
        event(frame, "response.content_part.done", partDone);
        event(frame, "response.output_item.done", next("response.output_item.done").put("output_index", 0)
            .set("item", message("completed", text)));
    }

    @Override
    void writeFull(final ByteBuf out)
    {
        write(out, response(status(stream.choices[0]), true));
    }

    private static String status(final Choice choice)
    {
        return FinishReason.LENGTH == choice.finishReason ? "incomplete" : "completed";
    }

    private ObjectNode next(final String type)
    {
        return NODES.objectNode().put("type", type).put("sequence_number", sequence++);
    }

    private ObjectNode response(final String status, final boolean done)
    {
        final Choice choice = stream.choices[0];
        final ObjectNode response = NODES.objectNode().put("id", stream.responseId)
            .put("created_at", stream.createdSeconds);
        if ("incomplete".equals(status))
        {
            response.putObject("incomplete_details").put("reason", "max_output_tokens");
        }
        else
        {
            response.putNull("incomplete_details");
        }
        response.putNull("instructions").putNull("metadata").put("model", stream.modelName())
            .put("object", "response");
        final ArrayNode output = response.putArray("output");
        if (done)
        {
            if (callMade(choice))
            {
                output.add(functionCall(choice, stream.streaming ? fullArguments() : wholeArguments(choice),
                    "completed"));
            }
            else
            {
                final String text = stream.streaming ? fullText() : wholeText(choice);
                output.add(message("completed", text));
            }
        }
        response.put("parallel_tool_calls", true).put("temperature", 1.0).put("top_p", 1.0).put("tool_choice", "auto");
        response.putArray("tools");
        response.put("background", false).put("max_output_tokens", choice.request.maxTokens() > 0 ?
            choice.request.maxTokens() : stream.maxModelLen() - stream.promptTokens).putNull("max_tool_calls")
            .putNull("previous_response_id").putNull("prompt").putNull("reasoning").put("service_tier", "auto")
            .put("status", done ? status : "in_progress").putNull("text").putNull("top_logprobs")
            .put("truncation", "disabled");
        if (done)
        {
            final int outputTokens = stream.completionTokens();
            final ObjectNode usage = response.putObject("usage").put("input_tokens", stream.promptTokens);
            usage.putObject("input_tokens_details").put("cached_tokens", stream.cachedTokens());
            usage.put("output_tokens", outputTokens);
            usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
            usage.put("total_tokens", stream.promptTokens + outputTokens);
        }
        else
        {
            response.putNull("usage");
        }
        response.putNull("user");
        return response;
    }

    private ObjectNode message(final String status, final String text)
    {
        final ObjectNode item = NODES.objectNode().put("id", "msg_" + itemId).put("type", "message")
            .put("role", "assistant").put("status", status);
        final ArrayNode content = item.putArray("content");
        if (null != text && !text.isEmpty())
        {
            content.add(outputText(text, false));
        }
        return item;
    }

    private static ObjectNode outputText(final String text, final boolean streamedStart)
    {
        final ObjectNode part = NODES.objectNode().put("type", "output_text").put("text", text);
        part.putArray("annotations");
        if (streamedStart)
        {
            part.putArray("logprobs");
        }
        else
        {
            part.putNull("logprobs");
        }
        return part;
    }

    private ObjectNode functionCall(final Choice choice, final String arguments, final String status)
    {
        return NODES.objectNode().put("id", "fc_" + itemId).put("type", "function_call")
            .put("call_id", choice.plan.callId()).put("name", choice.plan.functionName()).put("arguments", arguments)
            .put("status", status);
    }
}
