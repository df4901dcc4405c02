package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * vLLM parity on real sockets: an HTTP/1.0 client gets HTTP/1.0 answers (a stream unchunked, ended by the close; a
 * keep-alive answer says so), and a body that is not strict UTF-8 (an overlong form, an encoded surrogate) is a 400.
 */
@Timeout(60)
class Http10AndUtf8IT
{
    private static byte[] post(final String version, final byte[] body, final String extraHeaders)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("POST /v1/completions " + version + "\r\nhost: x\r\ncontent-type: application/json\r\n" +
            extraHeaders + "content-length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(body);
        return out.toByteArray();
    }

    private static byte[] completion(final String prompt, final boolean stream)
    {
        return ("{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"" + prompt + "\",\"max_tokens\":4," +
            "\"ignore_eos\":true,\"stream\":" + stream + "}").getBytes(StandardCharsets.UTF_8);
    }

    /** Everything the server sends until it closes the connection. */
    private static String untilClose(final TestServer server, final byte[] request) throws IOException
    {
        try (Socket socket = new Socket("127.0.0.1", server.ports.get(0)))
        {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(request);
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void shouldAnswerAnHttp10ClientInHttp10() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final String stream = untilClose(server, post("HTTP/1.0", completion("hi", true), ""));
            assertTrue(stream.startsWith("HTTP/1.0 200 OK\r\n"), stream);
            final String head = stream.substring(0, stream.indexOf("\r\n\r\n")).toLowerCase();
            assertFalse(head.contains("transfer-encoding"), "no chunking for HTTP/1.0: " + head);
            final String body = stream.substring(stream.indexOf("\r\n\r\n") + 4);
            assertTrue(body.startsWith("data: {") && body.endsWith("data: [DONE]\n\n"),
                "the events as they are, then the close: " + body);

            try (Socket socket = new Socket("127.0.0.1", server.ports.get(0)))
            {
                socket.setSoTimeout(20_000);
                final InputStream in = socket.getInputStream();
                for (int i = 0; i < 2; i++) // HTTP/1.0 keep-alive, asked for and granted
                {
                    socket.getOutputStream().write(post("HTTP/1.0", completion("hi", false),
                        "connection: keep-alive\r\n"));
                    final String answer = readOne(in);
                    assertTrue(answer.startsWith("HTTP/1.0 200 OK\r\n"), answer);
                    assertTrue(answer.toLowerCase().contains("connection: keep-alive"), answer);
                }
            }
            final String health = untilClose(server, "GET /health HTTP/1.0\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
            assertTrue(health.startsWith("HTTP/1.0 200 OK"), health);
        }
    }

    /** One response with a content-length. */
    private static String readOne(final InputStream in) throws IOException
    {
        final ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n"))
        {
            final int b = in.read();
            assertTrue(b >= 0, "closed early: " + head);
            head.write(b);
        }
        final String text = head.toString(StandardCharsets.US_ASCII);
        final java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)")
            .matcher(text);
        assertTrue(length.find(), text);
        return text + new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8);
    }

    @Test
    void shouldRefuseABodyThatIsNotStrictUtf8() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            final byte[][] bad = {
                {(byte)0xc0, (byte)0xaf}, // an overlong '/'
                {(byte)0xed, (byte)0xa0, (byte)0x80}, // an encoded surrogate (CESU-8)
                {(byte)0xe6, (byte)0x97}, // a sequence cut short
            };
            for (final byte[] bytes : bad)
            {
                final byte[] raw = rawBody("h", bytes, "i");
                final String answer = untilClose(server, post("HTTP/1.1", raw, "connection: close\r\n"));
                assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
                assertTrue(answer.contains("json_invalid") && answer.contains("invalid UTF-8 at byte "), answer);
            }
            final String good = untilClose(server, post("HTTP/1.1", completion("h\u00e9llo \u65e5\u672c \ud83d\ude00",
                false), "connection: close\r\n"));
            assertTrue(good.startsWith("HTTP/1.1 200 "), "strict UTF-8 with 2-, 3- and 4-byte forms is fine: " + good);
            assertEquals(200, server.post("/v1/completions", new String(completion("after", false),
                StandardCharsets.UTF_8)).statusCode(), "the server goes on");
        }
    }

    private static byte[] rawBody(final String before, final byte[] middle, final String after)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"" + before)
            .getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(middle);
        out.writeBytes((after + "\",\"max_tokens\":4}").getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }
}
