package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.structured.OutputPlan;

/**
 * The wire shape of a response of the Responses, Messages or generate API: the same engine request and timing as a
 * chat or completion, written as that API writes it, streamed ({@link #writeEvents}) or whole ({@link #writeFull}).
 * Chat and completions keep their own byte templates ({@link SseChunks}, {@link FullResponses}), which allocate
 * nothing per token; these shapes build each event with Jackson, as they are used far less.
 * <p>
 * One per response; event-loop confined.
 */
abstract class ResponseShape
{
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    final HttpStream stream;
    /** The text written so far, for the APIs whose last events repeat it whole. */
    private final ByteArrayOutputStream text = new ByteArrayOutputStream();
    private final ByteArrayOutputStream arguments = new ByteArrayOutputStream();

    ResponseShape(final HttpStream stream)
    {
        this.stream = stream;
    }

    /**
     * @return the shape of an endpoint's responses, or null for chat and completions.
     */
    static ResponseShape of(final ParsedRequest.Endpoint endpoint, final HttpStream stream)
    {
        return switch (endpoint)
        {
            case GENERATE -> new GenerateShape(stream);
            case RESPONSES -> new ResponsesShape(stream);
            case MESSAGES -> new MessagesShape(stream);
            default -> null;
        };
    }

    /**
     * Write what the engine produced since the last flush, and the stream's end when every choice finished.
     */
    abstract void writeEvents(ByteBuf frame, boolean finishedAll);

    /**
     * Write the whole response body.
     */
    abstract void writeFull(ByteBuf out);

    /**
     * @return the id responses report.
     */
    String responseId()
    {
        return stream.responseId;
    }

    /** {@code event: <type>\ndata: <json>\n\n}. */
    static void event(final ByteBuf out, final String type, final JsonNode data)
    {
        out.writeCharSequence("event: " + type + "\n", StandardCharsets.UTF_8);
        data(out, data);
    }

    /** {@code data: <json>\n\n}. */
    static void data(final ByteBuf out, final JsonNode data)
    {
        out.writeBytes(SseChunks.DATA);
        write(out, data);
        out.writeBytes(SseChunks.EVENT_END);
    }

    static void write(final ByteBuf out, final JsonNode data)
    {
        try
        {
            out.writeBytes(JSON.writeValueAsBytes(data));
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalStateException("cannot write a response event", ex);
        }
    }

    /**
     * The text a choice may send now, taken from its buffer: the part of it that is text (a tool call's arguments
     * go to {@link #takeArguments}), kept for {@link #fullText()}.
     *
     * @return the new text (may be empty).
     */
    String takeText(final Choice choice)
    {
        final int length = choice.emittableLength();
        String delta = "";
        if (!choice.isToolCall())
        {
            delta = new String(choice.pendingBytes(), 0, length, StandardCharsets.UTF_8);
            text.write(choice.pendingBytes(), 0, length);
        }
        else
        {
            final OutputPlan plan = choice.plan;
            final int start = choice.consumedBytes;
            final int from = Math.max(start, plan.argumentsStartByte());
            final int to = OutputPlan.Format.ARGUMENTS == plan.format() ? start + length :
                Math.min(start + length, plan.argumentsEndByte());
            if (to > from)
            {
                delta = new String(choice.pendingBytes(), from - start, to - from, StandardCharsets.UTF_8);
                arguments.write(choice.pendingBytes(), from - start, to - from);
            }
        }
        choice.consume(length);
        return delta;
    }

    /**
     * @return true when a choice's tool call is to be reported as a call: a named one always, others when written
     *     whole.
     */
    static boolean callMade(final Choice choice)
    {
        return choice.isToolCall() && (OutputPlan.Format.ARGUMENTS == choice.plan.format() ||
            FinishReason.STOP == choice.finishReason);
    }

    /**
     * @return true once a streamed tool call's arguments have begun.
     */
    static boolean callStarted(final Choice choice)
    {
        return choice.isToolCall() && choice.consumedBytes + choice.emittableLength() >
            choice.plan.argumentsStartByte();
    }

    String fullText()
    {
        return text.toString(StandardCharsets.UTF_8);
    }

    String fullArguments()
    {
        return arguments.toString(StandardCharsets.UTF_8);
    }

    /**
     * @return the whole text of a finished, non-streamed choice: for a call cut short (no call), the raw text.
     */
    static String wholeText(final Choice choice)
    {
        return new String(choice.pendingBytes(), 0, choice.pendingLength(), StandardCharsets.UTF_8);
    }

