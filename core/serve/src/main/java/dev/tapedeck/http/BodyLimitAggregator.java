package dev.tapedeck.http;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.FullHttpResponse;

/**
 * Netty's aggregator with an OpenAI-shaped 413 for bodies over {@code --max-request-body-size}. On a keep-alive
 * connection the rest of the oversized body is read and discarded (the aggregator does that) and the connection stays
 * usable; closing while the client still uploads would reset the connection and could lose the 413 itself.
 */
final class BodyLimitAggregator extends HttpObjectAggregator
{
    private final int maxBodyBytes;

    BodyLimitAggregator(final int maxBodyBytes)
    {
        super(maxBodyBytes);
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    protected void handleOversizedMessage(final ChannelHandlerContext ctx, final HttpMessage oversized)
    {
        final FullHttpResponse response = ControlResponses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
            "RequestTooLargeError", "Request body exceeds the limit of " + maxBodyBytes + " bytes " +
            "(--max-request-body-size).", null);
        if (HttpUtil.isKeepAlive(oversized))
        {
            ctx.writeAndFlush(response);
            return;
        }
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
