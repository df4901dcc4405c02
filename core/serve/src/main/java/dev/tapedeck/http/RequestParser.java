package dev.tapedeck.http;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

import dev.tapedeck.engine.Request;
import dev.tapedeck.tokens.ChatTemplate;

/**
 * Parses and type-checks the JSON body of {@code /v1/chat/completions} and {@code /v1/completions}. Errors become
 * {@link ApiException}s with vLLM's 400 shapes: malformed JSON and wrong field types as validation errors (type
 * {@code "Bad Request"}, param {@code body.<field>}), unsupported features as {@code BadRequestError}.
 * Stateless; safe to share.
 */
final class RequestParser
{
    /** Strict about the end as well: content after the JSON value is malformed JSON, as for vLLM's pydantic. */
    private static final ObjectMapper STRICT = new ObjectMapper()
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private final ObjectMapper mapper = STRICT;

    /**
     * Refuse a body that is not strict UTF-8 (overlong forms, encoded surrogates, truncated sequences), as vLLM's
     * JSON decoding does; the JSON parser alone lets some through. ASCII bodies are checked in one pass.
     *
     * @param body the request body (its indexes are left as they are).
     * @throws ApiException a 400 {@code json_invalid} naming the byte.
     */
    static void requireUtf8(final io.netty.buffer.ByteBuf body)
    {
        if (body.forEachByte(b -> b >= 0) < 0)
        {
            return;
        }
        final java.nio.charset.CharsetDecoder decoder = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
            .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
        final java.nio.ByteBuffer bytes = body.nioBuffer();
        final java.nio.CharBuffer chars = java.nio.CharBuffer.allocate(8192);
        while (true)
        {
            final java.nio.charset.CoderResult result = decoder.decode(bytes, chars, true);
            if (result.isError())
            {
                throw ApiException.validation("1 validation error:\n  {'type': 'json_invalid', 'loc': ('body', " +
                    bytes.position() + "), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': 'invalid " +
                    "UTF-8 at byte " + bytes.position() + "'}}", "body");
            }
            chars.clear();
            if (result.isUnderflow())
            {
                return;
            }
        }
    }

    /**
     * The body of a control request (LoRA, token endpoints) as a JSON object, as strict about what follows it as a
     * completion's body.
     *
     * @param request the request (its indexes are left as they are).
     * @return the object.
     * @throws ApiException a 400 when the body is not one JSON object.
     */
    static JsonNode jsonObject(final io.netty.handler.codec.http.FullHttpRequest request)
    {
        try
        {
            final JsonNode node = readTree(STRICT, request.content());
            if (null == node || !node.isObject())
            {
                throw ApiException.validation("the body must be a JSON object", "body");
            }
            return node;
        }
        catch (final IOException ex)
        {
            throw ApiException.validation("the body is not valid JSON: " + String.valueOf(ex.getMessage()).lines()
                .findFirst().orElse(""), "body");
        }
    }

    /**
     * Read a body as one JSON value, straight from its bytes: a parser built over an {@code InputStream} first reads
     * the stream into a buffer of its own to detect the encoding, which cost as much as the parse itself per request.
     *
     * @param body the bytes (its indexes are left as they are).
     */
    private static JsonNode readTree(final ObjectMapper mapper, final ByteBuf body) throws IOException
    {
        if (body.hasArray())
        {
            return mapper.readTree(body.array(), body.arrayOffset() + body.readerIndex(), body.readableBytes());
        }
        return mapper.readTree(ByteBufUtil.getBytes(body));
    }

