package dev.tapedeck.http;

import java.util.ArrayDeque;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpContentException;

import dev.tapedeck.fault.RequestFault;
import dev.tapedeck.metrics.PrometheusExposition;

/**
 * Routes one connection's requests: the OpenAI generation endpoints, {@code /v1/models}, {@code /health},
 * {@code /version}, {@code /load} and {@code /metrics}. One response at a time per connection; pipelined requests
 * wait their turn. A client that disconnects aborts its request in the engine.
 * <p>
 * One instance per channel, confined to the channel's event loop (which is also the engine's).
 */
final class OpenAiHandler extends SimpleChannelInboundHandler<FullHttpRequest> implements HttpStream.Completion
{
    private static final System.Logger LOG = System.getLogger(OpenAiHandler.class.getName());

    private final Instance instance;
    private final CompletionAdmission admission;
    private final ArrayDeque<FullHttpRequest> pipelined = new ArrayDeque<>(2);
    private ChannelHandlerContext ctx;
    private HttpStream active;
    /** The HTTP version of the request being answered: an HTTP/1.0 client gets HTTP/1.0 answers. */
    private io.netty.handler.codec.http.HttpVersion version = io.netty.handler.codec.http.HttpVersion.HTTP_1_1;
    /** With --enable-request-id-headers: the X-Request-Id every answer to the current request carries, else null. */
    private String responseRequestId;
    /** True while this connection's request is parsed and tokenized off the loop. */
    private boolean preparing;

    OpenAiHandler(final Instance instance, final CompletionAdmission admission)
    {
        super(false);
        this.instance = instance;
        this.admission = admission;
    }

    @Override
    public void handlerAdded(final ChannelHandlerContext context)
    {
        ctx = context;
    }

    @Override
    protected void channelRead0(final ChannelHandlerContext context, final FullHttpRequest request)
    {
        if (null != active || preparing)
        {
            pipelined.add(request);
            return;
        }
        try
        {
            handle(request);
        }
        finally
        {
            request.release();
        }
    }

