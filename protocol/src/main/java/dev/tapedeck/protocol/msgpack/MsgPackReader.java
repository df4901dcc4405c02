package dev.tapedeck.protocol.msgpack;

import org.agrona.DirectBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Reads msgpack from a {@link DirectBuffer}: a flyweight, re-{@link #wrap wrapped} for every message.
 * <p>
 * Malformed input never throws: every read is bounds-checked, and the first problem (truncation, a value of the
 * wrong type, a length beyond the input, the unused byte 0xc1) sets {@link #error()}; from then on every read returns
 * its sentinel without moving, so a decoder can read on and check once. {@link #skipValue()} walks nested values with
 * a counter, not recursion (no stack to overflow), and every value it passes consumes input, so it terminates on any
 * input. Reading numbers and headers allocates nothing; {@link #readString()} allocates the string.
 * <b>Not thread safe.</b>
 */
public final class MsgPackReader
{
    /** No error. */
    public static final int OK = 0;
    /** The input ended inside a value. */
    public static final int TRUNCATED = 1;
    /** The value has another type than the one asked for. */
    public static final int WRONG_TYPE = 2;
    /** The byte 0xc1, which msgpack never uses. */
    public static final int INVALID_FORMAT = 3;
    /** An integer that does not fit the asked Java type. */
    public static final int OVERFLOW = 4;

    private DirectBuffer buffer;
    private int position;
    private int limit;
    private int error;
    private int errorPosition;
    private boolean lastWasLargeUnsigned;
    private byte extType;

    /**
     * @param source the input.
     * @param offset first byte.
     * @param length bytes of input.
     * @return this, with the error cleared.
     */
    public MsgPackReader wrap(final DirectBuffer source, final int offset, final int length)
    {
        buffer = source;
        position = offset;
        limit = offset + length;
        error = OK;
        errorPosition = -1;
        return this;
    }

    /**
     * @return the first error, or {@link #OK}.
     */
    public int error()
    {
        return error;
    }

    /**
     * @return true while no error occurred.
     */
    public boolean ok()
    {
        return OK == error;
    }

    /**
     * @return a description of the first error and where it happened.
     */
    public String errorMessage()
    {
        final String what;
        switch (error)
        {
            case OK:
                return "no error";
            case TRUNCATED:
                what = "input ends inside a value";
                break;
            case WRONG_TYPE:
                what = "unexpected value type";
                break;
            case INVALID_FORMAT:
                what = "invalid format byte 0xc1";
                break;
            case OVERFLOW:
                what = "integer out of range";
                break;
            default:
                what = "error " + error;
        }
        return what + " at byte " + errorPosition;
    }

    /**
     * @return index of the next byte to read.
     */
    public int position()
    {
        return position;
    }

    /**
     * Go back (or forward) to a position inside the input, e.g. after looking ahead; an error stays.
     *
     * @param index a byte index between the wrapped offset and the end of the input.
     */
    public void seek(final int index)
    {
        if (index < 0 || index > limit)
        {
            throw new IndexOutOfBoundsException("seek to " + index + " outside the input");
        }
        position = index;
    }

    /**
     * @return true when input remains and no error occurred.
     */
    public boolean hasRemaining()
    {
        return OK == error && position < limit;
    }

    /**
     * @return bytes left before the limit.
     */
    public int remaining()
    {
        return limit - position;
    }

    private int fail(final int code)
    {
        if (OK == error)
        {
            error = code;
            errorPosition = position;
        }
        return -1;
    }

    private boolean available(final int bytes)
    {
        if (OK != error)
        {
            return false;
        }
        if (limit - position < bytes)
        {
            fail(TRUNCATED);
            return false;
        }
        return true;
    }

    /**
     * @return the type of the next value, without consuming it; {@link ValueType#NONE} at the end or after an error.
     */
    public ValueType nextType()
    {
        if (OK != error || position >= limit)
        {
            return ValueType.NONE;
        }
        return ValueType.of(buffer.getByte(position));
    }

    /**
     * Consume a nil if one comes next.
     *
     * @return true if a nil was consumed.
     */
    public boolean tryReadNil()
    {
        if (available(1) && MsgPackCodes.NIL == buffer.getByte(position))
        {
            position++;
            return true;
        }
        return false;
    }

    /**
     * @return the boolean, or false with {@link #WRONG_TYPE}.
     */
    public boolean readBoolean()
    {
        if (!available(1))
        {
            return false;
        }
        final byte b = buffer.getByte(position);
        if (MsgPackCodes.TRUE == b || MsgPackCodes.FALSE == b)
        {
            position++;
            return MsgPackCodes.TRUE == b;
        }
        fail(WRONG_TYPE);
        return false;
    }

    /**
     * @return any integer as a signed long; a uint64 above {@link Long#MAX_VALUE} sets {@link #OVERFLOW}.
     */
    public long readLong()
    {
        final long bits = readIntegerBits();
        if (OK == error && lastWasLargeUnsigned && bits < 0)
        {
            fail(OVERFLOW);
            return 0;
        }
        return bits;
    }

    /**
     * @return any integer as the bits of an unsigned 64-bit value (a uint64 call id round-trips exactly).
     */
    public long readUnsignedBits()
    {
        return readIntegerBits();
    }

    /**
     * @return an integer that fits an int, or 0 with {@link #OVERFLOW}.
     */
    public int readInt()
    {
        final long value = readLong();
        if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)
        {
            fail(OVERFLOW);
            return 0;
        }
        return (int)value;
    }

    private long readIntegerBits()
    {
        lastWasLargeUnsigned = false;
        if (!available(1))
        {
            return 0;
        }
        final int b = buffer.getByte(position) & 0xff;
        if (b <= 0x7f)
        {
            position++;
            return b;
        }
        if (b >= 0xe0)
        {
            position++;
            return (byte)b;
        }
        switch (b)
        {
            case 0xcc:
                return available(2) ? buffer.getByte(advance(2) + 1) & 0xffL : 0;
            case 0xcd:
                return available(3) ? buffer.getShort(advance(3) + 1, BIG_ENDIAN) & 0xffffL : 0;
            case 0xce:
                return available(5) ? buffer.getInt(advance(5) + 1, BIG_ENDIAN) & 0xffffffffL : 0;
            case 0xcf:
                lastWasLargeUnsigned = true;
                return available(9) ? buffer.getLong(advance(9) + 1, BIG_ENDIAN) : 0;
            case 0xd0:
                return available(2) ? buffer.getByte(advance(2) + 1) : 0;
            case 0xd1:
                return available(3) ? buffer.getShort(advance(3) + 1, BIG_ENDIAN) : 0;
            case 0xd2:
                return available(5) ? buffer.getInt(advance(5) + 1, BIG_ENDIAN) : 0;
            case 0xd3:
                return available(9) ? buffer.getLong(advance(9) + 1, BIG_ENDIAN) : 0;
            default:
                fail(WRONG_TYPE);
                return 0;
        }
    }

    private int advance(final int bytes)
    {
        final int start = position;
        position += bytes;
        return start;
    }

    /**
     * @return a float32 or float64 value; an integer is accepted and converted (Python ints where floats belong).
     */
    public double readDouble()
    {
        if (!available(1))
        {
            return 0.0;
        }
        final byte b = buffer.getByte(position);
        if (MsgPackCodes.FLOAT64 == b)
        {
            return available(9) ? buffer.getDouble(advance(9) + 1, BIG_ENDIAN) : 0.0;
        }
        if (MsgPackCodes.FLOAT32 == b)
        {
            return available(5) ? buffer.getFloat(advance(5) + 1, BIG_ENDIAN) : 0.0;
        }
        if (ValueType.INTEGER == nextType())
        {
            return readLong();
        }
        fail(WRONG_TYPE);
        return 0.0;
    }

    /**
     * @return the element count of the array that follows, or -1 on error.
     */
    public int readArrayHeader()
    {
        return readContainerHeader(0x90, MsgPackCodes.ARRAY16, MsgPackCodes.ARRAY32);
    }

    /**
     * @return the pair count of the map that follows, or -1 on error.
     */
    public int readMapHeader()
    {
        return readContainerHeader(0x80, MsgPackCodes.MAP16, MsgPackCodes.MAP32);
    }

    private int readContainerHeader(final int fixPrefix, final byte code16, final byte code32)
    {
        if (!available(1))
        {
            return -1;
        }
        final byte b = buffer.getByte(position);
        final int count;
        if ((b & 0xf0) == fixPrefix)
        {
            position++;
            count = b & 0x0f;
        }
        else if (code16 == b)
        {
            if (!available(3))
            {
                return -1;
            }
            count = buffer.getShort(advance(3) + 1, BIG_ENDIAN) & 0xffff;
        }
        else if (code32 == b)
        {
            if (!available(5))
            {
                return -1;
            }
            count = buffer.getInt(advance(5) + 1, BIG_ENDIAN);
        }
        else
        {
            return fail(WRONG_TYPE);
        }
        // every element takes at least one byte: a count beyond the input is a truncation, caught now
        if (count < 0 || count > limit - position)
        {
            return fail(TRUNCATED);
        }
        return count;
    }

    /**
     * Read a string header; the UTF-8 bytes follow at {@link #position()} and must be consumed with
     * {@link #skipBytes(int)} or read with {@link #readString()} instead.
     *
     * @return the byte length, or -1 on error.
     */
    public int readStringHeader()
    {
        if (!available(1))
        {
            return -1;
        }
        final int b = buffer.getByte(position) & 0xff;
        final int length;
        if ((b & 0xe0) == 0xa0)
        {
            position++;
            length = b & 0x1f;
        }
        else if (0xd9 == b)
        {
            if (!available(2))
            {
                return -1;
            }
            length = buffer.getByte(advance(2) + 1) & 0xff;
        }
        else if (0xda == b)
        {
            if (!available(3))
            {
                return -1;
            }
            length = buffer.getShort(advance(3) + 1, BIG_ENDIAN) & 0xffff;
        }
        else if (0xdb == b)
        {
            if (!available(5))
            {
                return -1;
            }
            length = buffer.getInt(advance(5) + 1, BIG_ENDIAN);
        }
        else
        {
            return fail(WRONG_TYPE);
        }
        if (length < 0 || length > limit - position)
        {
            return fail(TRUNCATED);
        }
        return length;
    }

    /**
     * @return the string (allocated), or null on error.
     */
    public String readString()
    {
        final int length = readStringHeader();
        if (length < 0)
        {
            return null;
        }
        final String value = buffer.getStringWithoutLengthUtf8(position, length);
        position += length;
        return value;
    }

    /**
     * Compare the next string with ASCII bytes, consuming it: allocation-free key matching.
     *
     * @param ascii the expected bytes.
     * @return true if the next value is that string.
     */
    public boolean readStringEquals(final byte[] ascii)
    {
        final int length = readStringHeader();
        if (length < 0)
        {
            return false;
        }
        boolean equal = length == ascii.length;
        for (int i = 0; equal && i < length; i++)
        {
            equal = buffer.getByte(position + i) == ascii[i];
        }
        position += length;
        return equal;
    }

    /**
     * @return the byte length of the binary that follows (bytes at {@link #position()}), or -1 on error.
     */
    public int readBinaryHeader()
    {
        if (!available(1))
        {
            return -1;
        }
        final byte b = buffer.getByte(position);
        final int headerLength = MsgPackCodes.BIN8 == b ? 2 : MsgPackCodes.BIN16 == b ? 3 :
            MsgPackCodes.BIN32 == b ? 5 : 0;
        if (0 == headerLength)
        {
            return fail(WRONG_TYPE);
        }
        if (!available(headerLength))
        {
            return -1;
        }
        final int start = advance(headerLength) + 1;
        final int length = 2 == headerLength ? buffer.getByte(start) & 0xff :
            3 == headerLength ? buffer.getShort(start, BIG_ENDIAN) & 0xffff : buffer.getInt(start, BIG_ENDIAN);
        if (length < 0 || length > limit - position)
        {
            return fail(TRUNCATED);
        }
        return length;
    }

    /**
     * Move past {@code bytes} bytes of a payload (string, binary, extension data).
     *
     * @param bytes count.
     */
    public void skipBytes(final int bytes)
    {
        if (available(bytes))
        {
            position += bytes;
        }
    }

    /**
     * Move past one complete value of any type, nested values included.
     */
    public void skipValue()
    {
        long pending = 1;
        while (pending > 0 && OK == error)
        {
            pending--;
            if (!available(1))
            {
                return;
            }
            final int b = buffer.getByte(position) & 0xff;
            if (b <= 0x7f || b >= 0xe0 || 0xc0 == b || 0xc2 == b || 0xc3 == b)
            {
                position++;
                continue;
            }
            if (b <= 0x8f || b == 0xde || b == 0xdf)
            {
                final int pairs = readMapHeader();
                pending += 2L * Math.max(pairs, 0);
            }
            else if (b <= 0x9f || b == 0xdc || b == 0xdd)
            {
                pending += Math.max(readArrayHeader(), 0);
            }
            else if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb))
            {
                skipBytes(Math.max(readStringHeader(), 0));
            }
            else
            {
                skipScalar(b);
            }
        }
    }

    private void skipScalar(final int b)
    {
        switch (b)
        {
            case 0xc4:
            case 0xc5:
            case 0xc6:
                skipBytes(Math.max(readBinaryHeader(), 0));
                return;
            case 0xc7:
            case 0xc8:
            case 0xc9:
                final int extLength = readExtHeaderLength();
                skipBytes(Math.max(extLength, 0) + (extLength >= 0 ? 1 : 0));
                return;
            case 0xca:
            case 0xce:
            case 0xd2:
            case 0xd6:
                skipBytes(0xd6 == b ? 6 : 5);
                return;
            case 0xcb:
            case 0xcf:
            case 0xd3:
                skipBytes(9);
                return;
            case 0xcc:
            case 0xd0:
                skipBytes(2);
                return;
            case 0xcd:
            case 0xd1:
                skipBytes(3);
                return;
            case 0xd4:
                skipBytes(3);
                return;
            case 0xd5:
                skipBytes(4);
                return;
            case 0xd7:
                skipBytes(10);
                return;
            case 0xd8:
                skipBytes(18);
                return;
            default:
                fail(INVALID_FORMAT);
        }
    }

    /**
     * Read an ext8/16/32 header's length (the type byte and the data follow).
     */
    private int readExtHeaderLength()
    {
        final int b = buffer.getByte(position) & 0xff;
        if (0xc7 == b && available(2))
        {
            return buffer.getByte(advance(2) + 1) & 0xff;
        }
        if (0xc8 == b && available(3))
        {
            return buffer.getShort(advance(3) + 1, BIG_ENDIAN) & 0xffff;
        }
        if (0xc9 == b && available(5))
        {
            final int length = buffer.getInt(advance(5) + 1, BIG_ENDIAN);
            return length < 0 ? fail(TRUNCATED) : length;
        }
        return -1;
    }

    /**
     * Read an extension header of any form.
     *
     * @return the data length (the type is then at {@link #extType()}, the data at {@link #position()}), or -1.
     */
    public int readExtHeader()
    {
        if (!available(1))
        {
            return -1;
        }
        final int b = buffer.getByte(position) & 0xff;
        final int length;
        switch (b)
        {
            case 0xd4:
                length = 1;
                position++;
                break;
            case 0xd5:
                length = 2;
                position++;
                break;
            case 0xd6:
                length = 4;
                position++;
                break;
            case 0xd7:
                length = 8;
                position++;
                break;
            case 0xd8:
                length = 16;
                position++;
                break;
            case 0xc7:
            case 0xc8:
            case 0xc9:
                length = readExtHeaderLength();
                break;
            default:
                return fail(WRONG_TYPE);
        }
        if (length < 0 || !available(length + 1))
        {
            return -1;
        }
        extType = buffer.getByte(position++);
        return length;
    }

    /**
     * @return the type of the extension whose header was read last.
     */
    public byte extType()
    {
        return extType;
    }

    /**
     * @return the input buffer (payload bytes of strings, binaries and extensions are read from it).
     */
    public DirectBuffer buffer()
    {
        return buffer;
    }
}
