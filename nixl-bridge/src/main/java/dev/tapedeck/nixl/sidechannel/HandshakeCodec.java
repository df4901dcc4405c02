package dev.tapedeck.nixl.sidechannel;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import dev.tapedeck.nixl.KvTransferException;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * The msgpack of vLLM's NixlConnector side channel, as msgspec writes and reads it (vLLM @002a1057):
 * <ul>
 * <li>request: the tuple {@code (GET_META_MSG, tp_rank)}, i.e. a 2-array of the <b>bin</b> {@code b"get_meta_msg"}
 * (a Python {@code bytes}) and an int; tapedeck's extension {@code (b"tapedeck_notif", "<req id>:<world size>",
 * delivery id)} carries a done-notification (a str) and the int64 its sender picked for it, the same in every resend
 * of it, so the receiver can take it once (a 2-array without the id is accepted too). A str tag is accepted too.</li>
 * <li>reply: {@code NixlHandshakePayload} as a map {@code {"compatibility_hash": str, "agent_metadata_bytes": bin}},
 * the bin being the msgpack map of {@link NixlAgentMetadata}.</li>
 * </ul>
 * Decoders reject truncated or malformed input, and trailing bytes (as msgspec does), with a
 * {@link KvTransferException} saying what and where.
 * <p>
 * Stateless; thread safe.
 */
public final class HandshakeCodec
{
    /** vLLM's {@code GET_META_MSG}. */
    public static final String GET_META_MSG = "get_meta_msg";
    /** tapedeck's side-channel notification request tag. */
    public static final String TAPEDECK_NOTIF = "tapedeck_notif";

    private static final List<String> METADATA_KEYS = List.of("engine_id", "agent_metadata", "kv_caches_base_addr",
        "device_id", "num_blocks", "block_lens", "kv_cache_layout", "block_size", "plane", "kvb_version");
    private static final int REQUIRED_METADATA_KEYS = 8;

    private HandshakeCodec()
    {
    }

    /**
     * A decoded side-channel request.
     *
     * @param tag {@link #GET_META_MSG}, {@link #TAPEDECK_NOTIF} or whatever else the peer sent.
     * @param tpRank the asked tensor-parallel rank ({@link #GET_META_MSG}), else -1.
     * @param notification the notification ({@link #TAPEDECK_NOTIF}), else null.
     * @param deliveryId the notification's delivery id, or 0 when the sender gave none.
     */
    public record Request(String tag, int tpRank, String notification, long deliveryId)
    {
    }

    /**
     * @param tpRank the remote rank whose metadata is wanted.
     * @return msgpack of {@code (b"get_meta_msg", tpRank)}, byte for byte what vLLM's decode sends.
     */
    public static byte[] encodeGetMeta(final int tpRank)
    {
        final MsgPackWriter writer = writer();
        writer.arrayHeader(2);
        binary(writer, GET_META_MSG.getBytes(StandardCharsets.US_ASCII));
        writer.int64(tpRank);
        return bytes(writer);
    }

    /**
     * @param notification e.g. {@code "<remote_request_id>:1"}.
     * @param deliveryId picked by the sender for this notification, non-zero, the same when it is sent again.
     * @return msgpack of {@code (b"tapedeck_notif", notification, deliveryId)}.
     */
    public static byte[] encodeNotif(final String notification, final long deliveryId)
    {
        final MsgPackWriter writer = writer();
        writer.arrayHeader(3);
        binary(writer, TAPEDECK_NOTIF.getBytes(StandardCharsets.US_ASCII));
        writer.string(notification);
        writer.int64(deliveryId);
        return bytes(writer);
    }

