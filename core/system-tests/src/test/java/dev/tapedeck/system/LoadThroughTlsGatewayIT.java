package dev.tapedeck.system;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

import dev.tapedeck.cli.Main;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.load.LoadReport;
import dev.tapedeck.testing.LoopbackCertificate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck load --url https://127.0.0.1:PORT/team-a/v1 --insecure} through a TLS gateway that routes by path
 * prefix (a Netty server with a self-signed certificate made by the JDK's keytool, forwarding to a real serve): the
 * prefix is kept on every request, TLS carries them, and without {@code --insecure} the self-signed certificate is
 * refused.
 */
@Timeout(120)
class LoadThroughTlsGatewayIT
{
    @TempDir
    Path dir;

    private final List<String> seenPaths = new CopyOnWriteArrayList<>();

    private SslContext serverTls() throws Exception
    {
        final KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(LoopbackCertificate.make(dir).keyStore(), LoopbackCertificate.PASSWORD.toCharArray());
        return SslContextBuilder.forServer(keys).build();
    }

    /** The gateway: TLS in, the path prefix stripped, the request forwarded to the server, the answer returned. */
    private Channel gateway(final EventLoopGroup group, final SslContext tls, final String backend) throws Exception
    {
        final HttpClient http = HttpClient.newHttpClient();
        return new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
            .childHandler(new ChannelInitializer<SocketChannel>()
            {
                @Override
                protected void initChannel(final SocketChannel channel)
                {
                    channel.pipeline().addLast(tls.newHandler(channel.alloc()), new HttpServerCodec(),
                        new HttpObjectAggregator(1 << 20), new SimpleChannelInboundHandler<FullHttpRequest>()
                        {
                            @Override
                            protected void channelRead0(final ChannelHandlerContext ctx, final FullHttpRequest in)
                                throws Exception
                            {
                                seenPaths.add(in.uri());
                                final String path = in.uri().startsWith("/team-a/") ? in.uri().substring(7) :
                                    "/not-routed";
                                final byte[] body = new byte[in.content().readableBytes()];
                                in.content().readBytes(body);
                                final HttpResponse<byte[]> answer = http.send(HttpRequest.newBuilder(URI.create(
                                    backend + path)).header("content-type", "application/json").method(
                                    in.method().name(), 0 == body.length ? HttpRequest.BodyPublishers.noBody() :
                                    HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                                    HttpResponse.BodyHandlers.ofByteArray());
                                final FullHttpResponse out = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                                    HttpResponseStatus.valueOf(answer.statusCode()),
                                    Unpooled.wrappedBuffer(answer.body()));
                                out.headers().set(HttpHeaderNames.CONTENT_TYPE, answer.headers()
                                    .firstValue("content-type").orElse("application/json"));
                                out.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, answer.body().length);
                                ctx.writeAndFlush(out);
                            }
                        });
                }
            }).bind("127.0.0.1", 0).sync().channel();
    }

    private static int load(final String url, final Path report, final boolean insecure, final StringWriter err)
    {
        final CommandLine cli = Main.commandLine();
        cli.setErr(new PrintWriter(err));
        final List<String> args = new java.util.ArrayList<>(List.of("load", "--url", url, "--no-stream",
            "--concurrency", "2", "--max-requests", "12", "--duration", "30s", "--prompt-tokens", "16",
            "--output-tokens", "4", "--report", report.toString(), "--quiet"));
        if (insecure)
        {
            args.add("--insecure");
        }
        return cli.execute(args.toArray(new String[0]));
    }

    @Test
    void shouldLoadAnHttpsGatewayKeepingItsPathPrefix() throws Exception
    {
        final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (TestServer server = TestServer.start())
        {
            final Channel gateway = gateway(group, serverTls(), "http://127.0.0.1:" + server.ports.get(0));
            final int port = ((java.net.InetSocketAddress)gateway.localAddress()).getPort();
            final String url = "https://127.0.0.1:" + port + "/team-a/v1";

            final StringWriter refused = new StringWriter();
            assertEquals(2, load(url, dir.resolve("refused.json"), false, refused),
                "a self-signed certificate is refused without --insecure: " + refused);

            final Path report = dir.resolve("report.json");
            final StringWriter err = new StringWriter();
            assertEquals(0, load(url, report, true, err), err.toString());
            final com.fasterxml.jackson.databind.JsonNode point = LoadReport.read(report).path("points").path(0);
            assertEquals(12, point.path("requests").path("completed").asLong(), point.toString());
            assertEquals(0, point.path("requests").path("failed").asLong(), point.toString());
            assertTrue(seenPaths.contains("/team-a/v1/models"), "the model was asked through the prefix");
            assertEquals(12, seenPaths.stream().filter("/team-a/v1/completions"::equals).count(), seenPaths.toString());
        }
        finally
        {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