    private void handle(final FullHttpRequest request)
    {
        final boolean keepAlive = HttpUtil.isKeepAlive(request);
        // vLLM's middleware: the client's X-Request-Id, or a new one, on every answer
        responseRequestId = !instance.options().api().requestIdHeaders() ? null :
            null != request.headers().get("X-Request-Id") ? request.headers().get("X-Request-Id") :
            instance.randomHexId();
        version = 1 == request.protocolVersion().majorVersion() && 0 == request.protocolVersion().minorVersion() ?
            io.netty.handler.codec.http.HttpVersion.HTTP_1_0 : io.netty.handler.codec.http.HttpVersion.HTTP_1_1;
        if (request.decoderResult().cause() instanceof TooLongHttpContentException)
        {
            // from BodyLimitAggregator: the body was over the limit and discarded
            respond(ControlResponses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "RequestTooLargeError",
                request.decoderResult().cause().getMessage(), null), keepAlive);
            return;
        }
        if (!request.decoderResult().isSuccess())
        {
            respond(ControlResponses.error(HttpResponseStatus.BAD_REQUEST, "Bad Request",
                "malformed HTTP request: " + request.decoderResult().cause(), null), false);
            return;
        }
        if (1 != request.protocolVersion().majorVersion() || request.protocolVersion().minorVersion() > 1)
        {
            respond(ControlResponses.error(HttpResponseStatus.BAD_REQUEST, "Bad Request", "unsupported HTTP " +
                "version " + request.protocolVersion().text() + " (HTTP/1.1 and HTTP/1.0 are served)", null), false);
            return;
        }
        final String path;
        try
        {
            final QueryStringDecoder target = new QueryStringDecoder(request.uri());
            path = target.path();
            target.parameters(); // decodes them too, so that later reads cannot fail
        }
        catch (final IllegalArgumentException ex)
        {
            respond(ControlResponses.error(HttpResponseStatus.BAD_REQUEST, "Bad Request",
                "invalid percent-encoding in the request target: " + ex.getMessage(), null), keepAlive);
            return;
        }
        final HttpMethod method = request.method();
        final ServeOptions options = instance.options();
        if (null != options.apiKey() && needsKey(path) && !authorized(options.apiKey(), request))
        {
            respond(ControlResponses.unauthorized(), keepAlive);
            return;
        }
        if (instance.lifecycle().holds(path))
        {
            hold(request);
            return;
        }
        route(request, path, method, keepAlive);
    }

    private void route(final FullHttpRequest request, final String path, final HttpMethod method,
        final boolean keepAlive)
    {
        final ServeOptions options = instance.options();
        switch (path)
        {
            case "/v1/chat/completions":
                generate(request, method, ParsedRequest.Endpoint.CHAT, keepAlive);
                break;
            case "/v1/completions":
                generate(request, method, ParsedRequest.Endpoint.COMPLETIONS, keepAlive);
                break;
            case "/v1/responses":
                generate(request, method, ParsedRequest.Endpoint.RESPONSES, keepAlive);
                break;
            case "/v1/messages":
                generate(request, method, ParsedRequest.Endpoint.MESSAGES, keepAlive);
                break;
            case "/inference/v1/generate":
                generate(request, method, ParsedRequest.Endpoint.GENERATE, keepAlive);
                break;
            case "/health":
            case "/health/ready":
                // /health/ready is llm-d-inference-sim's: 503 also while starting
                final boolean up = instance.faults().healthy() && !instance.lifecycle().starting();
                respondGet(method, () -> ControlResponses.empty(up ? HttpResponseStatus.OK :
                    HttpResponseStatus.SERVICE_UNAVAILABLE), keepAlive);
                break;
            case "/sleep":
            case "/wake_up":
            case "/is_sleeping":
                sleepRoute(request, path, method, keepAlive);
                break;
            case "/version":
                respondGet(method, () -> ControlResponses.version(options.vllmVersion()), keepAlive);
                break;
            case "/load":
                respondGet(method, () -> ControlResponses.load(instance.requestsInFlight()), keepAlive);
                break;
            case "/v1/models":
                respondGet(method, () -> ControlResponses.models(options, instance.firstEngine().config().maxModelLen(),
                    instance.loras().adapters(), instance::randomHexId), keepAlive);
                break;
            case "/tokenize":
            case "/detokenize":
            case "/v1/embeddings":
            case "/v1/messages/count_tokens":
                tokenEndpoint(request, path, method, keepAlive);
                break;
            case "/v1/load_lora_adapter":
            case "/v1/unload_lora_adapter":
                respond(LoraEndpoints.handle(instance, path, method, request), keepAlive);
                break;
            case "/reset_prefix_cache":
                if (HttpMethod.POST == method)
                {
                    instance.resetPrefixCache();
                    respond(ControlResponses.empty(HttpResponseStatus.OK), keepAlive);
                }
                else
                {
                    respond(ControlResponses.detail(HttpResponseStatus.METHOD_NOT_ALLOWED), keepAlive);
                }
                break;
            case "/metrics":
                respondGet(method, this::metrics, keepAlive);
                break;
            case "/tapedeck/stats":
                respondGet(method, () -> ControlResponses.json(HttpResponseStatus.OK, instance.statsJson(false)),
                    keepAlive);
                break;
            case "/tapedeck/stats/reset":
                respond(HttpMethod.POST == method ? ControlResponses.json(HttpResponseStatus.OK,
                    instance.statsJson(true)) : ControlResponses.detail(HttpResponseStatus.METHOD_NOT_ALLOWED),
                    keepAlive);
                break;
            default:
                respond(ControlResponses.detail(HttpResponseStatus.NOT_FOUND), keepAlive);
        }
    }

    /** With {@code --api-key}: vLLM's {@code /v1} routes, and every route that changes the server's state. */
    private static boolean needsKey(final String path)
    {
        return path.startsWith("/v1") || "/reset_prefix_cache".equals(path) || "/tapedeck/stats/reset".equals(path) ||
            "/sleep".equals(path) || "/wake_up".equals(path);
    }

    /**
     * A request the instance cannot answer yet (starting, or asleep): the connection reads nothing more until it is
     * run, in arrival order, once the instance is ready and awake.
     */
    private void hold(final FullHttpRequest request)
    {
        pauseReading();
        request.retain();
        instance.lifecycle().hold(() -> resumeWith(request, () -> handle(request)));
    }

    /**
     * The token endpoints: answered here, or, for a large body (thousands of texts to tokenize or embed), on an
     * admission thread while the loop streams everyone else's tokens.
     */
    private void tokenEndpoint(final FullHttpRequest request, final String path, final HttpMethod method,
        final boolean keepAlive)
    {
        if (!admission.offloads(request))
        {
            respond(TokenEndpoints.handle(instance, admission, path, method, request), keepAlive);
            return;
        }
        pauseReading();
        request.retain();
        admission.offLoop(() -> TokenEndpoints.handle(instance, admission, path, method, request),
            ex -> ex instanceof java.util.concurrent.RejectedExecutionException ? ControlResponses.error(
                HttpResponseStatus.SERVICE_UNAVAILABLE, "ServiceUnavailableError", "The server is busy preparing " +
                "large requests; retry later.", null) : ControlResponses.error(HttpResponseStatus.INTERNAL_SERVER_ERROR,
                "InternalServerError", "could not answer the request: " + ex, null),
            ctx.executor(), response -> resumeWith(request, () -> respond(response, keepAlive)));
    }

    /** The connection reads nothing more while its request waits (for the instance, an admission thread, a sleep). */
    private void pauseReading()
    {
        preparing = true;
        ctx.channel().config().setAutoRead(false);
    }

    private void resumeReading()
    {
        preparing = false;
        ctx.channel().config().setAutoRead(true);
    }

    /**
     * Read again and do what waited on a retained request if its client is still there, release the request, then
     * serve what was pipelined behind it.
     */
    private void resumeWith(final FullHttpRequest request, final Runnable work)
    {
        resumeReading();
        try
        {
            if (ctx.channel().isActive())
            {
                work.run();
            }
        }
        finally
        {
            request.release();
        }
        if (null == active)
        {
            servePipelined();
        }
    }

    /** vLLM's sleep routes, served with {@code --enable-sleep-mode} (vLLM also needs VLLM_SERVER_DEV_MODE=1). */
    private void sleepRoute(final FullHttpRequest request, final String path, final HttpMethod method,
        final boolean keepAlive)
    {
        final Lifecycle lifecycle = instance.lifecycle();
        if (!lifecycle.sleepModeEnabled())
        {
            respond(ControlResponses.detail(HttpResponseStatus.NOT_FOUND), keepAlive);
            return;
        }
        final HttpMethod expected = "/is_sleeping".equals(path) ? HttpMethod.GET : HttpMethod.POST;
        if (expected != method)
        {
            respond(ControlResponses.detail(HttpResponseStatus.METHOD_NOT_ALLOWED), keepAlive);
            return;
        }
        final java.util.Map<String, java.util.List<String>> query = new QueryStringDecoder(request.uri()).parameters();
        switch (path)
        {
            case "/sleep":
                pauseReading(); // a sleep with mode=wait answers once what runs has finished
                lifecycle.sleep(first(query, "level"), first(query, "mode"), response ->
                {
                    resumeReading();
                    if (ctx.channel().isActive())
                    {
                        respond(response, keepAlive);
                        if (keepAlive)
                        {
                            servePipelined();
                        }
                    }
                });
                break;
            case "/wake_up":
                respond(lifecycle.wakeUp(query.getOrDefault("tags", java.util.List.of())), keepAlive);
                break;
            default:
                respond(lifecycle.isSleeping(), keepAlive);
        }
    }

    private static String first(final java.util.Map<String, java.util.List<String>> query, final String name)
    {
        final java.util.List<String> values = query.get(name);
        return null == values || values.isEmpty() ? null : values.get(0);
    }

    /** The bearer token compared in constant time, so that its timing tells nothing of the key. */
    private static boolean authorized(final String apiKey, final FullHttpRequest request)
    {
        final String header = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        return null != header && java.security.MessageDigest.isEqual(
            ("Bearer " + apiKey).getBytes(java.nio.charset.StandardCharsets.UTF_8),
            header.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private FullHttpResponse metrics()
    {
        final StringBuilder text = new StringBuilder(32 * 1024);
        instance.exposition().write(text);
        instance.faults().writeMetrics(text);
        return ControlResponses.text(PrometheusExposition.CONTENT_TYPE, text.toString());
    }

    private void respondGet(final HttpMethod method, final java.util.function.Supplier<FullHttpResponse> response,
        final boolean keepAlive)
    {
        respond(HttpMethod.GET == method ? response.get() :
            ControlResponses.detail(HttpResponseStatus.METHOD_NOT_ALLOWED), keepAlive);
    }

    private void generate(final FullHttpRequest request, final HttpMethod method,
        final ParsedRequest.Endpoint endpoint, final boolean keepAlive)
    {
        if (HttpMethod.POST != method)
        {
            respond(ControlResponses.detail(HttpResponseStatus.METHOD_NOT_ALLOWED), keepAlive);
            return;
        }
        if (instance.isShuttingDown())
        {
            respond(ControlResponses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "ServiceUnavailableError",
                "The server is shutting down.", null), false);
            return;
        }
        final long arrivalNs = instance.nowNs();
        final RequestFault fault;
        try
        {
            fault = instance.faults().draw(request.headers());
        }
        catch (final ApiException ex)
        {
            respond(ControlResponses.error(ex), keepAlive);
            return;
        }
        if (null != fault && fault.kind().isError())
        {
            respond(instance.faults().errorResponse(fault), keepAlive);
            return;
        }
        if (!admission.offloads(request))
        {
            start(admission.prepare(request, endpoint, arrivalNs), request, endpoint, keepAlive, fault);
            return;
        }
        // a large body is parsed and tokenized off the event loop, which keeps streaming every other response; this
        // connection reads nothing more until it is admitted
        pauseReading();
        request.retain();
        admission.prepareOffLoop(request, endpoint, arrivalNs, ctx.executor(), prepared -> resumeWith(request, () ->
        {
            if (instance.lifecycle().holdsGeneration())
            {
                hold(request); // the instance went to sleep while it was prepared: it waits, and is read again
            }
            else
            {
                start(prepared, request, endpoint, keepAlive, fault);
            }
        }));
    }

    private void start(final CompletionAdmission.Prepared prepared, final FullHttpRequest request,
        final ParsedRequest.Endpoint endpoint, final boolean keepAlive, final RequestFault fault)
    {
        final HttpStream stream;
        try
        {
            stream = admission.submit(prepared, request, ctx, ctx.pipeline().context(HttpServer.CODEC), this,
                endpoint, keepAlive);
        }
        catch (final ApiException ex)
        {
            respond(ControlResponses.error(ex, endpoint), keepAlive);
            return;
        }
        active = stream;
        if (null != responseRequestId)
        {
            stream.echoRequestId(responseRequestId);
        }
        if (null != fault)
        {
            stream.fault(new StreamFault(fault, instance.faults(), stream));
        }
        if (stream.streaming)
        {
            stream.writeHead();
        }
        stream.front.kick();
        if (0 == stream.unfinished)
        {
            stream.flush(); // every choice finished before running (a cache-hit threshold): nothing will step
        }
    }

    private void respond(final FullHttpResponse response, final boolean keepAlive)
    {
        response.setProtocolVersion(version);
        if (null != responseRequestId)
        {
            response.headers().set("x-request-id", responseRequestId);
        }
        if (keepAlive && io.netty.handler.codec.http.HttpVersion.HTTP_1_0 == version)
        {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        if (keepAlive)
        {
            ctx.writeAndFlush(response, ctx.voidPromise());
        }
        else
        {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void onResponseComplete(final HttpStream stream)
    {
        if (stream != active)
        {
            return;
        }
        active = null;
        if (!stream.keepAlive && !stream.closed)
        {
            ctx.channel().close();
            return;
        }
        servePipelined();
    }

    /** Serve requests that were pipelined behind the last one, in order, until one starts a stream or is prepared. */
    private void servePipelined()
    {
        while (null == active && !preparing && !pipelined.isEmpty() && ctx.channel().isActive())
        {
            final FullHttpRequest next = pipelined.poll();
            try
            {
                handle(next);
            }
            finally
            {
                next.release();
            }
        }
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext context)
    {
        if (null != active && context.channel().isWritable())
        {
            active.onWritable();
        }
        context.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(final ChannelHandlerContext context)
    {
        if (null != active)
        {
            final HttpStream stream = active;
            active = null;
            stream.clientGone(stream.front.nowNs());
            stream.front.kick();
        }
        FullHttpRequest queued;
        while (null != (queued = pipelined.poll()))
        {
            queued.release();
        }
        context.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext context, final Throwable cause)
    {
        if (cause instanceof java.io.IOException)
        {
            LOG.log(System.Logger.Level.DEBUG, "closing connection after error: {0}", cause.toString());
        }
        else
        {
            // not the peer's doing: a defect here, to be seen
            LOG.log(System.Logger.Level.WARNING, "closing connection after an unexpected error", cause);
        }
        context.close();
    }
}
