package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

import dev.tapedeck.lora.LoraAdapter;
import dev.tapedeck.net.JsonBytes;

/**
 * Bodies of the non-generation endpoints and of errors, in vLLM's shapes. Control path: strings are fine here.
 */
final class ControlResponses
{
    private static final String RETRY_AFTER_SECONDS = "1";

    private ControlResponses()
    {
    }

    /**
     * {@code {"error":{"message":..,"type":..,"param":..,"code":<status>}}} with that status.
     */
    static FullHttpResponse error(final HttpResponseStatus status, final String type, final String message,
        final String param)
    {
        final FullHttpResponse response = json(status, errorJson(status, type, message, param));
        if (HttpResponseStatus.TOO_MANY_REQUESTS.equals(status))
        {
            response.headers().set(HttpHeaderNames.RETRY_AFTER, RETRY_AFTER_SECONDS); // the queue turns over fast
        }
        return response;
    }

    /**
     * @return the body of {@link #error}: {@code {"error":{"message":..,"type":..,"param":..,"code":<status>}}}.
     */
    static String errorJson(final HttpResponseStatus status, final String type, final String message,
        final String param)
    {
        return "{\"error\":{\"message\":" + JsonBytes.quote(message) + ",\"type\":" + JsonBytes.quote(type) +
            ",\"param\":" + JsonBytes.quote(param) + ",\"code\":" + status.code() + "}}";
    }

    static FullHttpResponse error(final ApiException ex)
    {
        return error(ex.status(), ex.type(), ex.getMessage(), ex.param());
    }

    /**
     * An error of {@code /v1/messages}, as vLLM's Anthropic handler answers: {@code {"type":"error","error":{"type":
     * <vLLM's type>,"message":..}}}, except body validation errors, which FastAPI's handler answers in OpenAI's shape.
     */
    static FullHttpResponse error(final ApiException ex, final ParsedRequest.Endpoint endpoint)
    {
        if (ParsedRequest.Endpoint.MESSAGES != endpoint || "Bad Request".equals(ex.type()))
        {
            return error(ex);
        }
        return json(ex.status(), "{\"type\":\"error\",\"error\":{\"type\":" + JsonBytes.quote(ex.type()) +
            ",\"message\":" + JsonBytes.quote(ex.getMessage()) + "}}");
    }

    /** FastAPI's answer for unknown routes and methods: {@code {"detail":"Not Found"}}. */
    static FullHttpResponse detail(final HttpResponseStatus status)
    {
        return json(status, "{\"detail\":" + JsonBytes.quote(status.reasonPhrase()) + "}");
    }

    static FullHttpResponse unauthorized()
    {
        return json(HttpResponseStatus.UNAUTHORIZED, "{\"error\":\"Unauthorized\"}");
    }

    static FullHttpResponse version(final String version)
    {
        return json(HttpResponseStatus.OK, "{\"version\":" + JsonBytes.quote(version) + "}");
    }

    static FullHttpResponse load(final int serverLoad)
    {
        return json(HttpResponseStatus.OK, "{\"server_load\":" + serverLoad + "}");
    }

    /**
     * One card per served name, then one per LoRA adapter ({@code root} its path, {@code parent} its base model or
     * the first served name, no {@code max_model_len}), as vLLM lists them.
     */
    static FullHttpResponse models(final ServeOptions options, final int maxModelLen, final List<LoraAdapter> loras,
        final Supplier<String> permissionIds)
    {
        final long created = options.epochSeconds();
        final StringBuilder body = new StringBuilder(256).append("{\"object\":\"list\",\"data\":[");
        boolean first = true;
        for (final String name : options.servedModelNames())
        {
            card(body.append(first ? "" : ","), name, created, options.model(), null,
                Integer.toString(maxModelLen), permissionIds.get());
            first = false;
        }
        for (final LoraAdapter lora : loras)
        {
            card(body.append(first ? "" : ","), lora.name(), created, lora.path(),
                null == lora.baseModelName() ? options.modelNameForResponses() : lora.baseModelName(), "null",
                permissionIds.get());
            first = false;
        }
        return json(HttpResponseStatus.OK, body.append("]}").toString());
    }

    private static void card(final StringBuilder body, final String id, final long created, final String root,
        final String parent, final String maxModelLen, final String permissionId)
    {
        body.append("{\"id\":").append(JsonBytes.quote(id))
            .append(",\"object\":\"model\",\"created\":").append(created)
            .append(",\"owned_by\":\"vllm\",\"root\":").append(JsonBytes.quote(root))
            .append(",\"parent\":").append(JsonBytes.quote(parent)).append(",\"max_model_len\":").append(maxModelLen)
            .append(",\"permission\":[{\"id\":\"modelperm-").append(permissionId)
            .append("\",\"object\":\"model_permission\",\"created\":").append(created)
            .append(",\"allow_create_engine\":false,\"allow_sampling\":true,\"allow_logprobs\":true," +
                "\"allow_search_indices\":false,\"allow_view\":true,\"allow_fine_tuning\":false," +
                "\"organization\":\"*\",\"group\":null,\"is_blocking\":false}]}");
    }

    static FullHttpResponse empty(final HttpResponseStatus status)
    {
        final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
            Unpooled.EMPTY_BUFFER);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        return response;
    }

    static FullHttpResponse text(final String contentType, final String body)
    {
        final ByteBuf content = Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8));
        final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
            content);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        return response;
    }

    static FullHttpResponse json(final HttpResponseStatus status, final String body)
    {
        final ByteBuf content = Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8));
        final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        return response;
    }
}
