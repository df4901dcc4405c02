package dev.tapedeck.protocol.msgpack;

/**
 * The type of the next msgpack value, as {@link MsgPackReader#nextType()} reports it.
 */
public enum ValueType
{
    /** nil. */
    NIL,
    /** true or false. */
    BOOLEAN,
    /** Any integer format. */
    INTEGER,
    /** float32 or float64. */
    FLOAT,
    /** str. */
    STRING,
    /** bin. */
    BINARY,
    /** array. */
    ARRAY,
    /** map. */
    MAP,
    /** ext or fixext. */
    EXTENSION,
    /** No value: end of input or a malformed byte (see {@link MsgPackReader#error()}). */
    NONE;

    /**
     * @param formatByte the first byte of a value.
     * @return the value's type; {@link #NONE} for 0xc1.
     */
    public static ValueType of(final byte formatByte)
    {
        final int b = formatByte & 0xff;
        if (b <= 0x7f || b >= 0xe0 || (b >= 0xcc && b <= 0xd3))
        {
            return INTEGER;
        }
        if (b <= 0x8f || 0xde == b || 0xdf == b)
        {
            return MAP;
        }
        if (b <= 0x9f || 0xdc == b || 0xdd == b)
        {
            return ARRAY;
        }
        if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb))
        {
            return STRING;
        }
        switch (b)
        {
            case 0xc0:
                return NIL;
            case 0xc2:
            case 0xc3:
                return BOOLEAN;
            case 0xc4:
            case 0xc5:
            case 0xc6:
                return BINARY;
            case 0xca:
            case 0xcb:
                return FLOAT;
            case 0xc1:
                return NONE;
            default:
                return EXTENSION;
        }
    }
}
