package dev.tapedeck.structured;

import java.nio.charset.StandardCharsets;

/**
 * A choice's output decided before it runs: the text the simulated model writes (tokenized into the request's fixed
 * output) and, for a tool call, where in that text the call's arguments lie, so the frontend can turn the text into
 * {@code tool_calls} as vLLM's tool parsers do, streamed or whole. Immutable.
 */
public final class OutputPlan
{
    /** How the model's text carries a tool call. */
    public enum Format
    {
        /** No call: the text is the answer (a structured output). */
        TEXT,
        /** The text is the arguments object (a named tool choice). */
        ARGUMENTS,
        /** {@code [{"name": .., "parameters": {..}}]} ({@code tool_choice: required}). */
        REQUIRED_LIST,
        /** {@code <tool_call>\n{"name": .., "arguments": {..}}\n</tool_call>} ({@code auto}, Hermes parser). */
        HERMES,
        /** {@code {"name": .., "parameters": {..}}} ({@code auto}, Llama 3 JSON parser). */
        LLAMA3_JSON
    }

    private final Format format;
    private final String text;
    private final String before;
    private final String arguments;
    private final String after;
    private final int argumentsStartByte;
    private final int argumentsEndByte;
    private final String functionName;
    private final String callId;

    private OutputPlan(final Format format, final String before, final String arguments, final String after,
        final int argumentsStartByte, final int argumentsEndByte, final String functionName, final String callId)
    {
        this.format = format;
        this.before = before;
        this.arguments = arguments;
        this.after = after;
        this.text = before + arguments + after;
        this.argumentsStartByte = argumentsStartByte;
        this.argumentsEndByte = argumentsEndByte;
        this.functionName = functionName;
        this.callId = callId;
    }

    /**
     * @param text the answer.
     * @return a plan without a call.
     */
    public static OutputPlan text(final String text)
    {
        return new OutputPlan(Format.TEXT, "", text, "", 0, 0, null, null);
    }

    /**
     * @param format how the call is written.
     * @param before the text before the arguments.
     * @param arguments the arguments object.
     * @param after the text after it.
     * @param functionName the called function.
     * @param callId the call's id.
     * @return the plan.
     */
    public static OutputPlan toolCall(final Format format, final String before, final String arguments,
        final String after, final String functionName, final String callId)
    {
        final int start = before.getBytes(StandardCharsets.UTF_8).length;
        final int end = start + arguments.getBytes(StandardCharsets.UTF_8).length;
        return new OutputPlan(format, before, arguments, after, start, end, functionName, callId);
    }

    /**
     * @param beforeBytes decoded bytes of the text before the arguments, as the tokenizer gives them back.
     * @param argumentsBytes decoded bytes of the arguments.
     * @return this plan with its arguments' offsets in the decoded text (which may differ from the UTF-8 of
     *     {@link #text()}: a SentencePiece tokenizer decodes a leading space, say).
     */
    public OutputPlan atDecodedOffsets(final int beforeBytes, final int argumentsBytes)
    {
        return new OutputPlan(format, before, arguments, after, beforeBytes, beforeBytes + argumentsBytes,
            functionName, callId);
    }

    /**
     * @return the text before the arguments (empty for none).
     */
    public String before()
    {
        return before;
    }

    /**
     * @return the arguments (for a plain text plan, the whole text).
     */
    public String arguments()
    {
        return arguments;
    }

    /**
     * @return the text after the arguments (empty for none).
     */
    public String after()
    {
        return after;
    }

    public Format format()
    {
        return format;
    }

    /**
     * @return true when the output is a tool call.
     */
    public boolean isToolCall()
    {
        return Format.TEXT != format;
    }

    /**
     * @return the text the model writes.
     */
    public String text()
    {
        return text;
    }

    /**
     * @return the byte offset in the UTF-8 text where the arguments start.
     */
    public int argumentsStartByte()
    {
        return argumentsStartByte;
    }

    /**
     * @return the byte offset in the UTF-8 text where the arguments end.
     */
    public int argumentsEndByte()
    {
        return argumentsEndByte;
    }

    public String functionName()
    {
        return functionName;
    }

    public String callId()
    {
        return callId;
    }
}
