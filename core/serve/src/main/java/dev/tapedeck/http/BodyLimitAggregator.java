package dev.tapedeck.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.TooLongHttpContentException;

/**
 * Netty's aggregator with an OpenAI-shaped 413 for bodies over {@code --max-request-body-size}. The oversized request
 * goes on to {@link OpenAiHandler} without its body, failed with a {@link TooLongHttpContentException}, and is
 * answered there in its turn: written from here, the 413 would overtake the responses still due to the requests
 * pipelined before it on the connection (or be refused by the encoder in the middle of a streamed one). On a
 * keep-alive connection the rest of the oversized body is read and discarded (the aggregator does that) and the
 * connection stays usable; closing while the client still uploads would reset the connection and could lose the 413
 * itself.
 */
final class BodyLimitAggregator extends HttpObjectAggregator
{
    private final int maxBodyBytes;

    BodyLimitAggregator(final int maxBodyBytes)
    {
        super(maxBodyBytes);
        this.maxBodyBytes = maxBodyBytes;
    }

    /**
     * Netty answers an {@code Expect} it does not know with an empty 417; give it an OpenAI-shaped body, as every
     * other refusal has.
     */
    @Override
    protected Object newContinueResponse(final HttpMessage start, final int maxContentLength,
        final ChannelPipeline pipeline)
    {
        final String expectation = start.headers().get(HttpHeaderNames.EXPECT); // the call below may remove it
        final Object response = super.newContinueResponse(start, maxContentLength, pipeline);
        if (response instanceof HttpResponse http &&
            HttpResponseStatus.EXPECTATION_FAILED.equals(http.status()))
        {
            final FullHttpResponse failed = ControlResponses.error(
                HttpResponseStatus.EXPECTATION_FAILED, "ExpectationFailed",
                "Expect: " + expectation + " is not supported (only 100-continue)", null);
            failed.headers().set(HttpHeaderNames.CONNECTION,
                HttpHeaderValues.CLOSE);
            return failed;
        }
        return response;
    }

    @Override
    protected void handleOversizedMessage(final ChannelHandlerContext ctx, final HttpMessage oversized)
    {
        final HttpRequest request = (HttpRequest)oversized;
        final FullHttpRequest tooLarge = new DefaultFullHttpRequest(request.protocolVersion(), request.method(),
            request.uri(), Unpooled.EMPTY_BUFFER);
        tooLarge.headers().set(request.headers());
        tooLarge.setDecoderResult(DecoderResult.failure(new TooLongHttpContentException(
            "Request body exceeds the limit of " + maxBodyBytes + " bytes (--max-request-body-size).")));
        ctx.fireChannelRead(tooLarge);
    }
}