    /**
     * @return the arguments of a finished, non-streamed call.
     */
    static String wholeArguments(final Choice choice)
    {
        final OutputPlan plan = choice.plan;
        final boolean named = OutputPlan.Format.ARGUMENTS == plan.format();
        final int from = named ? 0 : plan.argumentsStartByte();
        final int to = named ? choice.pendingLength() : Math.min(plan.argumentsEndByte(), choice.pendingLength());
        return new String(choice.pendingBytes(), from, Math.max(0, to - from), StandardCharsets.UTF_8);
    }

    /**
     * @return the arguments as a JSON object, or an empty one when they do not parse (a named call cut short).
     */
    static JsonNode argumentsObject(final String arguments)
    {
        try
        {
            final JsonNode node = JSON.readTree(arguments);
            return null != node && node.isObject() ? node : NODES.objectNode();
        }
        catch (final JsonProcessingException ex)
        {
            return NODES.objectNode();
        }
    }

    /**
     * vLLM's {@code generate} API: token ids in, token ids out, no text.
     * <pre>
     * {"request_id":"generate-tokens-..","choices":[{"index":0,"logprobs":null,"finish_reason":"length",
     *  "token_ids":[..]}],"prompt_logprobs":null,"kv_transfer_params":null}
     * </pre>
     * Streamed, each chunk is {@code data: {"request_id":..,"choices":[{..,"token_ids":[new ids]}]}}, then the
     * usage chunk ({@code stream_options.include_usage}) and {@code data: [DONE]}.
     */
    static final class GenerateShape extends ResponseShape
    {
        GenerateShape(final HttpStream stream)
        {
            super(stream);
        }

        @Override
        void writeEvents(final ByteBuf frame, final boolean finishedAll)
        {
            for (final Choice choice : stream.choices)
            {
                if (choice.finalSent || (0 == choice.tokenIdCount() && !choice.finished))
                {
                    continue;
                }
                choice.consume(choice.emittableLength());
                final ObjectNode chunk = NODES.objectNode().put("request_id", responseId());
                chunk.putArray("choices").add(choiceNode(choice, choice.finished));
                data(frame, chunk);
                choice.finalSent = choice.finished;
            }
            if (finishedAll)
            {
                if (stream.includeUsage())
                {
                    final ObjectNode usage = NODES.objectNode().put("request_id", responseId());
                    usage.putArray("choices");
                    usage.set("usage", usage(stream));
                    data(frame, usage);
                }
                frame.writeBytes(SseChunks.DONE);
            }
        }

        @Override
        void writeFull(final ByteBuf out)
        {
            final ObjectNode body = NODES.objectNode().put("request_id", responseId());
            final com.fasterxml.jackson.databind.node.ArrayNode choices = body.putArray("choices");
            for (final Choice choice : stream.choices)
            {
                choices.add(choiceNode(choice, true));
            }
            body.putNull("prompt_logprobs");
            final dev.tapedeck.engine.KvTransferParams kv = stream.choices[0].request.kvTransferResult();
            if (null == kv)
            {
                body.putNull("kv_transfer_params");
                write(out, body);
            }
            else
            {
                // the transfer parameters write themselves: splice them in as the last field
                write(out, body.without("kv_transfer_params"));
                out.writerIndex(out.writerIndex() - 1);
                out.writeCharSequence(",\"kv_transfer_params\":", StandardCharsets.US_ASCII);
                kv.writeJson(out);
                out.writeByte('}');
            }
        }

        private static ObjectNode choiceNode(final Choice choice, final boolean last)
        {
            final ObjectNode node = NODES.objectNode().put("index", choice.index).putNull("logprobs");
            if (last)
            {
                node.set("finish_reason", NODES.textNode(new String(choice.finishReasonJson(),
                    StandardCharsets.US_ASCII).replace("\"", "")));
            }
            else
            {
                node.putNull("finish_reason");
            }
            final com.fasterxml.jackson.databind.node.ArrayNode ids = node.putArray("token_ids");
            for (int i = 0; i < choice.tokenIdCount(); i++)
            {
                ids.add(choice.tokenId(i));
            }
            choice.tokenIdsWritten();
            return node;
        }
    }

    /**
     * @return OpenAI's usage object of a stream.
     */
    static ObjectNode usage(final HttpStream stream)
    {
        final int completion = stream.completionTokens();
        return NODES.objectNode().put("prompt_tokens", stream.promptTokens)
            .put("total_tokens", stream.promptTokens + completion).put("completion_tokens", completion);
    }
}
