package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.netty.buffer.ByteBuf;

import org.agrona.ExpandableArrayBuffer;

import dev.tapedeck.net.JsonBytes;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * vLLM's {@code kv_transfer_params} as its NixlConnector reads and writes them: what a client (a P/D proxy, llm-d's
 * routing sidecar) sends with a request, and what a prefill returns for the decode. The keys are vLLM's; unknown keys
 * are ignored on input, as vLLM ignores them. Output keys come in vLLM's order: {@code do_remote_prefill,
 * do_remote_decode, remote_block_ids, remote_engine_id, remote_request_id, remote_host, remote_port, tp_size}.
 * <p>
 * Immutable; thread safe.
 */
public final class KvTransferParams
{
    /** An absent {@code remote_port}. */
    public static final int NO_PORT = -1;

    private final boolean doRemoteDecode;
    private final boolean doRemotePrefill;
    private final int[] remoteBlockIds;
    private final String remoteEngineId;
    private final String remoteRequestId;
    private final String remoteHost;
    private final int remotePort;
    private final int tpSize;

    private KvTransferParams(final boolean doRemoteDecode, final boolean doRemotePrefill, final int[] remoteBlockIds,
        final String remoteEngineId, final String remoteRequestId, final String remoteHost, final int remotePort,
        final int tpSize)
    {
        this.doRemoteDecode = doRemoteDecode;
        this.doRemotePrefill = doRemotePrefill;
        this.remoteBlockIds = remoteBlockIds;
        this.remoteEngineId = remoteEngineId;
        this.remoteRequestId = remoteRequestId;
        this.remoteHost = remoteHost;
        this.remotePort = remotePort;
        this.tpSize = tpSize;
    }

    /**
     * What a prefill answers for a {@code do_remote_decode} request: the decode is to pull these blocks.
     *
     * @param blockIds the prefill's blocks holding the prompt, in order.
     * @param engineId the prefill's engine id.
     * @param requestId the prefill's request id (the decode's notification names it).
     * @param host the prefill's side-channel host.
     * @param port the prefill's side-channel port.
     * @param tpSize the prefill's tensor-parallel size.
     * @return the params.
     */
    public static KvTransferParams forDecode(final int[] blockIds, final String engineId, final String requestId,
        final String host, final int port, final int tpSize)
    {
        return new KvTransferParams(false, true, blockIds.clone(), engineId, requestId, host, port, tpSize);
    }

    /**
     * Read the params from a decoded JSON object or msgpack map.
     *
     * @param map the object: string keys; values as Jackson or {@code MsgPackValues} decode them.
     * @return the params.
     * @throws IllegalArgumentException naming the key when a value has the wrong type.
     */
    public static KvTransferParams fromMap(final Map<?, ?> map)
    {
        return new KvTransferParams(
            bool(map, "do_remote_decode"),
            bool(map, "do_remote_prefill"),
            blockIds(map.get("remote_block_ids")),
            string(map, "remote_engine_id"),
            string(map, "remote_request_id"),
            string(map, "remote_host"),
            integer(map, "remote_port", NO_PORT),
            integer(map, "tp_size", 1));
    }

    private static boolean bool(final Map<?, ?> map, final String key)
    {
        final Object value = map.get(key);
        if (null == value)
        {
            return false;
        }
        if (value instanceof Boolean)
        {
            return (Boolean)value;
        }
        throw new IllegalArgumentException("kv_transfer_params." + key + " must be a boolean, got " + value);
    }

    private static String string(final Map<?, ?> map, final String key)
    {
        final Object value = map.get(key);
        if (null == value || value instanceof String)
        {
            return (String)value;
        }
        throw new IllegalArgumentException("kv_transfer_params." + key + " must be a string, got " + value);
    }

    private static int integer(final Map<?, ?> map, final String key, final int absent)
    {
        final Object value = map.get(key);
        if (null == value)
        {
            return absent;
        }
        if (value instanceof Number && ((Number)value).doubleValue() == ((Number)value).intValue())
        {
            return ((Number)value).intValue();
        }
        throw new IllegalArgumentException("kv_transfer_params." + key + " must be an integer, got " + value);
    }

    /** A flat list of block ids, or vLLM's per-KV-cache-group list of lists (the first group is ours). */
    private static int[] blockIds(final Object value)
    {
        if (null == value)
        {
            return null;
        }
        if (!(value instanceof List))
        {
            throw new IllegalArgumentException("kv_transfer_params.remote_block_ids must be a list of integers, got " +
                value);
        }
        List<?> list = (List<?>)value;
        if (!list.isEmpty() && list.get(0) instanceof List)
        {
            list = (List<?>)list.get(0);
        }
        final int[] ids = new int[list.size()];
        for (int i = 0; i < ids.length; i++)
        {
            final Object id = list.get(i);
            if (!(id instanceof Number) || ((Number)id).longValue() < 0 ||
                ((Number)id).longValue() > Integer.MAX_VALUE)
            {
                throw new IllegalArgumentException("kv_transfer_params.remote_block_ids[" + i + "] must be a " +
                    "non-negative integer, got " + id);
            }
            ids[i] = ((Number)id).intValue();
        }
        return ids;
    }

    /**
     * @return {@code do_remote_decode}: this engine prefills and a remote engine decodes.
     */
    public boolean doRemoteDecode()
    {
        return doRemoteDecode;
    }

    /**
     * @return {@code do_remote_prefill}: a remote engine prefilled; this one pulls the KV blocks and decodes.
     */
    public boolean doRemotePrefill()
    {
        return doRemotePrefill;
    }

    /**
     * @return {@code remote_block_ids} (a copy), or null when absent.
     */
    public int[] remoteBlockIds()
    {
        return null == remoteBlockIds ? null : remoteBlockIds.clone();
    }

