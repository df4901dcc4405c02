package dev.tapedeck.http;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.tapedeck.structured.OutputConstraint;
import dev.tapedeck.structured.ToolCalling;

/**
 * Reads the request fields that shape the output rather than its length: {@code tools}, {@code tool_choice},
 * {@code response_format} and {@code structured_outputs}, with vLLM's checks and messages (the older
 * {@code guided_*} fields are ignored, as vLLM ignores them since 0.12). Stateless.
 */
final class StructuredFields
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private StructuredFields()
    {
    }

    /**
     * @param root a chat request's body.
     * @return its tools and tool choice, or null when it has no tools (or {@code tool_choice} is {@code none}).
     * @throws ApiException 400 for a malformed tool, or a tool choice that names no tool.
     */
    static ToolCalling toolCalling(final JsonNode root)
    {
        final JsonNode tools = root.get("tools");
        final JsonNode choiceNode = root.get("tool_choice");
        final boolean hasTools = null != tools && !tools.isNull();
        final boolean noneChosen = null != choiceNode && "none".equals(choiceNode.asText(null));
        if (!hasTools)
        {
            if (null != choiceNode && !choiceNode.isNull() && !noneChosen)
            {
                throw ApiException.badRequest("When using `tool_choice`, `tools` must be set.", "tool_choice");
            }
            return null;
        }
        if (!tools.isArray())
        {
            throw ApiException.validation(RequestParser.typeError("list_type", "tools",
                "Input should be a valid list"), "body.tools");
        }
        if (tools.isEmpty())
        {
            throw ApiException.badRequest("`tools` must not be an empty array. Either provide at least one tool or " +
                "omit the field entirely.", "tools");
        }
        final List<ToolCalling.Function> functions = new ArrayList<>(tools.size());
        for (int i = 0; i < tools.size(); i++)
        {
            functions.add(function(tools.get(i), i));
        }
        ToolCalling.Choice choice = ToolCalling.Choice.AUTO;
        String forced = null;
        if (null != choiceNode && !choiceNode.isNull())
        {
            if (choiceNode.isTextual())
            {
                choice = switch (choiceNode.asText())
                {
                    case "none" -> ToolCalling.Choice.NONE;
                    case "auto" -> ToolCalling.Choice.AUTO;
                    case "required" -> ToolCalling.Choice.REQUIRED;
                    default -> throw ApiException.badRequest("Invalid value for `tool_choice`: " +
                        choiceNode.asText() + "! Only named tools, \"none\", \"auto\" or \"required\" are " +
                        "supported.", "tool_choice");
                };
            }
            else
            {
                forced = forcedName(choiceNode);
                choice = ToolCalling.Choice.NAMED;
            }
        }
        final ToolCalling calling = new ToolCalling(List.copyOf(functions), choice, forced);
        if (ToolCalling.Choice.NAMED == choice && null == calling.byName(forced))
        {
            throw ApiException.badRequest("The tool specified in `tool_choice` does not match any of the specified " +
                "`tools`", "tool_choice");
        }
        return calling;
    }

    /** A named tool choice's function name, with vLLM's messages for a malformed one. */
    private static String forcedName(final JsonNode choice)
    {
        final String usage = " Correct usage: `{\"type\": \"function\", \"function\": {\"name\": " +
            "\"my_function\"}}`";
        final JsonNode function = choice.get("function");
        if (!choice.isObject() || null == function || !function.isObject())
        {
            throw ApiException.badRequest("Invalid value for `function`: `" + function + "` in `tool_choice`!" +
                usage, "tool_choice");
        }
        final JsonNode name = function.get("name");
        if (null == name)
        {
            throw ApiException.badRequest("Expected field `name` in `function` in `tool_choice`!" + usage,
                "tool_choice");
        }
        if (!name.isTextual() || name.asText().isEmpty())
        {
            throw ApiException.badRequest("Invalid `name` in `function`: `" + name + "` in `tool_choice`!" + usage,
                "tool_choice");
        }
        return name.asText();
    }

    /**
     * @param root a chat request's body with tools.
     * @return its tools as plain maps, as a chat template receives them.
     */
    static List<java.util.Map<String, Object>> toolMaps(final JsonNode root)
    {
        return MAPPER.convertValue(root.get("tools"), new com.fasterxml.jackson.core.type.TypeReference<>()
        {
        });
    }

    /**
     * An assistant message's earlier {@code tool_calls} as plain maps, each call's {@code arguments} parsed from its
     * JSON string into a map, as vLLM hands them to chat templates (left as the string when it is not JSON).
     *
     * @param calls the message's {@code tool_calls}, or null.
     * @return the calls, empty for none.
     */
    static List<java.util.Map<String, Object>> earlierToolCalls(final JsonNode calls)
    {
        if (null == calls || !calls.isArray() || calls.isEmpty())
        {
            return List.of();
        }
        final List<java.util.Map<String, Object>> out = new ArrayList<>(calls.size());
        for (final JsonNode call : calls)
        {
            final java.util.Map<String, Object> fields = MAPPER.convertValue(call,
                new com.fasterxml.jackson.core.type.TypeReference<>()
                {
                });
            final JsonNode arguments = call.path("function").get("arguments");
            if (null != arguments && arguments.isTextual() && fields.get("function") instanceof java.util.Map)
            {
                @SuppressWarnings("unchecked")
                final java.util.Map<String, Object> function = (java.util.Map<String, Object>)fields.get("function");
                try
                {
                    function.put("arguments", MAPPER.readValue(arguments.asText(), Object.class));
                }
                catch (final java.io.IOException ex)
                {
                    // not JSON: the template gets the string
                }
            }
            out.add(fields);
        }
        return out;
    }

    private static ToolCalling.Function function(final JsonNode tool, final int index)
    {
        final JsonNode function = null == tool ? null : tool.get("function");
        if (null == function || !function.isObject())
        {
            throw ApiException.validation(RequestParser.typeError("missing", "tools', " + index + ", 'function",
                "Field required"), "body.tools." + index + ".function");
        }
        final JsonNode name = function.get("name");
        if (null == name || !name.isTextual())
        {
            throw ApiException.validation(RequestParser.typeError("missing", "tools', " + index +
                ", 'function', 'name", "Field required"), "body.tools." + index + ".function.name");
        }
        final JsonNode parameters = function.get("parameters");
        if (null != parameters && !parameters.isNull() && !parameters.isObject())
        {
            throw ApiException.validation(RequestParser.typeError("dict_type", "tools', " + index +
                ", 'function', 'parameters", "Input should be a valid dictionary"),
                "body.tools." + index + ".function.parameters");
        }
        return new ToolCalling.Function(name.asText(), function, null == parameters || parameters.isNull() ? null :
            parameters);
    }

    /**
     * @param root a chat or completions request's body.
     * @return the structured-output constraint it asks for, or null for free text.
     * @throws ApiException 400 for a malformed format, or two constraints at once.
     */
    static OutputConstraint constraint(final JsonNode root)
    {
        final List<OutputConstraint> found = new ArrayList<>(1);
        final JsonNode structured = root.get("structured_outputs");
        if (null != structured && !structured.isNull())
        {
            if (!structured.isObject())
            {
                throw ApiException.validation(RequestParser.typeError("model_type", "structured_outputs",
                    "Input should be an object"), "body.structured_outputs");
            }
            addStructured(found, structured);
        }
        if (found.size() > 1)
        {
            throw ApiException.badRequest("You can only use one kind of constraints for structured outputs " +
                "('json', 'regex' or 'choice').", "structured_outputs");
        }
        final JsonNode format = root.get("response_format");
        final OutputConstraint fromFormat = null == format || format.isNull() ? null : responseFormat(format);
        // response_format wins over structured_outputs; the guided_* fields left vLLM in 0.12 and are ignored
        return null != fromFormat ? fromFormat : found.isEmpty() ? null : found.get(0);
    }

    private static OutputConstraint responseFormat(final JsonNode format)
    {
        final String type = format.path("type").asText("");
        switch (type)
        {
            case "text":
                return null;
            case "json_object":
                return OutputConstraint.jsonObject();
            case "json_schema":
            {
                final JsonNode spec = format.get("json_schema");
                if (null == spec || !spec.isObject())
                {
                    throw ApiException.badRequest("When response_format type is 'json_schema', the 'json_schema' " +
                        "field must be provided.", "response_format");
                }
                if (!spec.path("name").isTextual())
                {
                    throw ApiException.validation(RequestParser.typeError("missing", "response_format', " +
                        "'json_schema', 'name", "Field required"), "body.response_format.json_schema.name");
                }
                final JsonNode schema = spec.get("schema");
                if (null != schema && !schema.isNull() && !schema.isObject())
                {
                    throw ApiException.badRequest("response_format.json_schema.schema must be a JSON object",
                        "response_format");
                }
                return null == schema || schema.isNull() ? OutputConstraint.jsonObject() :
                    OutputConstraint.jsonSchema(schema);
            }
            case "structural_tag":
                throw ApiException.badRequest("response_format type 'structural_tag' is not simulated by tapedeck",
                    "response_format");
            default:
                throw ApiException.validation(RequestParser.typeError("literal_error", "response_format', 'type",
                    "Input should be \\'text\\', \\'json_object\\', \\'json_schema\\' or \\'structural_tag\\'"),
                    "body.response_format.type");
        }
    }

    private static void addStructured(final List<OutputConstraint> found, final JsonNode node)
    {
        final String paramPrefix = "structured_outputs.";
        final JsonNode json = present(node, "json");
        if (null != json)
        {
            found.add(OutputConstraint.jsonSchema(json.isTextual() ? parseSchema(json.asText(), paramPrefix +
                "json") : json));
        }
        final JsonNode regex = present(node, "regex");
        if (null != regex)
        {
            try
            {
                found.add(OutputConstraint.regex(regex.asText()));
            }
            catch (final IllegalArgumentException ex)
            {
                throw ApiException.badRequest(ex.getMessage(), paramPrefix + "regex");
            }
        }
        final JsonNode choice = present(node, "choice");
        if (null != choice)
        {
            if (!choice.isArray() || choice.isEmpty())
            {
                throw ApiException.badRequest(paramPrefix + "choice must be a non-empty list of strings",
                    paramPrefix + "choice");
            }
            final List<String> choices = new ArrayList<>();
            choice.forEach(c -> choices.add(c.asText()));
            found.add(OutputConstraint.choice(choices));
        }
        final JsonNode jsonObject = present(node, "json_object");
        if (null != jsonObject && jsonObject.asBoolean(false))
        {
            found.add(OutputConstraint.jsonObject());
        }
        final JsonNode grammar = present(node, "grammar");
        if (null != grammar)
        {
            throw ApiException.badRequest("grammar-constrained output is not simulated by tapedeck (json, regex and " +
                "choice are)", paramPrefix + "grammar");
        }
    }

    private static JsonNode present(final JsonNode node, final String field)
    {
        final JsonNode value = node.get(field);
        return null == value || value.isNull() ? null : value;
    }

    private static JsonNode parseSchema(final String text, final String param)
    {
        try
        {
            final JsonNode schema = MAPPER.readTree(text);
            if (null == schema || !schema.isObject())
            {
                throw ApiException.badRequest(param + " must be a JSON Schema object", param);
            }
            return schema;
        }
        catch (final java.io.IOException ex)
        {
            throw ApiException.badRequest(param + " is not valid JSON: " + String.valueOf(ex.getMessage()).lines()
                .findFirst().orElse(""), param);
        }
    }
}