    /**
     * @param body the request's body (its indexes are left as they are).
     * @param endpoint the API it was sent to.
     * @return the request, type-checked.
     * @throws ApiException a 400 in vLLM's shape for a body vLLM refuses.
     */
    ParsedRequest parse(final ByteBuf body, final ParsedRequest.Endpoint endpoint)
    {
        final JsonNode sent;
        try
        {
            sent = readTree(mapper, body);
        }
        catch (final JsonProcessingException ex)
        {
            // the parser's limits (nesting depth, number length) fail without a location
            final long offset = null == ex.getLocation() ? -1 : ex.getLocation().getCharOffset();
            throw ApiException.validation("1 validation error:\n  {'type': 'json_invalid', 'loc': ('body', " +
                offset + "), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': '" +
                jsonError(ex).replace('\'', '"') + "'}}", "body");
        }
        catch (final IOException ex)
        {
            throw ApiException.validation("could not read the request body: " + ex.getMessage(), "body");
        }
        if (null == sent || !sent.isObject())
        {
            throw ApiException.validation(typeError("model_attributes_type", "", "Input should be a valid " +
                "dictionary or object to extract fields from"), "body");
        }
        // the Responses, Messages and generate APIs are read as the chat or completions request they stand for
        final JsonNode root = ApiTranslation.toOpenAi(sent, endpoint);
        final ParsedRequest.Endpoint form = endpoint.form();
        final ParsedRequest request = new ParsedRequest();
        request.endpoint = endpoint;
        request.model = optionalString(root, "model");
        request.requestId = optionalString(root, "request_id");
        // range-checked as the client sent it: -1 is also Request.UNSET, which would pass for "no limit"
        final Integer requestedMax;
        if (ParsedRequest.Endpoint.CHAT == form)
        {
            request.messages = messages(root, request.media);
            request.toolCalling = StructuredFields.toolCalling(root);
            request.afterToolResult = "tool".equals(request.messages.get(request.messages.size() - 1).role());
            if (null != request.toolCalling)
            {
                request.tools = StructuredFields.toolMaps(root);
            }
            final Integer maxCompletion = LaxFields.optionalInt(root, "max_completion_tokens");
            final Integer max = LaxFields.optionalInt(root, "max_tokens");
            requestedMax = null != maxCompletion ? maxCompletion : max;
            if (null != maxCompletion)
            {
                request.maxTokens = maxCompletion;
                request.maxTokensParam = "max_completion_tokens";
            }
            else if (null != max)
            {
                request.maxTokens = max;
            }
        }
        else
        {
            request.prompts = prompts(root);
            requestedMax = LaxFields.optionalInt(root, "max_tokens");
            request.maxTokens = null == requestedMax ? 16 : requestedMax; // vLLM's CompletionRequest default
            request.echo = LaxFields.optionalBool(root, "echo", false);
        }
        request.stream = LaxFields.optionalBool(root, "stream", false);
        streamOptions(root, request);
        final Integer minTokens = LaxFields.optionalInt(root, "min_tokens");
        request.minTokens = null == minTokens ? 0 : minTokens;
        final Integer n = LaxFields.optionalInt(root, "n");
        request.n = null == n ? 1 : n;
        request.ignoreEos = LaxFields.optionalBool(root, "ignore_eos", false);
        request.includeStopStrInOutput = LaxFields.optionalBool(root, "include_stop_str_in_output", false);
        request.stop = stop(root);
        request.stopTokenIds = intArray(root, "stop_token_ids");
        cacheFields(root, request);
        final Integer priority = LaxFields.optionalInt(root, "priority");
        request.priority = null == priority ? 0 : priority;
        final Long seed = LaxFields.optionalLong(root, "seed");
        if (null != seed)
        {
            request.seeded = true;
            request.seed = seed;
        }
        request.kvTransferParams = kvTransferParams(root);
        request.constraint = StructuredFields.constraint(root);
        if (null != request.toolCalling && dev.tapedeck.structured.ToolCalling.Choice.NAMED ==
            request.toolCalling.choice() && null != root.get("structured_outputs") &&
            !root.get("structured_outputs").isNull())
        {
            throw ApiException.badRequest("You can only either use constraints for structured outputs or tools, not " +
                "both.", "structured_outputs");
        }
        rejectUnsupported(root);
        request.logprobs = logprobs(root, form, request.stream);
        LaxFields.checkSampling(root);
        checkRanges(request, requestedMax);
        return request;
    }