    /**
     * @return how many remote blocks there are, 0 when absent.
     */
    public int remoteBlockCount()
    {
        return null == remoteBlockIds ? 0 : remoteBlockIds.length;
    }

    /**
     * @param index 0 to {@link #remoteBlockCount()} minus one.
     * @return that remote block id.
     */
    public int remoteBlockId(final int index)
    {
        return remoteBlockIds[index];
    }

    /**
     * @return {@code remote_engine_id}, or null.
     */
    public String remoteEngineId()
    {
        return remoteEngineId;
    }

    /**
     * @return {@code remote_request_id}, or null.
     */
    public String remoteRequestId()
    {
        return remoteRequestId;
    }

    /**
     * @return {@code remote_host}, or null.
     */
    public String remoteHost()
    {
        return remoteHost;
    }

    /**
     * @return {@code remote_port}, or {@link #NO_PORT}.
     */
    public int remotePort()
    {
        return remotePort;
    }

    /**
     * @return {@code tp_size} (1 when absent).
     */
    public int tpSize()
    {
        return tpSize;
    }

    /**
     * @return the keys a decode needs to pull that are missing, as vLLM checks them (empty when it can pull).
     */
    public List<String> missingForPull()
    {
        final List<String> missing = new ArrayList<>(5);
        if (null == remoteBlockIds)
        {
            missing.add("remote_block_ids");
        }
        if (null == remoteEngineId)
        {
            missing.add("remote_engine_id");
        }
        if (null == remoteRequestId)
        {
            missing.add("remote_request_id");
        }
        if (null == remoteHost)
        {
            missing.add("remote_host");
        }
        if (NO_PORT == remotePort)
        {
            missing.add("remote_port");
        }
        return missing;
    }

    /**
     * Write the params as a JSON object, keys in vLLM's order.
     *
     * @param out where to append.
     */
    public void writeJson(final ByteBuf out)
    {
        field(out, '{', "do_remote_prefill");
        out.writeCharSequence(Boolean.toString(doRemotePrefill), java.nio.charset.StandardCharsets.US_ASCII);
        field(out, ',', "do_remote_decode");
        out.writeCharSequence(Boolean.toString(doRemoteDecode), java.nio.charset.StandardCharsets.US_ASCII);
        field(out, ',', "remote_block_ids");
        if (null == remoteBlockIds)
        {
            nullValue(out);
        }
        else
        {
            out.writeByte('[');
            for (int i = 0; i < remoteBlockIds.length; i++)
            {
                if (i > 0)
                {
                    out.writeByte(',');
                }
                JsonBytes.writeLong(out, remoteBlockIds[i]);
            }
            out.writeByte(']');
        }
        field(out, ',', "remote_engine_id");
        stringOrNull(out, remoteEngineId);
        field(out, ',', "remote_request_id");
        stringOrNull(out, remoteRequestId);
        field(out, ',', "remote_host");
        stringOrNull(out, remoteHost);
        field(out, ',', "remote_port");
        if (NO_PORT == remotePort)
        {
            nullValue(out);
        }
        else
        {
            JsonBytes.writeLong(out, remotePort);
        }
        field(out, ',', "tp_size");
        JsonBytes.writeLong(out, tpSize);
        out.writeByte('}');
    }

    private static void field(final ByteBuf out, final char separator, final String key)
    {
        out.writeByte(separator);
        JsonBytes.writeString(out, key);
        out.writeByte(':');
    }

    private static void stringOrNull(final ByteBuf out, final String value)
    {
        if (null == value)
        {
            nullValue(out);
        }
        else
        {
            JsonBytes.writeString(out, value);
        }
    }

    private static void nullValue(final ByteBuf out)
    {
        out.writeCharSequence("null", java.nio.charset.StandardCharsets.US_ASCII);
    }

    /**
     * @return the params as a msgpack map, keys in vLLM's order (what an {@code EngineCoreOutput} carries).
     */
    public byte[] toMsgPack()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final MsgPackWriter writer = new MsgPackWriter().wrap(buffer, 0);
        writer.mapHeader(8);
        writer.string("do_remote_prefill").bool(doRemotePrefill);
        writer.string("do_remote_decode").bool(doRemoteDecode);
        writer.string("remote_block_ids");
        if (null == remoteBlockIds)
        {
            writer.nil();
        }
        else
        {
            writer.arrayHeader(remoteBlockIds.length);
            for (final int id : remoteBlockIds)
            {
                writer.int64(id);
            }
        }
        writer.string("remote_engine_id");
        stringOrNil(writer, remoteEngineId);
        writer.string("remote_request_id");
        stringOrNil(writer, remoteRequestId);
        writer.string("remote_host");
        stringOrNil(writer, remoteHost);
        writer.string("remote_port");
        if (NO_PORT == remotePort)
        {
            writer.nil();
        }
        else
        {
            writer.int64(remotePort);
        }
        writer.string("tp_size").int64(tpSize);
        final byte[] bytes = new byte[writer.length()];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    private static void stringOrNil(final MsgPackWriter writer, final String value)
    {
        if (null == value)
        {
            writer.nil();
        }
        else
        {
            writer.string(value);
        }
    }

    @Override
    public String toString()
    {
        return "KvTransferParams{do_remote_decode=" + doRemoteDecode + ", do_remote_prefill=" + doRemotePrefill +
            ", remote_block_ids=" + Arrays.toString(remoteBlockIds) + ", remote_engine_id=" + remoteEngineId +
            ", remote_request_id=" + remoteRequestId + ", remote_host=" + remoteHost + ", remote_port=" +
            remotePort + ", tp_size=" + tpSize + "}";
    }
}