    /**
     * @param message a request frame.
     * @return the request.
     * @throws KvTransferException when it is not a 2-array of a tag and an int or str, or a 3-array of a tag, a str
     *     and an int.
     */
    public static Request decodeRequest(final byte[] message)
    {
        final MsgPackReader reader = reader(message);
        final int elements = reader.readArrayHeader();
        if (elements != 2 && elements != 3)
        {
            throw malformed("side-channel request", reader, "expected a 2- or 3-element array");
        }
        final String tag = ValueType.BINARY == reader.nextType() ? readBinaryString(reader) : reader.readString();
        int tpRank = -1;
        String notification = null;
        long deliveryId = 0;
        if (ValueType.STRING == reader.nextType())
        {
            notification = reader.readString();
            if (3 == elements)
            {
                deliveryId = reader.readLong();
            }
        }
        else if (3 == elements)
        {
            throw malformed("side-channel request", reader, "a 3-element request must carry a notification str");
        }
        else
        {
            tpRank = reader.readInt();
        }
        finish(reader, "side-channel request");
        return new Request(tag, tpRank, notification, deliveryId);
    }

    /**
     * @param compatibilityHash this engine's {@link CompatibilityHash}.
     * @param metadata this engine's agent metadata.
     * @return msgpack of {@code NixlHandshakePayload{compatibility_hash, agent_metadata_bytes}}.
     */
    public static byte[] encodePayload(final String compatibilityHash, final NixlAgentMetadata metadata)
    {
        final byte[] metadataBytes = encodeMetadata(metadata);
        final MsgPackWriter writer = writer();
        writer.mapHeader(2);
        writer.string("compatibility_hash").string(compatibilityHash);
        writer.string("agent_metadata_bytes");
        binary(writer, metadataBytes);
        return bytes(writer);
    }

