package dev.tapedeck.protocol.msgpack;

import static java.nio.ByteOrder.BIG_ENDIAN;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Writes msgpack into a {@link MutableDirectBuffer}: a flyweight, re-{@link #wrap wrapped} for every message, that
 * allocates nothing. Integers take the smallest encoding (as msgpack-java's {@code packLong}); strings are encoded
 * by a hand-written UTF-8 loop straight into the buffer; array, map and string headers can be reserved and patched
 * afterwards ({@link #beginArray()} / {@link #endArray(int, int)}) and still end up in their smallest form.
 * <p>
 * Use an expandable buffer (Agrona's {@code ExpandableDirectByteBuffer}) to grow on demand; a fixed buffer that is too
 * small throws {@link IndexOutOfBoundsException}. <b>Not thread safe.</b>
 * <pre>
 *   writer.wrap(buffer, 0).arrayHeader(2).int64(42).string("req-1");   // 92 2a a5 72 65 71 2d 31
 * </pre>
 */
public final class MsgPackWriter
{
    private static final int RESERVED_CONTAINER_HEADER = 3;

    private MutableDirectBuffer buffer;
    private int offset;
    private int position;

    /**
     * Start writing at {@code offset} of {@code target}.
     *
     * @param target buffer to write into.
     * @param start first byte to write.
     * @return this.
     */
    public MsgPackWriter wrap(final MutableDirectBuffer target, final int start)
    {
        buffer = target;
        offset = start;
        position = start;
        return this;
    }

    /**
     * @return the buffer being written.
     */
    public MutableDirectBuffer buffer()
    {
        return buffer;
    }

    /**
     * @return index of the next byte to write.
     */
    public int position()
    {
        return position;
    }

    /**
     * @return bytes written since {@link #wrap}.
     */
    public int length()
    {
        return position - offset;
    }

    /**
     * @return this, after writing nil.
     */
    public MsgPackWriter nil()
    {
        buffer.putByte(position++, MsgPackCodes.NIL);
        return this;
    }

    /**
     * @param value a boolean.
     * @return this.
     */
    public MsgPackWriter bool(final boolean value)
    {
        buffer.putByte(position++, value ? MsgPackCodes.TRUE : MsgPackCodes.FALSE);
        return this;
    }

    /**
     * A signed integer in its smallest encoding (non-negative values use the unsigned formats, as msgspec does).
     *
     * @param value the value.
     * @return this.
     */
    public MsgPackWriter int64(final long value)
    {
        if (value < -(1L << 5))
        {
            if (value < -(1L << 15))
            {
                if (value < -(1L << 31))
                {
                    putByteAndLong(MsgPackCodes.INT64, value);
                }
                else
                {
                    buffer.putByte(position, MsgPackCodes.INT32);
                    buffer.putInt(position + 1, (int)value, BIG_ENDIAN);
                    position += 5;
                }
            }
            else if (value < -(1L << 7))
            {
                buffer.putByte(position, MsgPackCodes.INT16);
                buffer.putShort(position + 1, (short)value, BIG_ENDIAN);
                position += 3;
            }
            else
            {
                buffer.putByte(position, MsgPackCodes.INT8);
                buffer.putByte(position + 1, (byte)value);
                position += 2;
            }
        }
        else if (value < (1 << 7))
        {
            buffer.putByte(position++, (byte)value);
        }
        else
        {
            unsignedNonFix(value);
        }
        return this;
    }

    /**
     * An unsigned 64-bit integer given as raw bits: values at or above 2^63 (negative as a Java long) are written as
     * uint64, so a {@code call_id} read with {@link MsgPackReader#readUnsignedBits()} goes back bit-exact.
     *
     * @param bits the unsigned value's bits.
     * @return this.
     */
    public MsgPackWriter uint64(final long bits)
    {
        if (bits < 0)
        {
            putByteAndLong(MsgPackCodes.UINT64, bits);
            return this;
        }
        return int64(bits);
    }

    private void unsignedNonFix(final long value)
    {
        if (value < (1L << 8))
        {
            buffer.putByte(position, MsgPackCodes.UINT8);
            buffer.putByte(position + 1, (byte)value);
            position += 2;
        }
        else if (value < (1L << 16))
        {
            buffer.putByte(position, MsgPackCodes.UINT16);
            buffer.putShort(position + 1, (short)value, BIG_ENDIAN);
            position += 3;
        }
        else if (value < (1L << 32))
        {
            buffer.putByte(position, MsgPackCodes.UINT32);
            buffer.putInt(position + 1, (int)value, BIG_ENDIAN);
            position += 5;
        }
        else
        {
            putByteAndLong(MsgPackCodes.UINT64, value);
        }
    }

    private void putByteAndLong(final byte code, final long value)
    {
        buffer.putByte(position, code);
        buffer.putLong(position + 1, value, BIG_ENDIAN);
        position += 9;
    }

    /**
     * @param value a float, written as float32.
     * @return this.
     */
    public MsgPackWriter float32(final float value)
    {
        buffer.putByte(position, MsgPackCodes.FLOAT32);
        buffer.putFloat(position + 1, value, BIG_ENDIAN);
        position += 5;
        return this;
    }

    /**
     * @param value a double, written as float64 (what msgspec writes for every Python float).
     * @return this.
     */
    public MsgPackWriter float64(final double value)
    {
        buffer.putByte(position, MsgPackCodes.FLOAT64);
        buffer.putDouble(position + 1, value, BIG_ENDIAN);
        position += 9;
        return this;
    }

    /**
     * @param count number of elements that follow.
     * @return this.
     */
    public MsgPackWriter arrayHeader(final int count)
    {
        return containerHeader(count, MsgPackCodes.FIXARRAY_PREFIX, MsgPackCodes.ARRAY16, MsgPackCodes.ARRAY32);
    }

    /**
     * @param count number of key/value pairs that follow.
     * @return this.
     */
    public MsgPackWriter mapHeader(final int count)
    {
        return containerHeader(count, MsgPackCodes.FIXMAP_PREFIX, MsgPackCodes.MAP16, MsgPackCodes.MAP32);
    }

    private MsgPackWriter containerHeader(final int count, final int fixPrefix, final byte code16, final byte code32)
    {
        if (count < 0)
        {
            throw new IllegalArgumentException("negative count " + count);
        }
        if (count < 16)
        {
            buffer.putByte(position++, (byte)(fixPrefix | count));
        }
        else if (count < (1 << 16))
        {
            buffer.putByte(position, code16);
            buffer.putShort(position + 1, (short)count, BIG_ENDIAN);
            position += 3;
        }
        else
        {
            buffer.putByte(position, code32);
            buffer.putInt(position + 1, count, BIG_ENDIAN);
            position += 5;
        }
        return this;
    }

    /**
     * Reserve an array header whose element count is known only later.
     *
     * @return a marker to pass to {@link #endArray(int, int)}.
     */
    public int beginArray()
    {
        return reserveContainer();
    }

    /**
     * Patch the array header reserved at {@code marker} with its final count, in its smallest form.
     *
     * @param marker from {@link #beginArray()}.
     * @param count elements written since.
     * @return this.
     */
    public MsgPackWriter endArray(final int marker, final int count)
    {
        return patchContainer(marker, count, MsgPackCodes.FIXARRAY_PREFIX, MsgPackCodes.ARRAY16,
            MsgPackCodes.ARRAY32);
    }

    /**
     * Reserve the one-byte header of an array that will hold fewer than 16 elements: patched in place by
     * {@link #endFixArray}, nothing written after it moves (as {@link #endArray} may move it).
     *
     * @return a marker to pass to {@link #endFixArray(int, int)}.
     */
    public int beginFixArray()
    {
        return position++;
    }

    /**
     * Patch the header reserved by {@link #beginFixArray()}.
     *
     * @param marker from {@link #beginFixArray()}.
     * @param count elements written since, 0 to 15.
     * @return this.
     * @throws IllegalArgumentException when the count does not fit a fixarray.
     */
    public MsgPackWriter endFixArray(final int marker, final int count)
    {
        if (count < 0 || count > 15)
        {
            throw new IllegalArgumentException("a fixarray holds 0 to 15 elements, not " + count);
        }
        buffer.putByte(marker, (byte)(MsgPackCodes.FIXARRAY_PREFIX | count));
        return this;
    }

    /**
     * Reserve a map header whose pair count is known only later.
     *
     * @return a marker to pass to {@link #endMap(int, int)}.
     */
    public int beginMap()
    {
        return reserveContainer();
    }

    /**
     * Patch the map header reserved at {@code marker}.
     *
     * @param marker from {@link #beginMap()}.
     * @param count key/value pairs written since.
     * @return this.
     */
    public MsgPackWriter endMap(final int marker, final int count)
    {
        return patchContainer(marker, count, MsgPackCodes.FIXMAP_PREFIX, MsgPackCodes.MAP16, MsgPackCodes.MAP32);
    }

    private int reserveContainer()
    {
        final int marker = position;
        position += RESERVED_CONTAINER_HEADER;
        return marker;
    }

    private MsgPackWriter patchContainer(final int marker, final int count, final int fixPrefix, final byte code16,
        final byte code32)
    {
        final int payloadStart = marker + RESERVED_CONTAINER_HEADER;
        final int headerLength = count < 16 ? 1 : count < (1 << 16) ? 3 : 5;
        moveTail(payloadStart, marker + headerLength);
        final int end = position;
        position = marker;
        containerHeader(count, fixPrefix, code16, code32);
        position = end;
        return this;
    }

    /**
     * Move the bytes from {@code from} to the current position so they start at {@code to}; the position follows.
     */
    private void moveTail(final int from, final int to)
    {
        if (from == to)
        {
            return;
        }
        final int length = position - from;
        // Agrona copies through Unsafe.copyMemory, which handles overlapping ranges (memmove semantics)
        buffer.putBytes(to, buffer, from, length);
        position = to + length;
    }

    /**
     * A string, UTF-8 encoded by hand into the buffer (unpaired surrogates become {@code ?}), header in its smallest
     * form.
     *
     * @param value the text.
     * @return this.
     */
    public MsgPackWriter string(final CharSequence value)
    {
        final int chars = value.length();
        final long maxBytes = 3L * chars;
        final int reserved = maxBytes < 32 ? 1 : maxBytes < (1 << 8) ? 2 : maxBytes < (1 << 16) ? 3 : 5;
        final int headerAt = position;
        position += reserved;
        final int payloadStart = position;
        for (int i = 0; i < chars; i++)
        {
            final char c = value.charAt(i);
            if (c < 0x80)
            {
                buffer.putByte(position++, (byte)c);
            }
            else if (c < 0x800)
            {
                buffer.putByte(position++, (byte)(0xc0 | (c >> 6)));
                buffer.putByte(position++, (byte)(0x80 | (c & 0x3f)));
            }
            else if (Character.isHighSurrogate(c) && i + 1 < chars && Character.isLowSurrogate(value.charAt(i + 1)))
            {
                final int cp = Character.toCodePoint(c, value.charAt(++i));
                buffer.putByte(position++, (byte)(0xf0 | (cp >> 18)));
                buffer.putByte(position++, (byte)(0x80 | ((cp >> 12) & 0x3f)));
                buffer.putByte(position++, (byte)(0x80 | ((cp >> 6) & 0x3f)));
                buffer.putByte(position++, (byte)(0x80 | (cp & 0x3f)));
            }
            else if (Character.isSurrogate(c))
            {
                buffer.putByte(position++, (byte)'?');
            }
            else
            {
                buffer.putByte(position++, (byte)(0xe0 | (c >> 12)));
                buffer.putByte(position++, (byte)(0x80 | ((c >> 6) & 0x3f)));
                buffer.putByte(position++, (byte)(0x80 | (c & 0x3f)));
            }
        }
        final int length = position - payloadStart;
        final int needed = stringHeaderLength(length);
        moveTail(payloadStart, headerAt + needed);
        final int end = position;
        position = headerAt;
        stringHeader(length);
        position = end;
        return this;
    }

    /**
     * A string from UTF-8 bytes already encoded.
     *
     * @param utf8 the bytes.
     * @param start first byte.
     * @param length byte count.
     * @return this.
     */
    public MsgPackWriter string(final DirectBuffer utf8, final int start, final int length)
    {
        stringHeader(length);
        buffer.putBytes(position, utf8, start, length);
        position += length;
        return this;
    }

    /**
     * A string from UTF-8 bytes already encoded.
     *
     * @param utf8 the bytes.
     * @return this.
     */
    public MsgPackWriter string(final byte[] utf8)
    {
        stringHeader(utf8.length);
        buffer.putBytes(position, utf8);
        position += utf8.length;
        return this;
    }

    /**
     * @param length UTF-8 byte length of the string that follows.
     * @return this.
     */
    public MsgPackWriter stringHeader(final int length)
    {
        if (length < 32)
        {
            buffer.putByte(position++, (byte)(MsgPackCodes.FIXSTR_PREFIX | length));
        }
        else if (length < (1 << 8))
        {
            buffer.putByte(position, MsgPackCodes.STR8);
            buffer.putByte(position + 1, (byte)length);
            position += 2;
        }
        else if (length < (1 << 16))
        {
            buffer.putByte(position, MsgPackCodes.STR16);
            buffer.putShort(position + 1, (short)length, BIG_ENDIAN);
            position += 3;
        }
        else
        {
            buffer.putByte(position, MsgPackCodes.STR32);
            buffer.putInt(position + 1, length, BIG_ENDIAN);
            position += 5;
        }
        return this;
    }

    private static int stringHeaderLength(final int length)
    {
        return length < 32 ? 1 : length < (1 << 8) ? 2 : length < (1 << 16) ? 3 : 5;
    }

    /**
     * @param data bytes.
     * @param start first byte.
     * @param length byte count.
     * @return this.
     */
    public MsgPackWriter binary(final DirectBuffer data, final int start, final int length)
    {
        if (length < (1 << 8))
        {
            buffer.putByte(position, MsgPackCodes.BIN8);
            buffer.putByte(position + 1, (byte)length);
            position += 2;
        }
        else if (length < (1 << 16))
        {
            buffer.putByte(position, MsgPackCodes.BIN16);
            buffer.putShort(position + 1, (short)length, BIG_ENDIAN);
            position += 3;
        }
        else
        {
            buffer.putByte(position, MsgPackCodes.BIN32);
            buffer.putInt(position + 1, length, BIG_ENDIAN);
            position += 5;
        }
        buffer.putBytes(position, data, start, length);
        position += length;
        return this;
    }

    /**
     * An extension value (fixext when the length is 1, 2, 4, 8 or 16).
     *
     * @param type the extension type.
     * @param data payload.
     * @param start first byte.
     * @param length byte count.
     * @return this.
     */
    public MsgPackWriter ext(final byte type, final DirectBuffer data, final int start, final int length)
    {
        switch (length)
        {
            case 1:
                buffer.putByte(position++, MsgPackCodes.FIXEXT1);
                break;
            case 2:
                buffer.putByte(position++, MsgPackCodes.FIXEXT2);
                break;
            case 4:
                buffer.putByte(position++, MsgPackCodes.FIXEXT4);
                break;
            case 8:
                buffer.putByte(position++, MsgPackCodes.FIXEXT8);
                break;
            case 16:
                buffer.putByte(position++, MsgPackCodes.FIXEXT16);
                break;
            default:
                if (length < (1 << 8))
                {
                    buffer.putByte(position, MsgPackCodes.EXT8);
                    buffer.putByte(position + 1, (byte)length);
                    position += 2;
                }
                else if (length < (1 << 16))
                {
                    buffer.putByte(position, MsgPackCodes.EXT16);
                    buffer.putShort(position + 1, (short)length, BIG_ENDIAN);
                    position += 3;
                }
                else
                {
                    buffer.putByte(position, MsgPackCodes.EXT32);
                    buffer.putInt(position + 1, length, BIG_ENDIAN);
                    position += 5;
                }
        }
        buffer.putByte(position++, type);
        buffer.putBytes(position, data, start, length);
        position += length;
        return this;
    }

    /**
     * Copy already-encoded msgpack (a cached value) verbatim.
     *
     * @param encoded the bytes.
     * @return this.
     */
    public MsgPackWriter raw(final byte[] encoded)
    {
        buffer.putBytes(position, encoded);
        position += encoded.length;
        return this;
    }

    /**
     * Copy already-encoded msgpack (a cached value) verbatim.
     *
     * @param encoded the bytes.
     * @param start first byte.
     * @param length byte count.
     * @return this.
     */
    public MsgPackWriter raw(final DirectBuffer encoded, final int start, final int length)
    {
        buffer.putBytes(position, encoded, start, length);
        position += length;
        return this;
    }
}
