package dev.tapedeck.load.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.Unpooled;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.tapedeck.net.Transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A connection idle for longer than {@link Lane#IDLE_EXPIRY_NS} is not reused (a server such as vLLM's closes it at
 * 5 s, and a request sent as it does so would fail); one idle for less is. A real server on a real socket counts the
 * connections it accepts and answers every request on a connection it keeps open.
 */
class IdleExpiryTest
{
    private static final byte[] ANSWER = ("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n" +
        "\r\n{}").getBytes(StandardCharsets.US_ASCII);

    private final AtomicInteger accepted = new AtomicInteger();
    private ServerSocket server;
    private LoadClient client;

    @BeforeEach
    void start() throws IOException
    {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final Thread acceptor = new Thread(this::accept, "idle-expiry-server");
        acceptor.setDaemon(true);
        acceptor.start();
        client = new LoadClient(URI.create("http://127.0.0.1:" + server.getLocalPort()), 1, Map.of(),
            TimeUnit.SECONDS.toNanos(10), Transport.select("auto"));
    }

    @AfterEach
    void stop() throws IOException
    {
        client.close();
        server.close();
    }

    @Test
    void aConnectionIdleForLessIsReusedAndOneIdleForLongerIsNot() throws Exception
    {
        assertNull(exchange(), "first request");
        assertNull(exchange(), "second request, at once");
        assertEquals(1, accepted.get(), "a connection idle for a moment is reused");
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(Lane.IDLE_EXPIRY_NS) + 300);
        assertNull(exchange(), "a request after the idle expiry");
        assertEquals(2, accepted.get(), "a connection idle past the expiry is replaced by a new one");
    }

    /** @return the exchange's error kind: null when it succeeded. */
    private String exchange() throws Exception
    {
        final CompletableFuture<String> outcome = new CompletableFuture<>();
        final ExchangeListener listener = new ExchangeListener()
        {
            @Override
            public void onWritten(final Exchange exchange, final long writtenNs)
            {
            }

            @Override
            public void onTokenGap(final Exchange exchange, final long gapNs, final long tokens)
            {
            }

            @Override
            public void onFinished(final Exchange exchange, final long endNs, final String errorKind)
            {
                outcome.complete(errorKind);
            }
        };
        client.submit(new Exchange(0, System.nanoTime(), "/v1/completions",
            Unpooled.copiedBuffer("{\"prompt\":\"hi\"}", StandardCharsets.US_ASCII), false, 1, listener));
        return outcome.get(10, TimeUnit.SECONDS);
    }

    private void accept()
    {
        while (!server.isClosed())
        {
            try
            {
                final Socket socket = server.accept();
                accepted.incrementAndGet();
                final Thread connection = new Thread(() -> answer(socket), "idle-expiry-connection");
                connection.setDaemon(true);
                connection.start();
            }
            catch (final IOException closed)
            {
                return;
            }
        }
    }

    /** Answer each request (head, then the body its content-length gives) until the client closes. */
    private static void answer(final Socket socket)
    {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream())
        {
            final StringBuilder head = new StringBuilder();
            int b;
            while (-1 != (b = in.read()))
            {
                head.append((char)b);
                if (head.toString().endsWith("\r\n\r\n"))
                {
                    final String text = head.toString().toLowerCase(java.util.Locale.ROOT);
                    final int at = text.indexOf("content-length:");
                    final int length = Integer.parseInt(text.substring(at + 15, text.indexOf('\r', at)).trim());
                    in.readNBytes(length);
                    out.write(ANSWER);
                    out.flush();
                    head.setLength(0);
                }
            }
        }
        catch (final IOException ignored)
        {
            // the client closed the connection
        }
    }
}
