package dev.tapedeck.structured;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.net.JsonBytes;

/**
 * A chat request's {@code tools} and {@code tool_choice}, and what the simulated model does with them:
 * <ul>
 *   <li>{@code none}: text, as without tools;</li>
 *   <li>a named function: that function's arguments, as vLLM's guided decoding makes the model write them (the
 *       text is the arguments object);</li>
 *   <li>{@code required}: one call of a function drawn from the tools, written as the JSON list vLLM constrains the
 *       model to ({@code [{"name": .., "parameters": {..}}]});</li>
 *   <li>{@code auto}: with probability {@code autoCallRate} a call in the Hermes format tool parsers read
 *       ({@code <tool_call>\n{"name": .., "arguments": {..}}\n</tool_call>}), else text. After a tool's result
 *       (the last message has role {@code tool}) the model answers in text, so an agent's loop ends.</li>
 * </ul>
 * Arguments are sampled from the function's {@code parameters} schema ({@link JsonSampler}). Immutable.
 *
 * @param functions the tools' functions, at least one.
 * @param choice the tool choice.
 * @param forcedName the function a named tool choice names, else null.
 */
public record ToolCalling(List<Function> functions, Choice choice, String forcedName)
{
    /** {@code tool_choice}. */
    public enum Choice
    {
        /** Never call. */
        NONE,
        /** The model decides. */
        AUTO,
        /** At least one call. */
        REQUIRED,
        /** Call {@link ToolCalling#forcedName()}. */
        NAMED
    }

    /** vLLM's {@code --tool-call-parser}: how the model writes an {@code auto} call in its text. */
    public enum Parser
    {
        /** {@code <tool_call>\n{"name": .., "arguments": {..}}\n</tool_call>} (Qwen, Hermes). */
        HERMES,
        /** {@code {"name": .., "parameters": {..}}} (Llama 3.x). */
        LLAMA3_JSON;

        /**
         * @param name a parser name as vLLM spells it.
         * @return the parser.
         * @throws IllegalArgumentException naming the simulated ones.
         */
        public static Parser of(final String name)
        {
            return switch (name)
            {
                case "hermes" -> HERMES;
                case "llama3_json" -> LLAMA3_JSON;
                default -> throw new IllegalArgumentException("--tool-call-parser " + name + " is not simulated; " +
                    "choose hermes or llama3_json");
            };
        }
    }

    /**
     * One {@code {"type":"function","function":{...}}} tool.
     *
     * @param name the function's name.
     * @param definition the whole {@code function} object, as rendered into the prompt.
     * @param parameters its parameters' JSON Schema, or null.
     */
    public record Function(String name, JsonNode definition, JsonNode parameters)
    {
    }

    /**
     * Decide one choice's output.
     *
     * @param random the choice's random source.
     * @param autoCallRate the probability that {@code auto} calls a function.
     * @param parser how an {@code auto} call is written.
     * @param afterToolResult true when the conversation's last message is a tool's result.
     * @param idSuffix the call id's random part.
     * @return the planned output with its call, or null for free text.
     */
    public OutputPlan plan(final SeededRandom random, final double autoCallRate, final Parser parser,
        final boolean afterToolResult, final String idSuffix)
    {
        final String callId = "chatcmpl-tool-" + idSuffix;
        switch (choice)
        {
            case NAMED:
            {
                final Function function = byName(forcedName);
                final String arguments = JsonSampler.sample(function.parameters(), random);
                return OutputPlan.toolCall(OutputPlan.Format.ARGUMENTS, "", arguments, "", function.name(), callId);
            }
            case REQUIRED:
            {
                final Function function = functions.get(random.nextInt(functions.size()));
                final String arguments = JsonSampler.sample(function.parameters(), random);
                return OutputPlan.toolCall(OutputPlan.Format.REQUIRED_LIST, "[{\"name\": " +
                    JsonBytes.quote(function.name()) + ", \"parameters\": ", arguments, "}]", function.name(), callId);
            }
            case AUTO:
            {
                if (afterToolResult || random.nextDouble() >= autoCallRate)
                {
                    return null;
                }
                final Function function = functions.get(random.nextInt(functions.size()));
                final String arguments = JsonSampler.sample(function.parameters(), random);
                if (Parser.LLAMA3_JSON == parser)
                {
                    return OutputPlan.toolCall(OutputPlan.Format.LLAMA3_JSON, "{\"name\": " +
                        JsonBytes.quote(function.name()) + ", \"parameters\": ", arguments, "}", function.name(),
                        callId);
                }
                return OutputPlan.toolCall(OutputPlan.Format.HERMES, "<tool_call>\n{\"name\": " +
                    JsonBytes.quote(function.name()) + ", \"arguments\": ", arguments, "}\n</tool_call>",
                    function.name(), callId);
            }
            default:
                return null;
        }
    }

    /**
     * @param name a function name.
     * @return the function, or null.
     */
    public Function byName(final String name)
    {
        for (final Function function : functions)
        {
            if (function.name().equals(name))
            {
                return function;
            }
        }
        return null;
    }
}