    /** {@code cache_salt} and llm-d's {@code cache_hit_threshold}. */
    private static void cacheFields(final JsonNode root, final ParsedRequest request)
    {
        request.cacheSalt = optionalString(root, "cache_salt");
        if (null != request.cacheSalt && request.cacheSalt.isEmpty())
        {
            throw ApiException.badRequest("Parameter 'cache_salt' must be a non-empty string if provided.",
                "cache_salt");
        }
        final Double threshold = LaxFields.optionalFloat(root, "cache_hit_threshold");
        if (null != threshold && !(threshold >= 0 && threshold <= 1))
        {
            throw ApiException.badRequest("cache_hit_threshold must be between 0 and 1, got " + threshold + ".",
                "cache_hit_threshold");
        }
        request.cacheHitThreshold = null == threshold ? -1 : threshold;
    }

    /**
     * The parser's complaint without Java names: "Extra data" (Python's words) for a second value after the body, and
     * no class or method names from Jackson's messages.
     */
    private static String jsonError(final JsonProcessingException ex)
    {
        final String message = ex.getOriginalMessage();
        if (message.startsWith("Trailing token"))
        {
            return "Extra data";
        }
        return message.replaceAll(" ?\\(bound as `[^`]*`\\)", "").replaceAll(", from `[^`]*`", "")
            .replaceAll(":? ?not allowed as per `[^`]*`.*", "").replaceAll("`[^`]*`", "");
    }

    /** vLLM's {@code kv_transfer_params: dict[str, Any] | None}: an object, read as its NixlConnector reads it. */
    private dev.tapedeck.engine.KvTransferParams kvTransferParams(final JsonNode root)
    {
        final JsonNode node = root.get("kv_transfer_params");
        if (null == node || node.isNull())
        {
            return null;
        }
        if (!node.isObject())
        {
            throw ApiException.validation(typeError("dict_type", "kv_transfer_params", "Input should be a valid " +
                "dictionary"), "body.kv_transfer_params");
        }
        try
        {
            return dev.tapedeck.engine.KvTransferParams.fromMap(mapper.convertValue(node, java.util.Map.class));
        }
        catch (final IllegalArgumentException ex)
        {
            throw ApiException.badRequest(ex.getMessage(), "kv_transfer_params");
        }
    }

    private static void streamOptions(final JsonNode root, final ParsedRequest request)
    {
        final JsonNode options = root.get("stream_options");
        if (null == options || options.isNull())
        {
            return;
        }
        if (!options.isObject())
        {
            throw ApiException.validation(typeError("model_type", "stream_options", "Input should be an object"),
                "body.stream_options");
        }
        if (!request.stream)
        {
            throw ApiException.badRequest("Stream options can only be defined when `stream=True`.", "stream_options");
        }
        // vLLM up to the 0.2x lines: include_usage defaults to true once stream_options is present
        request.includeUsage = LaxFields.optionalBool(options, "include_usage", true);
        request.continuousUsageStats = request.includeUsage &&
            LaxFields.optionalBool(options, "continuous_usage_stats", false);
    }

    private static void checkRanges(final ParsedRequest request, final Integer requestedMax)
    {
        if (request.n < 1)
        {
            throw ApiException.badRequest("n must be at least 1, got " + request.n + ".", "n");
        }
        if (request.n > 128)
        {
            throw ApiException.badRequest("n must be at most 128 in tapedeck, got " + request.n + ".", "n");
        }
        if (null != requestedMax && requestedMax < 1)
        {
            throw ApiException.badRequest(request.maxTokensParam + " must be at least 1, got " + requestedMax +
                ".", request.maxTokensParam);
        }
        if (request.minTokens < 0)
        {
            throw ApiException.badRequest("min_tokens must be greater than or equal to 0, got " +
                request.minTokens + ".", "min_tokens");
        }
        if (request.maxTokens != Request.UNSET && request.minTokens > request.maxTokens)
        {
            throw ApiException.badRequest("min_tokens must be less than or equal to max_tokens=" +
                request.maxTokens + ", got " + request.minTokens + ".", "min_tokens");
        }
    }

