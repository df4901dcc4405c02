package dev.tapedeck.protocol.msgpack;

/**
 * The msgpack format bytes (https://github.com/msgpack/msgpack/blob/master/spec.md).
 * <pre>
 *   0x00-0x7f positive fixint   0x80-0x8f fixmap   0x90-0x9f fixarray   0xa0-0xbf fixstr
 *   0xc0 nil  0xc2 false  0xc3 true  0xc4-0xc6 bin 8/16/32  0xc7-0xc9 ext 8/16/32  0xca float32  0xcb float64
 *   0xcc-0xcf uint 8/16/32/64  0xd0-0xd3 int 8/16/32/64  0xd4-0xd8 fixext 1/2/4/8/16
 *   0xd9-0xdb str 8/16/32  0xdc-0xdd array 16/32  0xde-0xdf map 16/32  0xe0-0xff negative fixint
 * </pre>
 * 0xc1 is never used.
 */
public final class MsgPackCodes
{
    /** nil. */
    public static final byte NIL = (byte)0xc0;
    /** Never used by the format. */
    public static final byte NEVER_USED = (byte)0xc1;
    /** false. */
    public static final byte FALSE = (byte)0xc2;
    /** true. */
    public static final byte TRUE = (byte)0xc3;
    /** bin 8. */
    public static final byte BIN8 = (byte)0xc4;
    /** bin 16. */
    public static final byte BIN16 = (byte)0xc5;
    /** bin 32. */
    public static final byte BIN32 = (byte)0xc6;
    /** ext 8. */
    public static final byte EXT8 = (byte)0xc7;
    /** ext 16. */
    public static final byte EXT16 = (byte)0xc8;
    /** ext 32. */
    public static final byte EXT32 = (byte)0xc9;
    /** float 32. */
    public static final byte FLOAT32 = (byte)0xca;
    /** float 64. */
    public static final byte FLOAT64 = (byte)0xcb;
    /** uint 8. */
    public static final byte UINT8 = (byte)0xcc;
    /** uint 16. */
    public static final byte UINT16 = (byte)0xcd;
    /** uint 32. */
    public static final byte UINT32 = (byte)0xce;
    /** uint 64. */
    public static final byte UINT64 = (byte)0xcf;
    /** int 8. */
    public static final byte INT8 = (byte)0xd0;
    /** int 16. */
    public static final byte INT16 = (byte)0xd1;
    /** int 32. */
    public static final byte INT32 = (byte)0xd2;
    /** int 64. */
    public static final byte INT64 = (byte)0xd3;
    /** fixext 1. */
    public static final byte FIXEXT1 = (byte)0xd4;
    /** fixext 2. */
    public static final byte FIXEXT2 = (byte)0xd5;
    /** fixext 4. */
    public static final byte FIXEXT4 = (byte)0xd6;
    /** fixext 8. */
    public static final byte FIXEXT8 = (byte)0xd7;
    /** fixext 16. */
    public static final byte FIXEXT16 = (byte)0xd8;
    /** str 8. */
    public static final byte STR8 = (byte)0xd9;
    /** str 16. */
    public static final byte STR16 = (byte)0xda;
    /** str 32. */
    public static final byte STR32 = (byte)0xdb;
    /** array 16. */
    public static final byte ARRAY16 = (byte)0xdc;
    /** array 32. */
    public static final byte ARRAY32 = (byte)0xdd;
    /** map 16. */
    public static final byte MAP16 = (byte)0xde;
    /** map 32. */
    public static final byte MAP32 = (byte)0xdf;
    /** Prefix of fixmap headers (count in the low 4 bits). */
    public static final int FIXMAP_PREFIX = 0x80;
    /** Prefix of fixarray headers (count in the low 4 bits). */
    public static final int FIXARRAY_PREFIX = 0x90;
    /** Prefix of fixstr headers (length in the low 5 bits). */
    public static final int FIXSTR_PREFIX = 0xa0;

    private MsgPackCodes()
    {
    }
}
