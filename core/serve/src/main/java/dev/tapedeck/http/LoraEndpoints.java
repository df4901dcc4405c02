package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

import dev.tapedeck.lora.LoraAdapter;
import dev.tapedeck.lora.LoraSettings;
import dev.tapedeck.lora.LoraTable;

/**
 * vLLM's runtime LoRA endpoints, served when {@code --enable-lora} is on (vLLM also wants
 * {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=True}; without LoRA they are unknown routes, 404):
 * <ul>
 *   <li>{@code POST /v1/load_lora_adapter {"lora_name","lora_path"}}: the adapter gets the next id and is served at
 *       once; 200 with the text {@code Success: LoRA adapter '<name>' added successfully.}; 400
 *       {@code InvalidUserInput} when a field is missing or the name is already loaded;</li>
 *   <li>{@code POST /v1/unload_lora_adapter {"lora_name"}}: 200 {@code Success: LoRA adapter '<name>' removed
 *       successfully.}; 404 {@code NotFoundError} for an unknown name. Requests already running with it finish.</li>
 * </ul>
 * There are no weights: the path is not read. Each replica ({@code --instances}) has its own table. Event-loop
 * confined.
 */
final class LoraEndpoints
{
    private static final String INVALID = "InvalidUserInput";

    private LoraEndpoints()
    {
    }

    static FullHttpResponse handle(final Instance instance, final String path, final HttpMethod method,
        final FullHttpRequest request)
    {
        if (!instance.options().lora().enabled())
        {
            return ControlResponses.detail(HttpResponseStatus.NOT_FOUND);
        }
        if (HttpMethod.POST != method)
        {
            return ControlResponses.detail(HttpResponseStatus.METHOD_NOT_ALLOWED);
        }
        try
        {
            final JsonNode body = RequestParser.jsonObject(request);
            return path.endsWith("/load_lora_adapter") ? load(instance.loras(), body,
                instance.options().lora().maxAdapters()) : unload(instance.loras(), body);
        }
        catch (final ApiException ex)
        {
            return ControlResponses.error(ex);
        }
    }

    private static FullHttpResponse load(final LoraTable loras, final JsonNode body, final int maxAdapters)
    {
        final String name = text(body, "lora_name");
        final String path = text(body, "lora_path");
        if (null == name || null == path)
        {
            throw invalid("Both 'lora_name' and 'lora_path' must be provided.");
        }
        if (name.length() > LoraSettings.MAX_NAME_LENGTH || name.chars().anyMatch(Character::isISOControl))
        {
            throw invalid("'lora_name' must be at most " + LoraSettings.MAX_NAME_LENGTH + " characters without " +
                "control characters.");
        }
        if (path.length() > 4096)
        {
            throw invalid("'lora_path' must be at most 4096 characters.");
        }
        if (loras.adapters().size() >= maxAdapters)
        {
            throw invalid("Cannot load more than " + maxAdapters + " LoRA adapters (--max-cpu-loras); unload one " +
                "first.");
        }
        if (null != loras.byName(name))
        {
            throw invalid("The lora adapter '" + name + "' has already been loaded.");
        }
        loras.load(name, path);
        return success("Success: LoRA adapter '" + name + "' added successfully.");
    }

    private static FullHttpResponse unload(final LoraTable loras, final JsonNode body)
    {
        final String name = text(body, "lora_name");
        if (null == name)
        {
            throw invalid("either 'lora_name' and 'lora_int_id' needs to be provided.");
        }
        final LoraAdapter removed = loras.unload(name);
        if (null == removed)
        {
            throw new ApiException(HttpResponseStatus.NOT_FOUND, "NotFoundError",
                "The lora adapter '" + name + "' cannot be found.", null);
        }
        return success("Success: LoRA adapter '" + name + "' removed successfully.");
    }

    private static String text(final JsonNode body, final String field)
    {
        final JsonNode value = body.get(field);
        return null == value || !value.isTextual() || value.asText().isEmpty() ? null : value.asText();
    }

    private static ApiException invalid(final String message)
    {
        return new ApiException(HttpResponseStatus.BAD_REQUEST, INVALID, message, null);
    }

    /** vLLM answers success with the bare message as the body, without a content type. */
    private static FullHttpResponse success(final String message)
    {
        final byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
            Unpooled.wrappedBuffer(bytes));
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        return response;
    }
}