    /**
     * Chat's {@code logprobs} (a boolean) and {@code top_logprobs}, completions' {@code logprobs} (an int), and
     * {@code prompt_logprobs}, with vLLM's checks; -1 stands for the whole vocabulary (checked against
     * {@code --max-logprobs} at admission).
     */
    private static Logprobs.Request logprobs(final JsonNode root, final ParsedRequest.Endpoint endpoint,
        final boolean stream)
    {
        int top = -1;
        if (ParsedRequest.Endpoint.CHAT == endpoint)
        {
            final boolean wanted = LaxFields.optionalBool(root, "logprobs", false);
            final Integer topLogprobs = LaxFields.optionalInt(root, "top_logprobs");
            if (null != topLogprobs && topLogprobs < 0 && topLogprobs != -1)
            {
                throw ApiException.badRequest("`top_logprobs` must be a positive value or -1.", "top_logprobs");
            }
            if (null != topLogprobs && topLogprobs != 0 && !wanted)
            {
                throw ApiException.badRequest("when using `top_logprobs`, `logprobs` must be set to true.",
                    "top_logprobs");
            }
            top = wanted ? null == topLogprobs ? 0 : topLogprobs == -1 ? Integer.MAX_VALUE : topLogprobs : -1;
        }
        else
        {
            final Integer logprobs = LaxFields.optionalInt(root, "logprobs");
            if (null != logprobs && logprobs < 0 && logprobs != -1)
            {
                throw ApiException.badRequest("`logprobs` must be a positive value or -1.", "logprobs");
            }
            top = null == logprobs ? -1 : logprobs == -1 ? Integer.MAX_VALUE : logprobs;
        }
        final Integer prompt = LaxFields.optionalInt(root, "prompt_logprobs");
        if (null != prompt && prompt < 0 && prompt != -1)
        {
            throw ApiException.badRequest("`prompt_logprobs` must be a positive value or -1.", "prompt_logprobs");
        }
        if (null != prompt && stream)
        {
            throw ApiException.badRequest("`prompt_logprobs` are not available when `stream=True`.",
                "prompt_logprobs");
        }
        final int promptTop = null == prompt ? -1 : prompt == -1 ? Integer.MAX_VALUE : prompt;
        return top < 0 && promptTop < 0 ? Logprobs.Request.NONE : new Logprobs.Request(top, promptTop);
    }

    private static void rejectUnsupported(final JsonNode root)
    {
        final JsonNode beam = root.get("use_beam_search");
        if (null != beam && beam.asBoolean(false))
        {
            throw ApiException.badRequest("beam search is not simulated by tapedeck", "use_beam_search");
        }
    }

