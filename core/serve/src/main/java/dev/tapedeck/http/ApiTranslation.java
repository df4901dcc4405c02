package dev.tapedeck.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Reads the bodies of {@code /v1/responses}, {@code /v1/messages} and {@code /inference/v1/generate} as the chat or
 * completions request each stands for, as vLLM's own servers convert them before the chat pipeline runs: the
 * Responses API's {@code input} items and {@code instructions}, Anthropic's {@code system}, content blocks,
 * {@code tool_use}/{@code tool_result} and {@code tools}, and generate's {@code token_ids} and
 * {@code sampling_params}. What a body lacks that its API requires is refused here with pydantic's words; the rest
 * is checked by {@link RequestParser} as for chat and completions. Stateless.
 */
final class ApiTranslation
{
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private ApiTranslation()
    {
    }

    /**
     * @param body the request body as sent.
     * @param endpoint the endpoint it was sent to.
     * @return the equivalent chat or completions body (the body itself for those two).
     */
    static JsonNode toOpenAi(final JsonNode body, final ParsedRequest.Endpoint endpoint)
    {
        return switch (endpoint)
        {
            case RESPONSES -> responses(body);
            case MESSAGES -> messages(body);
            case GENERATE -> generate(body);
            default -> body;
        };
    }

    private static ObjectNode copyCommon(final JsonNode body, final String... fields)
    {
        final ObjectNode out = NODES.objectNode();
        for (final String field : fields)
        {
            if (body.has(field))
            {
                out.set(field, body.get(field));
            }
        }
        return out;
    }

    /** vLLM's {@code GenerateRequest}: {@code token_ids} and {@code sampling_params} in, token ids out. */
    private static JsonNode generate(final JsonNode body)
    {
        final JsonNode tokenIds = body.get("token_ids");
        if (null == tokenIds || tokenIds.isNull())
        {
            throw ApiException.validation(RequestParser.typeError("missing", "token_ids", "Field required"),
                "body.token_ids");
        }
        if (!tokenIds.isArray() || tokenIds.isEmpty())
        {
            throw ApiException.validation(RequestParser.typeError("too_short", "token_ids",
                "List should have at least 1 item after validation, not 0"), "body.token_ids");
        }
        final ObjectNode out = copyCommon(body, "model", "stream", "stream_options", "request_id", "cache_salt",
            "priority", "kv_transfer_params", "cache_hit_threshold");
        out.set("prompt", tokenIds);
        final JsonNode sampling = body.get("sampling_params");
        if (null != sampling && !sampling.isNull())
        {
            if (!sampling.isObject())
            {
                throw ApiException.validation(RequestParser.typeError("model_type", "sampling_params",
                    "Input should be an object"), "body.sampling_params");
            }
            for (final String field : new String[] {"max_tokens", "min_tokens", "n", "stop", "stop_token_ids",
                "ignore_eos", "seed", "include_stop_str_in_output", "temperature",
                "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty",
                "structured_outputs"})
            {
                if (sampling.has(field))
                {
                    out.set(field, sampling.get(field));
                }
            }
            final JsonNode extra = sampling.path("extra_args").get("kv_transfer_params");
            if (null != extra && !out.has("kv_transfer_params"))
            {
                out.set("kv_transfer_params", extra);
            }
        }
        return out;
    }

