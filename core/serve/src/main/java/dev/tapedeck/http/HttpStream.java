package dev.tapedeck.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.net.JsonBytes;

/**
 * One HTTP response in progress: a chat or completions request with its choices (n per prompt), streaming as SSE or
 * collected into one JSON body.
 * <p>
 * A stream's head and end go through Netty's HTTP codec, everything between bypasses it: {@link #writeHead()} writes
 * the status line and headers as an {@code HttpResponse} (chunked) through the handler's context, and the stream ends
 * with {@code LastHttpContent} the same way, so the codec pairs the response with its request; the SSE events of one
 * batch are framed here as one HTTP chunk and written as raw bytes on the codec's context, past its encoder. A step
 * therefore costs one pooled buffer, one raw write and one flush per response. Writes happen once per engine batch
 * ({@link #flush()}), only while the channel is writable; a slow reader gets the tokens it missed merged into its
 * next event, as vLLM's output collector does. A response that is not streamed is written whole, as one
 * {@code FullHttpResponse} through the codec, once its last choice has finished.
 * <p>
 * Event-loop confined.
 */
final class HttpStream
{
    private static final byte[] CRLF = JsonBytes.ascii("\r\n");
    private static final int FRAME_HEADER_RESERVE = 10;
    private static final String X_REQUEST_ID = "x-request-id";
    private static final byte[] HEX = JsonBytes.ascii("0123456789abcdef");
    private static final byte[] DATA_ID = JsonBytes.ascii("data: {\"id\":");
    private static final byte[] OBJECT_CHAT_CHUNK =
        JsonBytes.ascii(",\"object\":\"chat.completion.chunk\",\"created\":");
    private static final byte[] OBJECT_TEXT_COMPLETION =
        JsonBytes.ascii(",\"object\":\"text_completion\",\"created\":");
    private static final byte[] MODEL = JsonBytes.ascii(",\"model\":");
    private static final byte[] CHOICES = JsonBytes.ascii(",\"choices\":[");

    final HttpFront front;
    final ChannelHandlerContext ctx;
    private final ChannelHandlerContext wireCtx;
    private final Completion owner;
    final boolean chat;
    final boolean streaming;
    private final boolean includeUsage;
    private final boolean continuousUsage;
    private final boolean promptTokensDetails;
    /** What log-probabilities the request asked for. */
    final Logprobs.Request logprobs;
    /** Generated token ids are kept for the writer (logprobs, the generate API). */
    final boolean keepsTokenIds;
    /** The Responses, Messages or generate API's shape, or null for chat and completions. */
    private final ResponseShape shape;
    final boolean keepAlive;
    /** The request's HTTP version: an HTTP/1.0 client gets HTTP/1.0 answers, a stream unchunked to the close. */
    private final HttpVersion version;
    final String responseId;
    final long createdSeconds;
    private final String modelName;
    private final byte[] chunkHead;
    Choice[] choices;
    int unfinished;
    int promptTokens;
    boolean dirty;
    boolean closed;
    private boolean done;
    /** Due times (the model's) of the tokens not yet written. */
    private long[] pendingDueNs = new long[8];
    private int pendingTokens;
    /** Tokens generated for this response, over its choices. */
    private int generatedTokens;
    /** Tokens written to the client. */
    private int writtenTokens;
    /** The request's X-Request-Id, echoed on the response ({@code --enable-request-id-headers}), or null. */
    private String echoRequestId;
    /** An injected fault, or null (almost always). */
    private StreamFault fault;
    private boolean headHeld;

    /** Told when the response is complete (written, or abandoned by the client). */
    interface Completion
    {
        void onResponseComplete(HttpStream stream);
    }

    HttpStream(
        final HttpFront front,
        final ChannelHandlerContext ctx,
        final ChannelHandlerContext wireCtx,
        final Completion owner,
        final ParsedRequest request,
        final String responseId,
        final long createdSeconds,
        final HttpVersion version,
        final boolean keepAlive)
    {
        this.front = front;
        this.ctx = ctx;
        this.wireCtx = wireCtx;
        this.owner = owner;
        this.chat = ParsedRequest.Endpoint.CHAT == request.endpoint;
        this.streaming = request.stream;
        this.includeUsage = request.includeUsage;
        this.continuousUsage = request.continuousUsageStats;
        this.promptTokensDetails = front.options().enablePromptTokensDetails();
        this.logprobs = request.logprobs;
        this.keepsTokenIds = request.logprobs.sampled() || ParsedRequest.Endpoint.GENERATE == request.endpoint;
        this.version = version;
        // HTTP/1.0 has no chunking: a stream's length is told by closing the connection
        this.keepAlive = keepAlive && !(request.stream && HttpVersion.HTTP_1_0.equals(version));
        this.responseId = responseId;
        this.createdSeconds = createdSeconds;
        this.modelName = null != request.responseModel ? request.responseModel :
            front.options().modelNameForResponses();
        this.chunkHead = streaming ? chunkHead(modelName) : null;
        this.shape = ResponseShape.of(request.endpoint, this);
    }

