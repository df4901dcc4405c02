package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The message {@code load} keeps from an error body: OpenAI's, FastAPI's, or the start of anything else, as one line of
 * printable text.
 */
class ErrorBodiesTest
{
    private static String message(final byte[] body)
    {
        final ByteBuf buffer = Unpooled.wrappedBuffer(body);
        final String message = ErrorBodies.message(buffer);
        assertEquals(body.length, buffer.readableBytes(), "the body is not consumed");
        return message;
    }

    private static String message(final String body)
    {
        return message(body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void shouldReadTheMessageOfEachBodyShape()
    {
        assertEquals("This model's maximum context length is 8192 tokens.", message("{\"error\":{\"message\":" +
            "\"This model's maximum context length is 8192 tokens.\",\"type\":\"BadRequestError\",\"code\":400}}"));
        assertEquals("Unauthorized", message("{\"error\":\"Unauthorized\"}"));
        assertEquals("Not Found", message("{\"detail\":\"Not Found\"}"));
        assertEquals("upstream connect error", message("upstream connect error\n"));
        assertNull(message(new byte[0]));
    }

    @Test
    void shouldKeepOnePrintableLineOfBoundedLength()
    {
        assertEquals("a b ? c", message("{\"error\":{\"message\":\"a\\n\\tb \\u0001 c\"}}"));
        assertEquals("x?y", message(new byte[] {'x', (byte)0xff, 'y'}), "undecodable bytes are not echoed");
        assertEquals(ErrorBodies.MAX_CHARS, message("z".repeat(1000)).length());
    }
}