    /** The OpenAI Responses API, as vLLM's {@code OpenAIServingResponses} reads it. */
    private static JsonNode responses(final JsonNode body)
    {
        final JsonNode input = body.get("input");
        if (null == input || input.isNull())
        {
            throw ApiException.validation(RequestParser.typeError("missing", "input", "Field required"),
                "body.input");
        }
        final ObjectNode out = copyCommon(body, "model", "stream", "request_id", "priority", "cache_salt",
            "temperature", "top_p", "top_k", "seed", "stop", "kv_transfer_params", "structured_outputs",
            "parallel_tool_calls");
        final ArrayNode messages = out.putArray("messages");
        if (body.path("instructions").isTextual())
        {
            messages.addObject().put("role", "system").put("content", body.get("instructions").asText());
        }
        if (input.isTextual())
        {
            messages.addObject().put("role", "user").put("content", input.asText());
        }
        else if (input.isArray())
        {
            for (final JsonNode item : input)
            {
                responsesItem(messages, item);
            }
        }
        else
        {
            throw ApiException.validation(RequestParser.typeError("string_type", "input",
                "Input should be a valid string or a list of items"), "body.input");
        }
        if (body.has("max_output_tokens") && !body.get("max_output_tokens").isNull())
        {
            out.set("max_tokens", body.get("max_output_tokens"));
        }
        final JsonNode tools = body.get("tools");
        if (null != tools && tools.isArray() && !tools.isEmpty())
        {
            final ArrayNode chatTools = out.putArray("tools");
            for (final JsonNode tool : tools)
            {
                if ("function".equals(tool.path("type").asText()))
                {
                    final ObjectNode function = chatTools.addObject().put("type", "function").putObject("function");
                    function.set("name", tool.get("name"));
                    copyIfPresent(tool, function, "description");
                    copyIfPresent(tool, function, "parameters");
                }
            }
            final JsonNode choice = body.get("tool_choice");
            if (null != choice && choice.isObject() && choice.has("name"))
            {
                out.putObject("tool_choice").put("type", "function").putObject("function")
                    .set("name", choice.get("name"));
            }
            else if (null != choice && !choice.isNull())
            {
                out.set("tool_choice", choice);
            }
        }
        final JsonNode format = body.path("text").get("format");
        if (null != format && format.isObject())
        {
            final String type = format.path("type").asText();
            if ("json_schema".equals(type))
            {
                final ObjectNode schema = out.putObject("response_format").put("type", "json_schema")
                    .putObject("json_schema");
                schema.put("name", format.path("name").asText("response"));
                copyIfPresent(format, schema, "schema");
            }
            else if ("json_object".equals(type))
            {
                out.putObject("response_format").put("type", "json_object");
            }
        }
        return out;
    }

    private static void responsesItem(final ArrayNode messages, final JsonNode item)
    {
        final String type = item.path("type").asText("message");
        switch (type)
        {
            case "function_call" ->
            {
                final ObjectNode call = messages.addObject().put("role", "assistant").putNull("content")
                    .putArray("tool_calls").addObject();
                call.put("id", item.path("call_id").asText("")).put("type", "function");
                call.putObject("function").put("name", item.path("name").asText(""))
                    .put("arguments", item.path("arguments").asText("{}"));
            }
            case "function_call_output" -> messages.addObject().put("role", "tool")
                .put("tool_call_id", item.path("call_id").asText("")).put("content", item.path("output").isTextual() ?
                    item.get("output").asText() : item.path("output").toString());
            case "reasoning" ->
            {
                // earlier reasoning is not part of the next prompt's text here
            }
            default ->
            {
                final ObjectNode message = messages.addObject().put("role", item.path("role").asText("user"));
                final JsonNode content = item.get("content");
                message.set("content", null == content ? NODES.textNode("") : content);
            }
        }
    }

