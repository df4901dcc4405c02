package dev.tapedeck.protocol.msgpack;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Decodes one msgpack value into plain Java values, for small control-path structures read generically (vLLM's
 * {@code kv_transfer_params}, NIXL handshake payloads): nil is null, booleans {@link Boolean}, integers {@link Long},
 * floats {@link Double}, strings {@link String}, binaries {@code byte[]}, arrays {@link List}, maps {@link Map} in
 * wire order (keys as decoded, usually strings). Extensions are refused. Nesting deeper than {@value #MAX_DEPTH} is
 * refused. Stateless; thread safe.
 */
public final class MsgPackValues
{
    /** Deepest nesting accepted. */
    public static final int MAX_DEPTH = 32;

    private MsgPackValues()
    {
    }

    /**
     * @param bytes exactly one msgpack value.
     * @return its Java value.
     * @throws IllegalArgumentException when the bytes are not one well-formed value of the supported types.
     */
    public static Object decode(final byte[] bytes)
    {
        final MsgPackReader reader = new MsgPackReader().wrap(new UnsafeBuffer(bytes), 0, bytes.length);
        final Object value = read(reader, 0);
        if (!reader.ok())
        {
            throw new IllegalArgumentException("malformed msgpack: " + reader.errorMessage());
        }
        if (reader.hasRemaining())
        {
            throw new IllegalArgumentException("malformed msgpack: " + reader.remaining() + " byte(s) after the value");
        }
        return value;
    }

    private static Object read(final MsgPackReader reader, final int depth)
    {
        if (depth > MAX_DEPTH)
        {
            throw new IllegalArgumentException("msgpack nested deeper than " + MAX_DEPTH);
        }
        switch (reader.nextType())
        {
            case NIL:
                reader.tryReadNil();
                return null;
            case BOOLEAN:
                return reader.readBoolean();
            case INTEGER:
                return reader.readLong();
            case FLOAT:
                return reader.readDouble();
            case STRING:
                return reader.readString();
            case BINARY:
                final int length = reader.readBinaryHeader();
                final byte[] data = new byte[Math.max(0, Math.min(length, reader.remaining()))];
                if (length == data.length)
                {
                    reader.buffer().getBytes(reader.position(), data);
                }
                reader.skipBytes(length);
                return data;
            case ARRAY:
                final int size = reader.readArrayHeader();
                final List<Object> list = new ArrayList<>(Math.min(size, 1024));
                for (int i = 0; i < size && reader.ok(); i++)
                {
                    list.add(read(reader, depth + 1));
                }
                return list;
            case MAP:
                final int entries = reader.readMapHeader();
                final Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < entries && reader.ok(); i++)
                {
                    final Object key = read(reader, depth + 1);
                    map.put(key, read(reader, depth + 1));
                }
                return map;
            case EXTENSION:
                throw new IllegalArgumentException("msgpack extension types are not supported here");
            default:
                throw new IllegalArgumentException("malformed msgpack: " +
                    (reader.ok() ? "input ended before a value" : reader.errorMessage()));
        }
    }
}
