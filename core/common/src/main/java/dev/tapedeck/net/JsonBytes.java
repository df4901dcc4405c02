package dev.tapedeck.net;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;

/**
 * Writes JSON fragments straight into a {@link ByteBuf}: escaped string content and ASCII numbers, with no
 * intermediate strings. Escaping follows Python's pydantic/serde JSON output as vLLM sends it: {@code "} and
 * {@code \} escaped, control characters as {@code \n \r \t \b \f} or {@code \}{@code u00XX}, everything else (non-ASCII
 * included) raw UTF-8. Used by the server's responses and the load client's request heads. Stateless; thread safe;
 * allocation-free for byte input.
 */
public final class JsonBytes
{
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private JsonBytes()
    {
    }

    /**
     * Escape {@code length} bytes of UTF-8 text from {@code src} into {@code out}.
     *
     * @param out where to write.
     * @param src the text's bytes.
     * @param offset first byte.
     * @param length bytes to escape.
     */
    public static void writeEscaped(final ByteBuf out, final byte[] src, final int offset, final int length)
    {
        int runStart = offset;
        final int end = offset + length;
        for (int i = offset; i < end; i++)
        {
            final int b = src[i] & 0xff;
            if (b >= 0x20 && b != '"' && b != '\\')
            {
                continue;
            }
            if (i > runStart)
            {
                out.writeBytes(src, runStart, i - runStart);
            }
            out.writeByte('\\');
            switch (b)
            {
                case '"':
                    out.writeByte('"');
                    break;
                case '\\':
                    out.writeByte('\\');
                    break;
                case '\n':
                    out.writeByte('n');
                    break;
                case '\r':
                    out.writeByte('r');
                    break;
                case '\t':
                    out.writeByte('t');
                    break;
                case '\b':
                    out.writeByte('b');
                    break;
                case '\f':
                    out.writeByte('f');
                    break;
                default:
                    out.writeByte('u');
                    out.writeByte('0');
                    out.writeByte('0');
                    out.writeByte(HEX[b >>> 4]);
                    out.writeByte(HEX[b & 0xf]);
            }
            runStart = i + 1;
        }
        if (end > runStart)
        {
            out.writeBytes(src, runStart, end - runStart);
        }
    }

    /**
     * Escape a Java string (control paths: ids, stop strings, error messages).
     *
     * @param out where to write.
     * @param text the text.
     */
    public static void writeEscaped(final ByteBuf out, final String text)
    {
        final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        writeEscaped(out, bytes, 0, bytes.length);
    }

    /**
     * Write a JSON string literal of a Java string (quotes included).
     *
     * @param out where to write.
     * @param text the text.
     */
    public static void writeString(final ByteBuf out, final String text)
    {
        out.writeByte('"');
        writeEscaped(out, text);
        out.writeByte('"');
    }

    /**
     * A JSON string literal of a Java string (quotes included), for responses built as strings on control paths: the
     * same escaping as {@link #writeString}. A lone surrogate becomes {@code ?}, as UTF-8 encoding replaces it.
     *
     * @param text the text, or null.
     * @return the literal, or {@code null} for null.
     */
    public static String quote(final String text)
    {
        if (null == text)
        {
            return "null";
        }
        final ByteBuf out = io.netty.buffer.Unpooled.buffer(text.length() + 8);
        try
        {
            writeString(out, text);
            return out.toString(StandardCharsets.UTF_8);
        }
        finally
        {
            out.release();
        }
    }

    /**
     * Write a non-negative or negative long as ASCII decimal digits, without allocating.
     *
     * @param out where to write.
     * @param value the number.
     */
    public static void writeLong(final ByteBuf out, final long value)
    {
        if (value < 0)
        {
            if (Long.MIN_VALUE == value)
            {
                out.writeCharSequence("-9223372036854775808", StandardCharsets.US_ASCII);
                return;
            }
            out.writeByte('-');
            writeLong(out, -value);
            return;
        }
        if (value < 10)
        {
            out.writeByte('0' + (int)value);
            return;
        }
        long divisor = 1;
        while (value / divisor >= 10)
        {
            divisor *= 10;
        }
        long rest = value;
        while (divisor > 0)
        {
            final int digit = (int)(rest / divisor);
            out.writeByte('0' + digit);
            rest -= digit * divisor;
            divisor /= 10;
        }
    }

    /**
     * @param text a constant.
     * @return its UTF-8 bytes.
     */
    public static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
