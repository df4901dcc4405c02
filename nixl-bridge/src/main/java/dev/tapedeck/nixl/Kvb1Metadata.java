package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The parts of a KVB1 agent-metadata blob a native plane checks before handing it to the shim: {@code "KVB1" | u32
 * agent_len | agent | u32 waddr_len | worker address | u32 rkey_len | packed rkey | u64 base | u64 len},
 * little-endian. The NIXL plane carries NIXL's own metadata in the worker-address slot.
 *
 * @param agent the remote agent's name (its engine id).
 * @param base the remote pool's base address.
 * @param length the remote pool's size in bytes.
 */
record Kvb1Metadata(String agent, long base, long length)
{
    /**
     * @param blob a peer's {@link KvDataPlane#agentMetadata()}.
     * @return its fields.
     * @throws KvTransferException when it is not a well-formed KVB1 blob.
     */
    static Kvb1Metadata parse(final byte[] blob)
    {
        final ByteBuffer in = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        try
        {
            final byte[] magic = new byte[4];
            in.get(magic);
            if (!"KVB1".equals(new String(magic, StandardCharsets.US_ASCII)))
            {
                throw new KvTransferException("agent metadata is not a KVB1 blob");
            }
            final byte[] agent = new byte[length(in)];
            in.get(agent);
            skip(in);
            skip(in);
            final long base = in.getLong();
            final long length = in.getLong();
            if (in.hasRemaining())
            {
                throw new KvTransferException("KVB1 agent metadata has " + in.remaining() + " trailing bytes");
            }
            return new Kvb1Metadata(new String(agent, StandardCharsets.UTF_8), base, length);
        }
        catch (final RuntimeException ex)
        {
            if (ex instanceof KvTransferException)
            {
                throw ex;
            }
            throw new KvTransferException("KVB1 agent metadata of " + blob.length + " bytes is truncated", ex);
        }
    }

    private static void skip(final ByteBuffer in)
    {
        final int length = length(in);
        in.position(in.position() + length);
    }

    private static int length(final ByteBuffer in)
    {
        final int length = in.getInt();
        if (length < 0 || length > in.remaining())
        {
            throw new KvTransferException("KVB1 agent metadata has a field of " + Integer.toUnsignedString(length) +
                " bytes with " + in.remaining() + " left");
        }
        return length;
    }
}
