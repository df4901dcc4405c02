package dev.tapedeck.http;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.tokens.TokenVocabulary;

/**
 * vLLM's token endpoints, with the served tokenizer and chat template behind them:
 * <ul>
 *   <li>{@code POST /tokenize} {@code {"prompt": ...}} or {@code {"messages": [...]}} (the chat template applied, as
 *       for a chat completion): {@code {"count","max_model_len","tokens","token_strs"}}, the token strings with
 *       {@code return_token_strs};</li>
 *   <li>{@code POST /detokenize} {@code {"tokens": [...]}}: {@code {"prompt": text}};</li>
 *   <li>{@code POST /v1/embeddings} {@code {"input": text | [text] | [ids] | [[ids]], "dimensions",
 *       "encoding_format"}}: one deterministic unit vector per input, drawn from its token ids (the same input
 *       gives the same vector), {@code float} or {@code base64} (little-endian float32), usage counted in prompt
 *       tokens.</li>
 * </ul>
 * No engine step is taken: these answer at once, as vLLM's do. Event-loop confined (stateless but for the instance).
 */
final class TokenEndpoints
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_DIMENSIONS = 65_536;
    /** OpenAI's limit on the inputs of one embeddings request. */
    private static final int MAX_INPUTS = 2048;
    /** A bound on the numbers one answer holds (inputs times dimensions): a request cannot exhaust the heap. */
    private static final long MAX_VALUES = 1L << 22;

    private TokenEndpoints()
    {
    }

    static FullHttpResponse handle(final Instance instance, final CompletionAdmission admission, final String path,
        final HttpMethod method, final FullHttpRequest request)
    {
        if (HttpMethod.POST != method)
        {
            return ControlResponses.detail(HttpResponseStatus.METHOD_NOT_ALLOWED);
        }
        try
        {
            RequestParser.requireUtf8(request.content());
            switch (path)
            {
                case "/tokenize":
                    return tokenize(instance, admission, request);
                case "/detokenize":
                    return detokenize(instance, RequestParser.jsonObject(request));
                case "/v1/messages/count_tokens":
                    return countTokens(admission, request);
                default:
                    return embeddings(instance, admission, RequestParser.jsonObject(request));
            }
        }
        catch (final ApiException ex)
        {
            return ControlResponses.error(ex);
        }
    }

    /**
     * Anthropic's {@code POST /v1/messages/count_tokens}, as vLLM serves it: a Messages body ({@code max_tokens} not
     * needed) counted as its chat prompt, {@code {"input_tokens": N}}.
     */
    private static FullHttpResponse countTokens(final CompletionAdmission admission, final FullHttpRequest request)
    {
        final ObjectNode body = (ObjectNode)RequestParser.jsonObject(request);
        if (!body.has("max_tokens"))
        {
            body.put("max_tokens", 1);
        }
        final ParsedRequest parsed = admission.parser().parse(Unpooled.wrappedBuffer(body.toString()
            .getBytes(StandardCharsets.UTF_8)), ParsedRequest.Endpoint.MESSAGES);
        int count = 0;
        for (final int[] prompt : admission.tokenize(parsed))
        {
            count += prompt.length;
        }
        return ControlResponses.json(HttpResponseStatus.OK, "{\"input_tokens\":" + count + "}");
    }

    private static FullHttpResponse tokenize(final Instance instance, final CompletionAdmission admission,
        final FullHttpRequest request)
    {
        final JsonNode body = RequestParser.jsonObject(request);
        final boolean chat = body.has("messages");
        if (chat && body.has("prompt"))
        {
            throw ApiException.badRequest("give either 'prompt' or 'messages', not both", null);
        }
        final ParsedRequest parsed = admission.parser().parse(request.content(),
            chat ? ParsedRequest.Endpoint.CHAT : ParsedRequest.Endpoint.COMPLETIONS);
        final List<int[]> prompts = admission.tokenize(parsed);
        final ObjectNode out = JSON.createObjectNode();
        final ArrayNode tokens = JSON.createArrayNode();
        for (final int[] prompt : prompts)
        {
            for (final int id : prompt)
            {
                tokens.add(id);
            }
        }
        out.put("count", tokens.size());
        out.put("max_model_len", instance.firstEngine().config().maxModelLen());
        out.set("tokens", tokens);
        if (body.path("return_token_strs").asBoolean(false))
        {
            final ArrayNode strings = out.putArray("token_strs");
            final TokenVocabulary vocabulary = instance.tokenizer().vocabulary();
            for (final JsonNode id : tokens)
            {
                strings.add(new String(vocabulary.bytes(id.asInt()), StandardCharsets.UTF_8));
            }
        }
        else
        {
            out.putNull("token_strs");
        }
        return ControlResponses.json(HttpResponseStatus.OK, out.toString());
    }

    private static FullHttpResponse detokenize(final Instance instance, final JsonNode body)
    {
        final JsonNode tokens = body.get("tokens");
        if (null == tokens || !tokens.isArray())
        {
            throw ApiException.validation("'tokens' must be a list of token ids", "tokens");
        }
        final TokenVocabulary vocabulary = instance.tokenizer().vocabulary();
        final java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream();
        for (final JsonNode id : tokens)
        {
            text.writeBytes(vocabulary.bytes(tokenId(id, vocabulary.size(), "tokens")));
        }
        final ObjectNode out = JSON.createObjectNode();
        out.put("prompt", text.toString(StandardCharsets.UTF_8));
        return ControlResponses.json(HttpResponseStatus.OK, out.toString());
    }

    private static FullHttpResponse embeddings(final Instance instance, final CompletionAdmission admission,
        final JsonNode body)
    {
        final int dimensions = body.has("dimensions") ? body.get("dimensions").asInt(-1) :
            instance.options().api().embeddingDimensions();
        if (dimensions < 1 || dimensions > MAX_DIMENSIONS)
        {
            throw ApiException.badRequest("dimensions must be 1 to " + MAX_DIMENSIONS + ", got " +
                body.get("dimensions"), "dimensions");
        }
        final String format = body.path("encoding_format").asText("float");
        if (!"float".equals(format) && !"base64".equals(format))
        {
            throw ApiException.badRequest("encoding_format must be float or base64, got '" + format + "'",
                "encoding_format");
        }
        final JsonNode model = body.get("model");
        if (null != model && model.isTextual() && !instance.options().serves(model.asText()))
        {
            throw ApiException.modelNotFound(model.asText());
        }
        final List<int[]> inputs = inputs(instance, body.get("input"));
        if (inputs.size() > MAX_INPUTS || (long)inputs.size() * dimensions > MAX_VALUES)
        {
            throw ApiException.badRequest("at most " + MAX_INPUTS + " inputs and " + MAX_VALUES + " numbers (inputs " +
                "times dimensions) per request, got " + inputs.size() + " x " + dimensions, "input");
        }
        final ObjectNode out = JSON.createObjectNode();
        out.put("id", "embd-" + instance.randomHexId());
        out.put("object", "list");
        out.put("created", instance.options().epochSeconds());
        out.put("model", null != body.get("model") && body.get("model").isTextual() ? body.get("model").asText() :
            instance.options().modelNameForResponses());
        final ArrayNode data = out.putArray("data");
        long promptTokens = 0;
        for (int i = 0; i < inputs.size(); i++)
        {
            promptTokens += inputs.get(i).length;
            final float[] vector = vector(inputs.get(i), dimensions);
            final ObjectNode item = data.addObject();
            item.put("index", i);
            item.put("object", "embedding");
            if ("base64".equals(format))
            {
                final ByteBuffer bytes = ByteBuffer.allocate(4 * dimensions).order(ByteOrder.LITTLE_ENDIAN);
                for (final float v : vector)
                {
                    bytes.putFloat(v);
                }
                item.put("embedding", Base64.getEncoder().encodeToString(bytes.array()));
            }
            else
            {
                final ArrayNode values = item.putArray("embedding");
                for (final float v : vector)
                {
                    values.add(v);
                }
            }
        }
        final ObjectNode usage = out.putObject("usage");
        usage.put("prompt_tokens", promptTokens);
        usage.put("total_tokens", promptTokens);
        usage.putNull("completion_tokens");
        usage.putNull("prompt_tokens_details");
        return ControlResponses.json(HttpResponseStatus.OK, out.toString());
    }

    /** The inputs' token ids: a text, a list of texts, a list of ids, or a list of id lists. */
    private static List<int[]> inputs(final Instance instance, final JsonNode input)
    {
        final List<int[]> out = new ArrayList<>();
        if (null != input && input.isTextual())
        {
            out.add(instance.tokenizer().encode(input.asText()));
        }
        else if (null != input && input.isArray() && !input.isEmpty() && input.get(0).isIntegralNumber())
        {
            out.add(ids(instance, input));
        }
        else if (null != input && input.isArray() && !input.isEmpty())
        {
            for (final JsonNode element : input)
            {
                if (element.isTextual())
                {
                    out.add(instance.tokenizer().encode(element.asText()));
                }
                else if (element.isArray())
                {
                    out.add(ids(instance, element));
                }
                else
                {
                    throw ApiException.validation("each input must be a text or a list of token ids", "input");
                }
            }
        }
        else
        {
            throw ApiException.validation("'input' must be a non-empty text, list of texts or list of token ids",
                "input");
        }
        for (final int[] ids : out)
        {
            if (0 == ids.length)
            {
                throw ApiException.badRequest("an input is empty", "input");
            }
            if (ids.length > instance.firstEngine().config().maxModelLen())
            {
                throw ApiException.badRequest("This model's maximum context length is " +
                    instance.firstEngine().config().maxModelLen() + " tokens. However, you requested " + ids.length +
                    " tokens in the input for embedding generation. Please reduce the length of the input.", "input");
            }
        }
        return out;
    }

    private static int[] ids(final Instance instance, final JsonNode array)
    {
        final int vocabularySize = instance.tokenizer().vocabulary().size();
        final int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = tokenId(array.get(i), vocabularySize, "input");
        }
        return ids;
    }

    /** A token id of the vocabulary, or vLLM's 400 naming it. */
    private static int tokenId(final JsonNode id, final int vocabularySize, final String param)
    {
        if (!id.isIntegralNumber() || !id.canConvertToInt() || id.asInt() < 0 || id.asInt() >= vocabularySize)
        {
            throw ApiException.badRequest("Token id " + id + " is out of vocabulary", param);
        }
        return id.asInt();
    }

    /** A unit vector drawn from the ids: the same ids give the same vector. */
    static float[] vector(final int[] ids, final int dimensions)
    {
        long seed = 0x5eedL;
        for (final int id : ids)
        {
            seed = SeededRandom.mix(seed, id);
        }
        final SeededRandom random = new SeededRandom(seed);
        final float[] vector = new float[dimensions];
        double norm = 0;
        for (int i = 0; i < dimensions; i++)
        {
            vector[i] = (float)(random.nextDouble() * 2 - 1);
            norm += vector[i] * vector[i];
        }
        final double scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
        for (int i = 0; i < dimensions; i++)
        {
            vector[i] = (float)(vector[i] * scale);
        }
        return vector;
    }
}