    /** Anthropic's Messages API, as vLLM's {@code AnthropicServingMessages} converts it to chat. */
    private static JsonNode messages(final JsonNode body)
    {
        for (final String required : new String[] {"model", "messages", "max_tokens"})
        {
            if (!body.has(required) || body.get(required).isNull())
            {
                throw ApiException.validation(RequestParser.typeError("missing", required, "Field required"),
                    "body." + required);
            }
        }
        if (!body.get("max_tokens").canConvertToInt() || body.get("max_tokens").asInt() < 1)
        {
            throw ApiException.validation(RequestParser.typeError("greater_than", "max_tokens",
                "Input should be greater than 0"), "body.max_tokens");
        }
        final ObjectNode out = copyCommon(body, "model", "stream", "max_tokens", "temperature", "top_p", "top_k",
            "kv_transfer_params", "cache_salt");
        if (body.has("stop_sequences"))
        {
            out.set("stop", body.get("stop_sequences"));
        }
        if (body.path("stream").asBoolean(false))
        {
            out.putObject("stream_options").put("include_usage", true);
        }
        final ArrayNode messages = out.putArray("messages");
        final JsonNode system = body.get("system");
        if (null != system && !system.isNull())
        {
            messages.addObject().put("role", "system").put("content", system.isTextual() ? system.asText() :
                joinText(system));
        }
        if (!body.get("messages").isArray())
        {
            throw ApiException.validation(RequestParser.typeError("list_type", "messages",
                "Input should be a valid list"), "body.messages");
        }
        for (final JsonNode message : body.get("messages"))
        {
            anthropicMessage(messages, message);
        }
        final JsonNode tools = body.get("tools");
        if (null != tools && tools.isArray() && !tools.isEmpty())
        {
            final ArrayNode chatTools = out.putArray("tools");
            for (final JsonNode tool : tools)
            {
                final ObjectNode function = chatTools.addObject().put("type", "function").putObject("function");
                function.set("name", tool.get("name"));
                copyIfPresent(tool, function, "description");
                final JsonNode schema = tool.get("input_schema");
                if (null != schema && schema.isObject())
                {
                    final ObjectNode parameters = ((ObjectNode)schema).deepCopy();
                    if (!parameters.has("type"))
                    {
                        parameters.put("type", "object");
                    }
                    function.set("parameters", parameters);
                }
            }
            final JsonNode choice = body.get("tool_choice");
            final String type = null == choice ? "auto" : choice.path("type").asText("auto");
            switch (type)
            {
                case "any" -> out.put("tool_choice", "required");
                case "none" -> out.put("tool_choice", "none");
                case "tool" -> out.putObject("tool_choice").put("type", "function").putObject("function")
                    .set("name", choice.get("name"));
                default -> out.put("tool_choice", "auto");
            }
        }
        final JsonNode format = body.path("output_config").get("format");
        if (null != format && "json_schema".equals(format.path("type").asText()))
        {
            final ObjectNode schema = out.putObject("response_format").put("type", "json_schema")
                .putObject("json_schema").put("name", "output");
            copyIfPresent(format, schema, "schema");
        }
        return out;
    }

    /** One Anthropic message: text and image blocks, and tool calls and results in chat's form. */
    private static void anthropicMessage(final ArrayNode messages, final JsonNode message)
    {
        final String role = message.path("role").asText("user");
        final JsonNode content = message.get("content");
        if (null == content || content.isTextual() || !content.isArray())
        {
            messages.addObject().put("role", role).put("content", null == content ? "" : content.asText());
            return;
        }
        final ArrayNode parts = NODES.arrayNode();
        final ArrayNode toolCalls = NODES.arrayNode();
        for (final JsonNode block : content)
        {
            switch (block.path("type").asText())
            {
                case "text" -> parts.addObject().put("type", "text").put("text", block.path("text").asText());
                case "image" ->
                {
                    final JsonNode source = block.path("source");
                    final String url = "base64".equals(source.path("type").asText()) ? "data:" +
                        source.path("media_type").asText() + ";base64," + source.path("data").asText() :
                        source.path("url").asText();
                    parts.addObject().put("type", "image_url").putObject("image_url").put("url", url);
                }
                case "tool_use" ->
                {
                    final ObjectNode call = toolCalls.addObject().put("id", block.path("id").asText())
                        .put("type", "function");
                    call.putObject("function").put("name", block.path("name").asText())
                        .put("arguments", block.path("input").toString());
                }
                case "tool_result" ->
                {
                    final JsonNode result = block.get("content");
                    messages.addObject().put("role", "tool").put("tool_call_id", block.path("tool_use_id").asText())
                        .put("content", null == result ? "" : result.isTextual() ? result.asText() :
                            joinText(result));
                }
                case "thinking", "redacted_thinking" ->
                {
                    // earlier reasoning is not part of the next prompt's text here
                }
                default -> throw ApiException.badRequest("content block type '" + block.path("type").asText() +
                    "' is not supported by tapedeck (text, image, tool_use, tool_result, thinking)", "messages");
            }
        }
        if (!parts.isEmpty() || !toolCalls.isEmpty())
        {
            final ObjectNode chat = messages.addObject().put("role", role);
            chat.set("content", parts);
            if (!toolCalls.isEmpty())
            {
                chat.set("tool_calls", toolCalls);
            }
        }
    }

    private static String joinText(final JsonNode blocks)
    {
        final StringBuilder text = new StringBuilder();
        for (final JsonNode block : blocks)
        {
            if (block.has("text"))
            {
                text.append(text.length() > 0 ? "\n" : "").append(block.get("text").asText());
            }
        }
        return text.toString();
    }

    private static void copyIfPresent(final JsonNode from, final ObjectNode to, final String field)
    {
        if (from.has(field) && !from.get(field).isNull())
        {
            to.set(field, from.get(field));
        }
    }
}