    /** Every event's bytes up to its choices, written once per response straight as bytes (no strings between). */
    private byte[] chunkHead(final String model)
    {
        final ByteBuf head = Unpooled.buffer(128 + responseId.length() + model.length());
        try
        {
            head.writeBytes(DATA_ID);
            JsonBytes.writeString(head, responseId);
            head.writeBytes(chat ? OBJECT_CHAT_CHUNK : OBJECT_TEXT_COMPLETION);
            JsonBytes.writeLong(head, createdSeconds);
            head.writeBytes(MODEL);
            JsonBytes.writeString(head, model);
            head.writeBytes(CHOICES);
            return ByteBufUtil.getBytes(head);
        }
        finally
        {
            head.release();
        }
    }

    /**
     * Send the status line and headers of an SSE response right away (vLLM commits 200 before the first token). The
     * head and the last chunk go through the HTTP codec, which pairs each response with its request (it refuses a
     * connection's 129th request otherwise); the chunks in between are framed here and bypass it.
     */
    void writeHead()
    {
        if (null != fault && fault.holding())
        {
            headHeld = true; // written by resume()
            return;
        }
        final DefaultHttpResponse head = new DefaultHttpResponse(version, HttpResponseStatus.OK);
        head.headers().add(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        if (chunked())
        {
            head.headers().add(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        if (!keepAlive)
        {
            head.headers().add(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        responseHeaders(head.headers());
        ctx.writeAndFlush(head, ctx.voidPromise());
    }

    /**
     * A token of one of the choices was generated; it is written at the next flush.
     *
     * @param dueNs when the model emitted it.
     */
    void addToken(final long dueNs)
    {
        if (pendingTokens == pendingDueNs.length)
        {
            pendingDueNs = java.util.Arrays.copyOf(pendingDueNs, pendingTokens * 2);
        }
        pendingDueNs[pendingTokens++] = dueNs;
        generatedTokens++;
        markDirty();
    }

    /**
     * @param value the request's {@code X-Request-Id}, to echo on the response.
     */
    void echoRequestId(final String value)
    {
        echoRequestId = value;
    }

    /**
     * @param value the fault injected into this response.
     */
    void fault(final StreamFault value)
    {
        fault = value;
    }

    /**
     * The end of a stall or first-byte fault: write what was held back.
     */
    void resume()
    {
        if (closed || done || fault.holding())
        {
            return;
        }
        if (headHeld)
        {
            headHeld = false;
            writeHead();
        }
        if (streaming)
        {
            onWritable();
        }
        else
        {
            flush();
        }
    }

    private void onWritten()
    {
        final long writtenNs = front.nowNs();
        for (int i = 0; i < pendingTokens; i++)
        {
            front.onTokenWritten(writtenNs - pendingDueNs[i]);
        }
        writtenTokens += pendingTokens;
        pendingTokens = 0;
    }

    void markDirty()
    {
        if (!dirty && !done)
        {
            dirty = true;
            front.addDirty(this);
        }
    }

    void onChoiceFinished()
    {
        unfinished--;
        markDirty();
    }

    /**
     * The client went away: end every unfinished choice in the engine (counted as aborts).
     */
    void clientGone(final long nowNs)
    {
        if (done)
        {
            return;
        }
        closed = true;
        for (final Choice choice : choices)
        {
            if (null != choice && !choice.finished)
            {
                front.engine().abort(choice.request, FinishReason.ABORT, nowNs);
            }
        }
        done = true;
    }

    /**
     * Write what the engine produced since the last flush; called once per batch.
     */
    void flush()
    {
        dirty = false;
        if (closed || done)
        {
            return;
        }
        if (null != fault)
        {
            if (!streaming)
            {
                fault.onTokens(generatedTokens);
            }
            if (fault.holding())
            {
                return;
            }
        }
        if (streaming)
        {
            if (ctx.channel().isWritable())
            {
                flushStream();
            }
        }
        else if (0 == unfinished)
        {
            writeFullResponse();
            complete();
        }
    }

    /**
     * The channel became writable again: send what was held back.
     */
    void onWritable()
    {
        if (!closed && !done && streaming && (null == fault || !fault.holding()))
        {
            flushStream();
        }
    }

    private void flushStream()
    {
        final ByteBuf frame = ctx.alloc().buffer(512);
        frame.writerIndex(FRAME_HEADER_RESERVE);
        final boolean finishedAll = 0 == unfinished;
        if (null != shape)
        {
            shape.writeEvents(frame, finishedAll);
        }
        else
        {
            for (final Choice choice : choices)
            {
                writeChoiceEvents(frame, choice);
            }
        }
        if (finishedAll && null == shape)
        {
            if (includeUsage)
            {
                SseChunks.writeUsageChunk(frame, chunkHead, promptTokens, completionTokens(),
                    promptTokensDetails ? cachedTokens() : -1);
            }
            frame.writeBytes(SseChunks.DONE);
        }
        if (frame.writerIndex() == FRAME_HEADER_RESERVE)
        {
            frame.release();
        }
        else
        {
            if (chunked())
            {
                frameChunk(frame);
            }
            else
            {
                frame.readerIndex(FRAME_HEADER_RESERVE); // HTTP/1.0: the events as they are
            }
            wireCtx.write(frame, wireCtx.voidPromise());
        }
        if (finishedAll)
        {
            ctx.write(LastHttpContent.EMPTY_LAST_CONTENT, ctx.voidPromise());
        }
        wireCtx.flush();
        onWritten();
        if (null != fault)
        {
            fault.onTokens(writtenTokens);
        }
        if (finishedAll)
        {
            complete();
        }
    }

    private void writeChoiceEvents(final ByteBuf frame, final Choice choice)
    {
        if (choice.finalSent)
        {
            return;
        }
        final int length = choice.emittableLength();
        if (0 == length && !choice.finished && 0 == choice.tokenIdCount())
        {
            return;
        }
        if (chat && !choice.roleSent)
        {
            SseChunks.writeRoleChunk(frame, chunkHead, choice.index, promptTokens, continuousUsage);
            choice.roleSent = true;
        }
        if (choice.isToolCall())
        {
            ToolCallChunks.writeEvents(frame, chunkHead, choice, length);
        }
        else
        {
            final FinishReason reason = choice.finished ? choice.finishReason : null;
            SseChunks.writeDeltaChunk(frame, chunkHead, chat, choice, length, reason, promptTokens, continuousUsage,
                logprobs.sampled() ? front.vocabulary() : null, logprobs.topLogprobs());
        }
        choice.consume(length);
        if (choice.finished)
        {
            choice.finalSent = true;
        }
    }

    /** The request's echoed X-Request-Id, and llm-d's pod headers when the pod is named. */
    private void responseHeaders(final io.netty.handler.codec.http.HttpHeaders headers)
    {
        if (null != echoRequestId)
        {
            headers.set(X_REQUEST_ID, echoRequestId);
        }
        final ServeOptions options = front.options();
        if (null != options.podName())
        {
            headers.set("x-inference-pod", options.podName());
            if (ctx.channel().localAddress() instanceof java.net.InetSocketAddress local)
            {
                headers.set("x-inference-port", local.getPort());
            }
        }
        if (null != options.podNamespace())
        {
            headers.set("x-inference-namespace", options.podNamespace());
        }
    }

    private boolean chunked()
    {
        return !HttpVersion.HTTP_1_0.equals(version);
    }

    /**
     * Put {@code <hex length>\r\n} in front of the payload and {@code \r\n} after it, in the same buffer.
     */
    private static void frameChunk(final ByteBuf frame)
    {
        final int payloadLength = frame.writerIndex() - FRAME_HEADER_RESERVE;
        frame.writeBytes(CRLF);
        int hexDigits = 1;
        while ((payloadLength >>> (4 * hexDigits)) != 0)
        {
            hexDigits++;
        }
        final int start = FRAME_HEADER_RESERVE - hexDigits - 2;
        int index = start;
        for (int shift = 4 * (hexDigits - 1); shift >= 0; shift -= 4)
        {
            frame.setByte(index++, HEX[(payloadLength >>> shift) & 0xf]);
        }
        frame.setByte(index++, '\r');
        frame.setByte(index, '\n');
        frame.readerIndex(start);
    }

    int cachedTokens()
    {
        int total = 0;
        for (final Choice choice : choices)
        {
            if (choice.countsPrompt)
            {
                total += choice.request.numCachedTokens();
            }
        }
        return total;
    }

    int completionTokens()
    {
        int total = 0;
        for (final Choice choice : choices)
        {
            total += choice.request.numOutputTokens();
        }
        return total;
    }

    private void writeFullResponse()
    {
        final ByteBuf body = ctx.alloc().buffer(1024);
        if (null != shape)
        {
            shape.writeFull(body);
        }
        else
        {
            FullResponses.write(body, this, modelName, completionTokens(), promptTokensDetails);
        }
        final FullHttpResponse response = new DefaultFullHttpResponse(version, HttpResponseStatus.OK, body);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        responseHeaders(response.headers());
        if (!keepAlive)
        {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        else if (!chunked())
        {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        ctx.writeAndFlush(response, ctx.voidPromise());
        onWritten();
    }

    private void complete()
    {
        done = true;
        owner.onResponseComplete(this);
    }

    /**
     * @return the model name responses report.
     */
    String modelName()
    {
        return modelName;
    }

    /**
     * @return true when the stream ends with a usage chunk ({@code stream_options.include_usage}).
     */
    boolean includeUsage()
    {
        return includeUsage;
    }

    /**
     * @return the served context length.
     */
    int maxModelLen()
    {
        return front.engine().config().maxModelLen();
    }

    boolean isDone()
    {
        return done;
    }
}
