package dev.tapedeck.http;

import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * A client error to answer with an OpenAI-shaped body: {@code {"error":{"message","type","param","code"}}}. Thrown
 * only on the request-admission path (parsing, validation), never per token.
 */
final class ApiException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final HttpResponseStatus status;
    private final String type;
    private final String param;

    ApiException(final HttpResponseStatus status, final String type, final String message, final String param)
    {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
    }

    /** 400 as vLLM answers request-body validation failures (FastAPI's handler: type "Bad Request"). */
    static ApiException validation(final String message, final String param)
    {
        return new ApiException(HttpResponseStatus.BAD_REQUEST, "Bad Request", message, param);
    }

    /** 400 as vLLM answers a request it understood but cannot serve (type "BadRequestError"). */
    static ApiException badRequest(final String message, final String param)
    {
        return new ApiException(HttpResponseStatus.BAD_REQUEST, "BadRequestError", message, param);
    }

    /**
     * @param model a model name that is neither served nor a loaded adapter.
     * @return vLLM's 404 for it.
     */
    static ApiException modelNotFound(final String model)
    {
        return new ApiException(HttpResponseStatus.NOT_FOUND, "NotFoundError", "The model `" + model +
            "` does not exist.", "model");
    }

    HttpResponseStatus status()
    {
        return status;
    }

    String type()
    {
        return type;
    }

    String param()
    {
        return param;
    }
}