    /**
     * Decode a handshake reply, first phase: the hash and the still-encoded metadata (vLLM checks the hash before it
     * decodes the metadata).
     *
     * @param message the reply frame.
     * @return {@code [hash as UTF-8, metadata bytes]}.
     * @throws KvTransferException on malformed input or a missing key.
     */
    public static byte[][] decodePayload(final byte[] message)
    {
        final MsgPackReader reader = reader(message);
        final int pairs = reader.readMapHeader();
        if (pairs < 0)
        {
            throw malformed("NixlHandshakePayload", reader, "expected a map");
        }
        byte[] hash = null;
        byte[] metadata = null;
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            final String key = reader.readString();
            if ("compatibility_hash".equals(key))
            {
                final String value = reader.readString();
                hash = null == value ? null : value.getBytes(StandardCharsets.UTF_8);
            }
            else if ("agent_metadata_bytes".equals(key))
            {
                metadata = readBinary(reader);
            }
            else
            {
                reader.skipValue();
            }
        }
        finish(reader, "NixlHandshakePayload");
        if (null == hash || null == metadata)
        {
            throw new KvTransferException("malformed NixlHandshakePayload: missing " +
                (null == hash ? "compatibility_hash" : "agent_metadata_bytes"));
        }
        return new byte[][] {hash, metadata};
    }

    /**
     * @param metadata the metadata.
     * @return its msgpack map, vLLM's keys in vLLM's order, then {@code plane} and {@code kvb_version} when set.
     */
    public static byte[] encodeMetadata(final NixlAgentMetadata metadata)
    {
        final MsgPackWriter writer = writer();
        final boolean extras = null != metadata.plane();
        writer.mapHeader(extras ? 10 : 8);
        writer.string("engine_id").string(metadata.engineId());
        writer.string("agent_metadata");
        binary(writer, metadata.agentMetadata());
        writer.string("kv_caches_base_addr");
        longs(writer, metadata.kvCachesBaseAddr());
        writer.string("device_id").int64(metadata.deviceId());
        writer.string("num_blocks").int64(metadata.numBlocks());
        writer.string("block_lens");
        longs(writer, metadata.blockLens());
        writer.string("kv_cache_layout").string(metadata.kvCacheLayout());
        writer.string("block_size").int64(metadata.blockSize());
        if (extras)
        {
            writer.string("plane").string(metadata.plane());
            writer.string("kvb_version").int64(metadata.kvbVersion());
        }
        return bytes(writer);
    }

    /**
     * @param message the msgpack map of a {@code NixlAgentMetadata}.
     * @return the metadata; {@code plane} null and {@code kvb_version} 0 when absent (a vLLM peer).
     * @throws KvTransferException on malformed input or a missing vLLM key.
     */
    public static NixlAgentMetadata decodeMetadata(final byte[] message)
    {
        final MsgPackReader reader = reader(message);
        final int pairs = reader.readMapHeader();
        if (pairs < 0)
        {
            throw malformed("NixlAgentMetadata", reader, "expected a map");
        }
        final Object[] values = new Object[METADATA_KEYS.size()];
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            final String key = reader.readString();
            final int index = null == key ? -1 : METADATA_KEYS.indexOf(key);
            switch (index)
            {
                case 0, 6, 8 -> values[index] = reader.readString();
                case 1 -> values[index] = readBinary(reader);
                case 2, 5 -> values[index] = readLongs(reader);
                case 3, 4, 7, 9 -> values[index] = reader.readInt();
                default -> reader.skipValue();
            }
        }
        finish(reader, "NixlAgentMetadata");
        for (int i = 0; i < REQUIRED_METADATA_KEYS; i++)
        {
            if (null == values[i])
            {
                throw new KvTransferException("malformed NixlAgentMetadata: missing " + METADATA_KEYS.get(i));
            }
        }
        @SuppressWarnings("unchecked")
        final List<Long> baseAddr = (List<Long>)values[2];
        @SuppressWarnings("unchecked")
        final List<Long> blockLens = (List<Long>)values[5];
        return new NixlAgentMetadata((String)values[0], (byte[])values[1], baseAddr, (Integer)values[3],
            (Integer)values[4], blockLens, (String)values[6], (Integer)values[7], (String)values[8],
            null == values[9] ? 0 : (Integer)values[9]);
    }

    private static MsgPackWriter writer()
    {
        return new MsgPackWriter().wrap(new ExpandableArrayBuffer(256), 0);
    }

    private static byte[] bytes(final MsgPackWriter writer)
    {
        final byte[] out = new byte[writer.length()];
        writer.buffer().getBytes(0, out);
        return out;
    }

    private static void binary(final MsgPackWriter writer, final byte[] data)
    {
        writer.binary(new UnsafeBuffer(data), 0, data.length);
    }

    private static void longs(final MsgPackWriter writer, final List<Long> values)
    {
        writer.arrayHeader(values.size());
        for (final long value : values)
        {
            writer.int64(value);
        }
    }

    private static MsgPackReader reader(final byte[] message)
    {
        return new MsgPackReader().wrap(new UnsafeBuffer(message), 0, message.length);
    }

    private static byte[] readBinary(final MsgPackReader reader)
    {
        final int length = reader.readBinaryHeader();
        if (length < 0)
        {
            return null;
        }
        final byte[] out = new byte[length];
        reader.buffer().getBytes(reader.position(), out);
        reader.skipBytes(length);
        return out;
    }

    private static String readBinaryString(final MsgPackReader reader)
    {
        final byte[] bytes = readBinary(reader);
        return null == bytes ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private static List<Long> readLongs(final MsgPackReader reader)
    {
        final int count = reader.readArrayHeader();
        final List<Long> out = new ArrayList<>(Math.max(0, Math.min(count, reader.remaining())));
        for (int i = 0; i < count && reader.ok(); i++)
        {
            out.add(reader.readLong());
        }
        return count < 0 ? null : out;
    }

    private static void finish(final MsgPackReader reader, final String what)
    {
        if (!reader.ok())
        {
            throw malformed(what, reader, reader.errorMessage());
        }
        if (reader.remaining() > 0)
        {
            throw malformed(what, reader, reader.remaining() + " trailing byte(s)");
        }
    }

    private static KvTransferException malformed(final String what, final MsgPackReader reader, final String why)
    {
        final String error = reader.errorMessage();
        final String detail = reader.ok() || why.equals(error) ? "" : " (" + error + ")";
        return new KvTransferException("malformed " + what + ": " + why + detail + ", " + reader.remaining() +
            " of the input's bytes left unread");
    }
}
