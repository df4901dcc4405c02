package dev.tapedeck.record;

import java.math.BigInteger;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.agrona.concurrent.UnsafeBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * Turns one msgpack value into a Jackson tree, for the control-path messages the tap reads generically (HELLO,
 * READY, the registration payload, {@code SchedulerStats}): maps become objects (non-string keys by their text),
 * arrays become arrays, a uint64 above {@link Long#MAX_VALUE} a big integer, binaries base64 text and extensions
 * {@code {"ext_type": t, "data_hex": "..."}}. Nesting deeper than {@value #MAX_DEPTH} is refused.
 * Stateless; thread safe.
 */
public final class MsgPackTree
{
    /** Deepest nesting accepted. */
    public static final int MAX_DEPTH = 64;

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final int UINT64 = 0xcf;

    private MsgPackTree()
    {
    }

    /**
     * @param bytes a complete msgpack value.
     * @return its tree.
     * @throws IllegalArgumentException when the bytes are not one well-formed value.
     */
    public static JsonNode of(final byte[] bytes)
    {
        final MsgPackReader reader = new MsgPackReader().wrap(new UnsafeBuffer(bytes), 0, bytes.length);
        final JsonNode node = read(reader);
        if (!reader.ok())
        {
            throw new IllegalArgumentException("not msgpack: " + reader.errorMessage());
        }
        return node;
    }

    /**
     * Read the next value.
     *
     * @param reader positioned at a value; moved past it.
     * @return the tree, or null with the reader's error set when the value is malformed.
     */
    public static JsonNode read(final MsgPackReader reader)
    {
        return read(reader, 0);
    }

    private static JsonNode read(final MsgPackReader reader, final int depth)
    {
        if (depth > MAX_DEPTH)
        {
            throw new IllegalArgumentException("msgpack nested deeper than " + MAX_DEPTH);
        }
        final ValueType type = reader.nextType();
        switch (type)
        {
            case NIL:
                reader.tryReadNil();
                return NODES.nullNode();
            case BOOLEAN:
                return NODES.booleanNode(reader.readBoolean());
            case INTEGER:
                return readInteger(reader);
            case FLOAT:
                return NODES.numberNode(reader.readDouble());
            case STRING:
                return NODES.textNode(reader.readString());
            case BINARY:
                return readBinary(reader);
            case ARRAY:
                return readArray(reader, depth);
            case MAP:
                return readMap(reader, depth);
            case EXTENSION:
                return readExtension(reader);
            default:
                if (reader.ok())
                {
                    // an invalid format byte or the end of input: make the reader report it
                    reader.skipValue();
                }
                return null;
        }
    }

    private static JsonNode readInteger(final MsgPackReader reader)
    {
        final boolean uint64 = UINT64 == (reader.buffer().getByte(reader.position()) & 0xff);
        final long bits = reader.readUnsignedBits();
        if (uint64 && bits < 0)
        {
            return NODES.numberNode(new BigInteger(Long.toUnsignedString(bits)));
        }
        return NODES.numberNode(bits);
    }

    private static JsonNode readBinary(final MsgPackReader reader)
    {
        final int length = reader.readBinaryHeader();
        if (length < 0)
        {
            return null;
        }
        final byte[] data = new byte[length];
        reader.buffer().getBytes(reader.position(), data);
        reader.skipBytes(length);
        return NODES.binaryNode(data);
    }

    private static JsonNode readExtension(final MsgPackReader reader)
    {
        final int length = reader.readExtHeader();
        if (length < 0)
        {
            return null;
        }
        final byte[] data = new byte[length];
        reader.buffer().getBytes(reader.position(), data);
        reader.skipBytes(length);
        final ObjectNode node = NODES.objectNode();
        node.put("ext_type", reader.extType());
        node.put("data_hex", HexFormat.of().formatHex(data));
        return node;
    }

    private static JsonNode readArray(final MsgPackReader reader, final int depth)
    {
        final int count = reader.readArrayHeader();
        final ArrayNode array = NODES.arrayNode();
        for (int i = 0; i < count && reader.ok(); i++)
        {
            final JsonNode element = read(reader, depth + 1);
            if (null == element)
            {
                return null;
            }
            array.add(element);
        }
        return reader.ok() ? array : null;
    }

    private static JsonNode readMap(final MsgPackReader reader, final int depth)
    {
        final int pairs = reader.readMapHeader();
        final ObjectNode object = NODES.objectNode();
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            final JsonNode key = read(reader, depth + 1);
            final JsonNode value = null == key ? null : read(reader, depth + 1);
            if (null == value)
            {
                return null;
            }
            object.set(key.isTextual() ? key.textValue() : key.toString(), value);
        }
        return reader.ok() ? object : null;
    }
}
