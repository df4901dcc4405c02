package dev.tapedeck.protocol.msgpack;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.msgpack.core.MessagePacker;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ImmutableValue;

/**
 * Random msgpack value trees (seeded) and conversions between them, our writer/reader and msgpack-core (the oracle).
 * Values are plain Java objects: null, Boolean, Long (signed) or UnsignedBits (a uint64 beyond Long.MAX_VALUE),
 * Float, Double, String, byte[], Ext, List, Map.
 */
final class Values
{
    /** A uint64 whose value does not fit a signed long: its raw bits. */
    record UnsignedBits(long bits)
    {
    }

    /** An extension value. */
    record Ext(byte type, byte[] data)
    {
        @Override
        public boolean equals(final Object other)
        {
            return other instanceof Ext && ((Ext)other).type == type && Arrays.equals(((Ext)other).data, data);
        }

        @Override
        public int hashCode()
        {
            return type * 31 + Arrays.hashCode(data);
        }
    }

    private static final long[] EDGE_INTEGERS = {
        0, 1, -1, 31, 32, -32, -33, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 65535, 65536,
        Integer.MAX_VALUE, Integer.MIN_VALUE, 4294967295L, 4294967296L, Long.MAX_VALUE, Long.MIN_VALUE,
    };

    private Values()
    {
    }

    static Object random(final Random random, final int depth)
    {
        final int kind = random.nextInt(depth > 3 ? 9 : 11);
        switch (kind)
        {
            case 0:
                return null;
            case 1:
                return random.nextBoolean();
            case 2:
                return random.nextBoolean() ? EDGE_INTEGERS[random.nextInt(EDGE_INTEGERS.length)] :
                    random.nextLong() >> random.nextInt(64);
            case 3:
                return new UnsignedBits(random.nextLong() | Long.MIN_VALUE);
            case 4:
                return random.nextFloat() * (random.nextBoolean() ? 1e6f : -1e-3f);
            case 5:
                return random.nextGaussian() * 1e9;
            case 6:
                return randomString(random);
            case 7:
                final byte[] bytes = new byte[random.nextBoolean() ? random.nextInt(20) : random.nextInt(70_000)];
                random.nextBytes(bytes);
                return bytes;
            case 8:
                final int[] sizes = {1, 2, 4, 8, 16, 3, 300};
                final byte[] data = new byte[sizes[random.nextInt(sizes.length)]];
                random.nextBytes(data);
                return new Ext((byte)random.nextInt(128), data);
            case 9:
                final List<Object> list = new ArrayList<>();
                final int n = random.nextInt(4) == 0 ? 16 + random.nextInt(20) : random.nextInt(6);
                for (int i = 0; i < n; i++)
                {
                    list.add(random(random, depth + 1));
                }
                return list;
            default:
                final Map<Object, Object> map = new LinkedHashMap<>();
                final int pairs = random.nextInt(4) == 0 ? 16 + random.nextInt(10) : random.nextInt(5);
                for (int i = 0; i < pairs; i++)
                {
                    map.put(randomString(random) + i, random(random, depth + 1));
                }
                return map;
        }
    }

