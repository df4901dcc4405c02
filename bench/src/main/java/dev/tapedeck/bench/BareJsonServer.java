package dev.tapedeck.bench;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/**
 * A target for comparing HTTP clients, not servers: a bare Netty server on one event loop that answers every request
 * at once with the same bytes {@code tapedeck serve} sends for a 4-token non-streaming completion (the same headers
 * and a 467-byte body), parsing nothing but HTTP. It does far less per request than tapedeck, so a client driving it
 * from the other core is the side that runs out of CPU first; which client gets more requests per second through it
 * is then a comparison of the clients.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.tapedeck.bench.BareJsonServer PORT [TRANSPORT]}
 */
public final class BareJsonServer
{
    private static final byte[] BODY = ("{\"id\":\"cmpl-478ebcc39c2f68e887b7fa9aebd142bd\",\"object\":" +
        "\"text_completion\",\"created\":1795854429,\"model\":\"Qwen/Qwen3-8B\",\"choices\":[{\"index\":0,\"text\":" +
        "\" patente neuer!-- Alvin\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null," +
        "\"token_ids\":null,\"prompt_logprobs\":null,\"prompt_token_ids\":null}],\"service_tier\":null," +
        "\"system_fingerprint\":null,\"usage\":{\"prompt_tokens\":2,\"total_tokens\":6,\"completion_tokens\":4," +
        "\"prompt_tokens_details\":null},\"kv_transfer_params\":null}").getBytes(StandardCharsets.US_ASCII);

    private BareJsonServer()
    {
    }

    /**
     * @param args PORT [TRANSPORT].
     * @throws Exception on bind failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final ByteBuf body = Unpooled.unreleasableBuffer(Unpooled.directBuffer(BODY.length).writeBytes(BODY));
        BareSseServer.listen("JSON", Integer.parseInt(args[0]), args.length > 1 ? args[1] : "auto", new Answer(body));
    }

    /** Answers every request with the fixed completion; stateless, shared by every connection. */
    @ChannelHandler.Sharable
    private static final class Answer extends SimpleChannelInboundHandler<FullHttpRequest>
    {
        private final ByteBuf body;

        Answer(final ByteBuf body)
        {
            this.body = body;
        }

        @Override
        protected void channelRead0(final ChannelHandlerContext ctx, final FullHttpRequest request)
        {
            final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                body.duplicate());
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
            response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, BODY.length);
            ctx.writeAndFlush(response, ctx.voidPromise());
        }
    }
}
