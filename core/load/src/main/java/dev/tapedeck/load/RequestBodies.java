package dev.tapedeck.load;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;

/**
 * JSON bodies of OpenAI requests for a planned request: {@code /v1/completions} (text or token-id prompt) or
 * {@code /v1/chat/completions} (one user message), streaming with {@code stream_options.include_usage} so the server
 * reports token counts, {@code max_tokens} when the plan fixes the output length, and {@code ignore_eos} on request
 * (vLLM and SGLang honour it, so the output length is exact). For a prefill/decode run, also the prefill hop's body
 * ({@link #prefillBody}): the same request with {@code max_tokens} 1, not streamed, asking for
 * {@code kv_transfer_params} ({@code do_remote_decode}), as vLLM's disaggregation proxy sends it. Not thread safe (one
 * builder and prompt factory per thread).
 */
public final class RequestBodies
{
    /** Which OpenAI endpoint. */
    public enum Endpoint
    {
        /** {@code /v1/completions}. */
        COMPLETIONS("/v1/completions"),
        /** {@code /v1/chat/completions}. */
        CHAT("/v1/chat/completions");

        private final String path;

        Endpoint(final String path)
        {
            this.path = path;
        }

        /**
         * @return the request path.
         */
        public String path()
        {
            return path;
        }
    }

    private final Endpoint endpoint;
    private final String model;
    private final boolean stream;
    private final boolean ignoreEos;
    private final boolean tokenIdPrompts;
    private final boolean continuousUsage;
    private final PromptFactory prompts;
    private final StringBuilder body = new StringBuilder(16 * 1024);
    private boolean prefillDecode;
    private PlannedRequest built;
    private int commonLength;

    /**
     * @param endpoint which endpoint.
     * @param model the model name to send.
     * @param stream true for streaming requests.
     * @param ignoreEos true to send {@code ignore_eos: true}.
     * @param tokenIdPrompts true to send completions prompts as token ids.
     * @param continuousUsage true to ask for usage in every chunk (tokens per chunk, for per-token ITL).
     * @param prompts builds the prompts.
     */
    public RequestBodies(final Endpoint endpoint, final String model, final boolean stream, final boolean ignoreEos,
        final boolean tokenIdPrompts, final boolean continuousUsage, final PromptFactory prompts)
    {
        if (tokenIdPrompts && Endpoint.CHAT == endpoint)
        {
            throw new IllegalArgumentException("--prompt-format tokens needs --endpoint completions");
        }
        this.endpoint = endpoint;
        this.model = model;
        this.stream = stream;
        this.ignoreEos = ignoreEos;
        this.tokenIdPrompts = tokenIdPrompts;
        this.continuousUsage = continuousUsage;
        this.prompts = prompts;
    }

    /**
     * Build a prefill hop body for every request too ({@link #prefillBody}).
     *
     * @param twoHop true for a prefill/decode run.
     * @return this.
     */
    public RequestBodies prefillDecode(final boolean twoHop)
    {
        prefillDecode = twoHop;
        return this;
    }

    /**
     * @return true when requests go to a prefill server first.
     */
    public boolean prefillDecode()
    {
        return prefillDecode;
    }

    /**
     * @param request the planned request.
     * @return its JSON body.
     */
    public String body(final PlannedRequest request)
    {
        return build(request).toString();
    }

    /**
     * The body as UTF-8 in a buffer of {@code allocator} (no intermediate string or byte array).
     *
     * @param request the planned request.
     * @param allocator where the buffer comes from (the caller releases it, or hands it on).
     * @return its JSON body.
     */
    public ByteBuf body(final PlannedRequest request, final ByteBufAllocator allocator)
    {
        final CharSequence json = build(request);
        final int length = ByteBufUtil.utf8Bytes(json);
        final ByteBuf buffer = allocator.buffer(length);
        ByteBufUtil.reserveAndWriteUtf8(buffer, json, length);
        return buffer;
    }

    /**
     * The prefill hop's body of a request, as vLLM's disaggregation proxy derives it from the client's: the same model,
     * prompt and {@code ignore_eos}, {@code max_tokens} 1, {@code stream} false without {@code stream_options}, and
     * {@code kv_transfer_params} asking the prefill server to keep the KV blocks for a remote decode. The prompt is
     * built once when the request's {@link #body(PlannedRequest, ByteBufAllocator)} was the last built.
     *
     * @param request the planned request.
     * @param allocator where the buffer comes from (the caller releases it, or hands it on).
     * @return its prefill body, or null when this is not a prefill/decode run.
     */
    public ByteBuf prefillBody(final PlannedRequest request, final ByteBufAllocator allocator)
    {
        if (!prefillDecode)
        {
            return null;
        }
        if (built != request)
        {
            build(request);
        }
        body.setLength(commonLength);
        body.append(",\"max_tokens\":1");
        if (ignoreEos)
        {
            body.append(",\"ignore_eos\":true");
        }
        body.append(",\"stream\":false,\"kv_transfer_params\":{\"do_remote_decode\":true,")
            .append("\"do_remote_prefill\":false,\"remote_engine_id\":null,\"remote_block_ids\":null,")
            .append("\"remote_host\":null,\"remote_port\":null}}");
        built = null; // the builder no longer holds the request's own body
        final int length = ByteBufUtil.utf8Bytes(body);
        final ByteBuf buffer = allocator.buffer(length);
        ByteBufUtil.reserveAndWriteUtf8(buffer, body, length);
        return buffer;
    }

    private StringBuilder build(final PlannedRequest request)
    {
        body.setLength(0);
        body.append("{\"model\":");
        appendJsonString(model);
        if (Endpoint.CHAT == endpoint)
        {
            body.append(",\"messages\":[{\"role\":\"user\",\"content\":\"");
            prompts.appendText(request, body);
            body.append("\"}]");
        }
        else if (tokenIdPrompts)
        {
            body.append(",\"prompt\":");
            prompts.appendTokenIds(request, body);
        }
        else
        {
            body.append(",\"prompt\":\"");
            prompts.appendText(request, body);
            body.append('"');
        }
        built = request;
        commonLength = body.length();
        if (request.outputTokens() > 0)
        {
            body.append(",\"max_tokens\":").append(request.outputTokens());
        }
        if (ignoreEos)
        {
            body.append(",\"ignore_eos\":true");
        }
        if (stream)
        {
            body.append(",\"stream\":true,\"stream_options\":{\"include_usage\":true");
            body.append(continuousUsage ? ",\"continuous_usage_stats\":true}" : "}");
        }
        body.append('}');
        return body;
    }

    /**
     * @return the endpoint's path.
     */
    public String path()
    {
        return endpoint.path();
    }

    /**
     * @return true for streaming requests.
     */
    public boolean stream()
    {
        return stream;
    }

    private void appendJsonString(final String value)
    {
        body.append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            if ('"' == c || '\\' == c)
            {
                body.append('\\').append(c);
            }
            else if (c < 0x20)
            {
                body.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int)c));
            }
            else
            {
                body.append(c);
            }
        }
        body.append('"');
    }
}