    static String randomString(final Random random)
    {
        final String[] pieces = {"a", "req-", "é", "日本", "\uD83D\uDE00", " ", "\"", "\\", "\u0000", "x".repeat(40)};
        final StringBuilder out = new StringBuilder();
        final int n = random.nextInt(3) == 0 ? random.nextInt(200) : random.nextInt(8);
        for (int i = 0; i < n; i++)
        {
            out.append(pieces[random.nextInt(pieces.length)]);
        }
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    static void write(final MsgPackWriter writer, final Object value)
    {
        if (null == value)
        {
            writer.nil();
        }
        else if (value instanceof Boolean)
        {
            writer.bool((Boolean)value);
        }
        else if (value instanceof Long)
        {
            writer.int64((Long)value);
        }
        else if (value instanceof UnsignedBits)
        {
            writer.uint64(((UnsignedBits)value).bits());
        }
        else if (value instanceof Float)
        {
            writer.float32((Float)value);
        }
        else if (value instanceof Double)
        {
            writer.float64((Double)value);
        }
        else if (value instanceof String)
        {
            writer.string((String)value);
        }
        else if (value instanceof byte[])
        {
            final byte[] bytes = (byte[])value;
            writer.binary(new UnsafeBuffer(bytes), 0, bytes.length);
        }
        else if (value instanceof Ext)
        {
            final Ext ext = (Ext)value;
            writer.ext(ext.type(), new UnsafeBuffer(ext.data()), 0, ext.data().length);
        }
        else if (value instanceof List)
        {
            final List<Object> list = (List<Object>)value;
            if (list.size() % 2 == 0)
            {
                writer.arrayHeader(list.size());
                list.forEach(v -> write(writer, v));
            }
            else
            {
                final int marker = writer.beginArray();
                list.forEach(v -> write(writer, v));
                writer.endArray(marker, list.size());
            }
        }
        else
        {
            final Map<Object, Object> map = (Map<Object, Object>)value;
            final int marker = writer.beginMap();
            map.forEach((k, v) ->
            {
                write(writer, k);
                write(writer, v);
            });
            writer.endMap(marker, map.size());
        }
    }

    static Object read(final MsgPackReader reader)
    {
        switch (reader.nextType())
        {
            case NIL:
                reader.tryReadNil();
                return null;
            case BOOLEAN:
                return reader.readBoolean();
            case INTEGER:
                final boolean uint64 = (reader.buffer().getByte(reader.position()) & 0xff) == 0xcf;
                final long bits = reader.readUnsignedBits();
                return uint64 && bits < 0 ? new UnsignedBits(bits) : (Object)bits;
            case FLOAT:
                final boolean single = (reader.buffer().getByte(reader.position()) & 0xff) == 0xca;
                final double d = reader.readDouble();
                return single ? (Object)(float)d : (Object)d;
            case STRING:
                return reader.readString();
            case BINARY:
                final int length = reader.readBinaryHeader();
                final byte[] bytes = new byte[length];
                reader.buffer().getBytes(reader.position(), bytes);
                reader.skipBytes(length);
                return bytes;
            case EXTENSION:
                final int extLength = reader.readExtHeader();
                final byte[] data = new byte[extLength];
                reader.buffer().getBytes(reader.position(), data);
                reader.skipBytes(extLength);
                return new Ext(reader.extType(), data);
            case ARRAY:
                final int n = reader.readArrayHeader();
                final List<Object> list = new ArrayList<>();
                for (int i = 0; i < n; i++)
                {
                    list.add(read(reader));
                }
                return list;
            case MAP:
                final int pairs = reader.readMapHeader();
                final Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < pairs; i++)
                {
                    map.put(read(reader), read(reader));
                }
                return map;
            default:
                throw new AssertionError("unreadable: " + reader.errorMessage());
        }
    }

    @SuppressWarnings("unchecked")
    static void pack(final MessagePacker packer, final Object value) throws IOException
    {
        if (null == value)
        {
            packer.packNil();
        }
        else if (value instanceof Boolean)
        {
            packer.packBoolean((Boolean)value);
        }
        else if (value instanceof Long)
        {
            packer.packLong((Long)value);
        }
        else if (value instanceof UnsignedBits)
        {
            packer.packBigInteger(new java.math.BigInteger(Long.toUnsignedString(((UnsignedBits)value).bits())));
        }
        else if (value instanceof Float)
        {
            packer.packFloat((Float)value);
        }
        else if (value instanceof Double)
        {
            packer.packDouble((Double)value);
        }
        else if (value instanceof String)
        {
            packer.packString((String)value);
        }
        else if (value instanceof byte[])
        {
            packer.packBinaryHeader(((byte[])value).length).writePayload((byte[])value);
        }
        else if (value instanceof Ext)
        {
            packer.packExtensionTypeHeader(((Ext)value).type(), ((Ext)value).data().length)
                .writePayload(((Ext)value).data());
        }
        else if (value instanceof List)
        {
            packer.packArrayHeader(((List<Object>)value).size());
            for (final Object v : (List<Object>)value)
            {
                pack(packer, v);
            }
        }
        else
        {
            packer.packMapHeader(((Map<Object, Object>)value).size());
            for (final Map.Entry<Object, Object> e : ((Map<Object, Object>)value).entrySet())
            {
                pack(packer, e.getKey());
                pack(packer, e.getValue());
            }
        }
    }

    static byte[] packWithOracle(final Object value)
    {
        try (org.msgpack.core.MessageBufferPacker packer = org.msgpack.core.MessagePack.newDefaultBufferPacker())
        {
            pack(packer, value);
            return packer.toByteArray();
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
    }

    static ImmutableValue unpackWithOracle(final byte[] bytes)
    {
        try (MessageUnpacker unpacker = org.msgpack.core.MessagePack.newDefaultUnpacker(bytes))
        {
            final ImmutableValue value = unpacker.unpackValue();
            if (unpacker.hasNext())
            {
                throw new AssertionError("trailing bytes after the value");
            }
            return value;
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
    }
}