    private static List<ChatTemplate.Message> messages(final JsonNode root, final MediaParts media)
    {
        final JsonNode messages = root.get("messages");
        if (null == messages || messages.isNull())
        {
            throw ApiException.validation(missing("messages"), "body.messages");
        }
        if (!messages.isArray())
        {
            throw ApiException.validation(typeError("list_type", "messages", "Input should be a valid list"),
                "body.messages");
        }
        if (messages.isEmpty())
        {
            throw ApiException.badRequest("messages must contain at least one message", "messages");
        }
        final List<ChatTemplate.Message> out = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++)
        {
            final JsonNode message = messages.get(i);
            if (!message.isObject())
            {
                throw ApiException.validation(typeError("model_type", "messages', " + i + ", '",
                    "Input should be an object"), "body.messages." + i);
            }
            final JsonNode role = message.get("role");
            if (null == role || !role.isTextual())
            {
                throw ApiException.validation(missing("messages', " + i + ", 'role"), "body.messages." + i + ".role");
            }
            final JsonNode name = message.get("name");
            if (null != name && !name.isTextual())
            {
                // every message type of vLLM's chat request declares name a plain string: null is refused
                throw ApiException.validation(typeError("string_type", "messages', " + i + ", 'name",
                    "Input should be a valid string"), "body.messages." + i + ".name");
            }
            out.add(new ChatTemplate.Message(role.asText(), content(message.get("content"), i, media),
                StructuredFields.earlierToolCalls(message.get("tool_calls")), optionalString(message, "tool_call_id")));
        }
        return out;
    }

    private static String content(final JsonNode content, final int index, final MediaParts media)
    {
        if (null == content || content.isNull())
        {
            return "";
        }
        if (content.isTextual())
        {
            return content.asText();
        }
        if (!content.isArray())
        {
            throw ApiException.validation(typeError("string_type", "messages', " + index + ", 'content",
                "Input should be a valid string"), "body.messages." + index + ".content");
        }
        final StringBuilder text = new StringBuilder();
        for (final JsonNode part : content)
        {
            final String type = part.path("type").asText("text");
            if (text.length() > 0)
            {
                text.append('\n');
            }
            if ("text".equals(type) || "input_text".equals(type) || "output_text".equals(type))
            {
                text.append(part.path("text").asText(""));
            }
            else if (MediaParts.isMedia(type))
            {
                text.append(media.add(type, part, "messages." + index + ".content"));
            }
            else
            {
                throw ApiException.badRequest("content part type '" + type + "' is not supported by tapedeck " +
                    "(text, " + MediaParts.types() + ")", "messages." + index + ".content");
            }
        }
        return text.toString();
    }

    private static List<Object> prompts(final JsonNode root)
    {
        final JsonNode prompt = root.get("prompt");
        if (null == prompt || prompt.isNull())
        {
            throw ApiException.validation(missing("prompt"), "body.prompt");
        }
        final List<Object> out = new ArrayList<>();
        if (prompt.isTextual())
        {
            out.add(prompt.asText());
        }
        else if (prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isIntegralNumber())
        {
            out.add(tokenIds(prompt, "prompt"));
        }
        else if (prompt.isArray() && !prompt.isEmpty())
        {
            for (final JsonNode element : prompt)
            {
                if (element.isTextual())
                {
                    out.add(element.asText());
                }
                else if (element.isArray())
                {
                    out.add(tokenIds(element, "prompt"));
                }
                else
                {
                    throw ApiException.validation(typeError("string_type", "prompt",
                        "Input should be a string, a list of strings, a list of token ids or a list of lists"),
                        "body.prompt");
                }
            }
        }
        else
        {
            throw ApiException.badRequest("prompt must be a non-empty string or a non-empty list", "prompt");
        }
        return out;
    }

    private static int[] tokenIds(final JsonNode array, final String field)
    {
        final int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++)
        {
            final JsonNode id = array.get(i);
            if (!id.isIntegralNumber() || id.asLong() < 0 || id.asLong() > Integer.MAX_VALUE)
            {
                throw ApiException.validation(typeError("int_type", field, "Input should be a valid token id"),
                    "body." + field);
            }
            ids[i] = id.asInt();
        }
        return ids;
    }

    private static List<String> stop(final JsonNode root)
    {
        final JsonNode stop = root.get("stop");
        if (null == stop || stop.isNull())
        {
            return List.of();
        }
        if (stop.isTextual())
        {
            return stop.asText().isEmpty() ? List.of() : List.of(stop.asText());
        }
        if (!stop.isArray())
        {
            throw ApiException.validation(typeError("list_type", "stop", "Input should be a string or a list"),
                "body.stop");
        }
        final List<String> out = new ArrayList<>();
        for (final JsonNode s : stop)
        {
            if (!s.isTextual())
            {
                throw ApiException.validation(typeError("string_type", "stop", "Input should be a valid string"),
                    "body.stop");
            }
            if (!s.asText().isEmpty())
            {
                out.add(s.asText());
            }
        }
        return out;
    }

    private static int[] intArray(final JsonNode root, final String field)
    {
        final JsonNode node = root.get(field);
        if (null == node || node.isNull())
        {
            return null;
        }
        if (!node.isArray())
        {
            throw ApiException.validation(typeError("list_type", field, "Input should be a valid list"),
                "body." + field);
        }
        return tokenIds(node, field);
    }

    private static String optionalString(final JsonNode root, final String field)
    {
        final JsonNode node = root.get(field);
        if (null == node || node.isNull())
        {
            return null;
        }
        if (!node.isTextual())
        {
            throw ApiException.validation(typeError("string_type", field, "Input should be a valid string"),
                "body." + field);
        }
        return node.asText();
    }

    private static String missing(final String field)
    {
        return "1 validation error:\n  {'type': 'missing', 'loc': ('body', '" + field + "'), 'msg': 'Field required'}";
    }

    /**
     * @return pydantic's one-error message for {@code body.<field>}.
     */
    static String typeError(final String type, final String field, final String message)
    {
        return "1 validation error:\n  {'type': '" + type + "', 'loc': ('body', '" + field + "'), 'msg': '" +
            message + "'}";
    }
}
