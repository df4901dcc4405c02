package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The connection limits on real sockets: an idle connection is closed by the server, a half-sent request gets 408 and
 * is closed, a connection over {@code --max-connections} gets 503 while the server keeps answering the others, and
 * a port in use is named in one line.
 */
class ConnectionLimitsIT
{
    private static TestServer server(final int maxConnections) throws Exception
    {
        return new TestServer(TestServer.context().connectionLimits(new ConnectionLimits(
            TimeUnit.MILLISECONDS.toNanos(300), TimeUnit.MILLISECONDS.toNanos(800), maxConnections)));
    }

    private static Socket connect(final TestServer server) throws IOException
    {
        final Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", server.ports.get(0)), 5000);
        socket.setSoTimeout(20_000); // a bound on a hang, not a timing check
        return socket;
    }

    /** Everything the server sends until it closes the connection. */
    private static String readToEnd(final Socket socket) throws IOException
    {
        final InputStream in = socket.getInputStream();
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final byte[] buffer = new byte[4096];
        for (int n; (n = in.read(buffer)) >= 0; )
        {
            out.write(buffer, 0, n);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldCloseIdleAndHalfSentConnections() throws Exception
    {
        try (TestServer server = server(0); Socket idle = connect(server); Socket halfSent = connect(server))
        {
            halfSent.getOutputStream().write("POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 50\r\n\r\n{"
                .getBytes(StandardCharsets.US_ASCII));
            assertEquals("", readToEnd(idle), "an idle connection is closed without a word");
            final String answer = readToEnd(halfSent);
            assertTrue(answer.startsWith("HTTP/1.1 408 Request Timeout\r\n"), answer);
            assertTrue(answer.contains("\"type\":\"RequestTimeoutError\""), answer);
            assertEquals(200, server.get("/health").statusCode(), "the server is fine");
        }
    }

    @Test
    void shouldRefuseConnectionsOverTheCapAndServeTheOthers() throws Exception
    {
        try (TestServer server = server(2); Socket first = connect(server); Socket second = connect(server);
            Socket third = connect(server))
        {
            assertTrue(second.isConnected());
            final String refused = readToEnd(third);
            assertTrue(refused.startsWith("HTTP/1.1 503 Service Unavailable\r\n"), refused);
            assertTrue(refused.contains("--max-connections 2"), refused);
            first.getOutputStream().write("GET /health HTTP/1.1\r\nhost: x\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
            final byte[] head = new byte[15];
            assertEquals(15, first.getInputStream().readNBytes(head, 0, 15));
            assertEquals("HTTP/1.1 200 OK", new String(head, StandardCharsets.US_ASCII), "the first two are served");
        }
    }

    @Test
    void shouldNameTheAddressAndPortWhenThePortIsTaken() throws Exception
    {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
            java.net.InetAddress.getByName("127.0.0.1")))
        {
            final IllegalStateException ex = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> new TestServer(TestServer.context().port(taken.getLocalPort())).close());
            assertEquals("cannot listen on 127.0.0.1:" + taken.getLocalPort() + ": the address is already in use " +
                "(another server on this port? choose one with --port)", ex.getMessage());
        }
    }
}
