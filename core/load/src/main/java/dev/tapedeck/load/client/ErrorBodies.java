package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;

/**
 * What a server said in an error response, for the load report: the message of an OpenAI-shaped body
 * ({@code {"error":{"message":..}}}), FastAPI's {@code {"detail":..}}, or the start of any other body, as one line of
 * printable text. Stateless; thread safe; used on failures only.
 */
final class ErrorBodies
{
    /** The longest message kept. */
    static final int MAX_CHARS = 300;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ErrorBodies()
    {
    }

    /**
     * @param body the response body as received (not consumed).
     * @return its message, or null for an empty body.
     */
    static String message(final ByteBuf body)
    {
        if (!body.isReadable())
        {
            return null;
        }
        final String text = body.toString(body.readerIndex(), Math.min(body.readableBytes(), 64 * 1024),
            StandardCharsets.UTF_8);
        String message = text;
        try
        {
            final JsonNode root = JSON.readTree(text);
            final JsonNode error = root.path("error");
            if (error.path("message").isTextual())
            {
                message = error.path("message").asText();
            }
            else if (error.isTextual())
            {
                message = error.asText();
            }
            else if (root.path("detail").isTextual())
            {
                message = root.path("detail").asText();
            }
            else if (root.path("message").isTextual())
            {
                message = root.path("message").asText();
            }
        }
        catch (final Exception ex)
        {
            // not JSON: the text itself
        }
        return printable(message);
    }

    /** One line of printable text: controls and undecodable bytes become a space or '?', at most MAX_CHARS. */
    static String printable(final String text)
    {
        final StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_CHARS));
        for (int i = 0; i < text.length() && out.length() < MAX_CHARS; i++)
        {
            final char c = text.charAt(i);
            out.append(Character.isWhitespace(c) ? ' ' : Character.isISOControl(c) || '\ufffd' == c ? '?' : c);
        }
        return out.toString().strip().replaceAll(" {2,}", " ");
    }
}
