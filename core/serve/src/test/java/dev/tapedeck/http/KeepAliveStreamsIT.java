package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One keep-alive connection carries 300 streaming requests, one after the other, over a raw socket: every response
 * is a complete chunked SSE stream ending in {@code [DONE]} and the last chunk, and the connection stays open. (The
 * HTTP codec pairs responses with requests; a stream written around it once closed the connection at request 129.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(NoNettyLeaks.class)
class KeepAliveStreamsIT
{
    private static final int REQUESTS = 300;
    private static final byte[] END = "\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    @Test
    void shouldServeManyStreamsOnOneConnection() throws Exception
    {
        try (TestServer server = TestServer.start();
            Socket socket = new Socket("127.0.0.1", server.ports.get(0)))
        {
            socket.setSoTimeout(10_000);
            final OutputStream out = socket.getOutputStream();
            final InputStream in = socket.getInputStream();
            final byte[] body = "{\"prompt\":\"hi\",\"max_tokens\":2,\"stream\":true}".getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < REQUESTS; i++)
            {
                out.write(("POST /v1/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
                    "content-length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                final String response = readUntilLastChunk(in, i);
                assertTrue(response.startsWith("HTTP/1.1 200 OK\r\n"), i + ": " + response);
                assertTrue(response.contains("transfer-encoding: chunked\r\n"), i + ": " + response);
                assertTrue(response.contains("data: [DONE]"), i + ": " + response);
            }
            assertEquals(REQUESTS, (int)server.metric("vllm:request_success_total{engine=\"0\"," +
                "finished_reason=\"length\",model_name=\"Qwen/Qwen3-8B\"}"));
        }
    }

    private static String readUntilLastChunk(final InputStream in, final int index) throws Exception
    {
        final ByteArrayOutputStream seen = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < END.length)
        {
            final int b = in.read();
            assertTrue(b >= 0, "request " + index + ": the server closed the connection after " + seen);
            seen.write(b);
            matched = b == END[matched] ? matched + 1 : b == END[0] ? 1 : 0;
        }
        return seen.toString(StandardCharsets.UTF_8);
    }
}
