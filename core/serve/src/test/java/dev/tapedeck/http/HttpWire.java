package dev.tapedeck.http;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A strict reader of the raw bytes a server wrote: HTTP/1.1 responses one after the other, each with a
 * {@code content-length} body or a chunked one. Chunked bodies keep their chunks, so a test can check the framing;
 * the last response may be incomplete (a stream still running). Anything malformed fails the test.
 */
final class HttpWire
{
    /**
     * One response as it appeared on the wire.
     *
     * @param status the status code.
     * @param headers header names in lower case, to their value.
     * @param body the body (chunked: the payloads joined).
     * @param chunks chunked: the payload of every chunk before the last (empty) one; otherwise null.
     * @param complete true when the whole body arrived (chunked: the last chunk too).
     */
    record Response(int status, Map<String, String> headers, byte[] body, List<byte[]> chunks, boolean complete)
    {
        String header(final String name)
        {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String text()
        {
            return new String(body, StandardCharsets.UTF_8);
        }

        boolean chunked()
        {
            return null != chunks;
        }
    }

    private final byte[] bytes;
    private int position;

    private HttpWire(final byte[] bytes)
    {
        this.bytes = bytes;
    }

    /**
     * @param bytes everything written on one connection so far.
     * @return its responses in order.
     */
    static List<Response> parse(final byte[] bytes)
    {
        final HttpWire wire = new HttpWire(bytes);
        final List<Response> responses = new ArrayList<>();
        while (wire.position < bytes.length)
        {
            responses.add(wire.next());
        }
        return responses;
    }

    private Response next()
    {
        final String statusLine = line();
        if (null == statusLine || !(statusLine.startsWith("HTTP/1.1 ") || statusLine.startsWith("HTTP/1.0 ")))
        {
            throw new AssertionError("not a status line: " + statusLine);
        }
        final int status = Integer.parseInt(statusLine.substring(9, 12));
        final Map<String, String> headers = new LinkedHashMap<>();
        String header;
        while (!(header = requireLine("a header")).isEmpty())
        {
            final int colon = header.indexOf(':');
            if (colon < 1)
            {
                throw new AssertionError("malformed header: " + header);
            }
            final String name = header.substring(0, colon).toLowerCase(Locale.ROOT);
            if (null != headers.put(name, header.substring(colon + 1).trim()))
            {
                throw new AssertionError("header twice: " + name);
            }
        }
        if ("chunked".equals(headers.get("transfer-encoding")))
        {
            if (headers.containsKey("content-length"))
            {
                throw new AssertionError("both content-length and chunked: " + headers);
            }
            return chunkedBody(status, headers);
        }
        // HTTP/1.0 without a length: the body runs to the close
        final int length = statusLine.startsWith("HTTP/1.0 ") && !headers.containsKey("content-length") ?
            bytes.length - position : Integer.parseInt(headers.getOrDefault("content-length", "0"));
        final int available = Math.min(length, bytes.length - position);
        final byte[] body = Arrays.copyOfRange(bytes, position, position + available);
        position += available;
        return new Response(status, headers, body, null, available == length);
    }

    private Response chunkedBody(final int status, final Map<String, String> headers)
    {
        final List<byte[]> chunks = new ArrayList<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (position < bytes.length)
        {
            final String sizeLine = requireLine("a chunk size");
            if (!sizeLine.matches("[0-9a-f]+"))
            {
                throw new AssertionError("bad chunk size line: '" + sizeLine + "'");
            }
            final int size = Integer.parseInt(sizeLine, 16);
            if (position + size + 2 > bytes.length)
            {
                throw new AssertionError("chunk of " + size + " bytes cut short");
            }
            final byte[] payload = Arrays.copyOfRange(bytes, position, position + size);
            position += size;
            if (!requireLine("a chunk's end").isEmpty())
            {
                throw new AssertionError("chunk of " + size + " bytes not followed by CRLF");
            }
            if (0 == size)
            {
                return new Response(status, headers, body.toByteArray(), chunks, true);
            }
            chunks.add(payload);
            body.writeBytes(payload);
        }
        return new Response(status, headers, body.toByteArray(), chunks, false);
    }

    private String requireLine(final String what)
    {
        final String line = line();
        if (null == line)
        {
            throw new AssertionError("the bytes end before " + what);
        }
        return line;
    }

    private String line()
    {
        for (int i = position; i + 1 < bytes.length; i++)
        {
            if ('\r' == bytes[i] && '\n' == bytes[i + 1])
            {
                final String line = new String(bytes, position, i - position, StandardCharsets.ISO_8859_1);
                position = i + 2;
                return line;
            }
        }
        return null;
    }
}
