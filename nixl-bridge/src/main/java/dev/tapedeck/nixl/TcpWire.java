package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The {@link TcpDataPlane}'s data-connection format, all integers big-endian:
 * <pre>
 * request  = u32 magic "KVT1", u32 n, u32[n] remote block ids, u32 notifLen, notifLen bytes of UTF-8 notification
 * response = i32 status, u64 length, then length bytes: the n blocks in request order (status 0), or a UTF-8
 *            refusal (status 1: a block id outside the pool)
 * </pre>
 * A decode may send several requests without waiting; the prefill answers them in order. {@code n = 0} is a
 * notification without a transfer.
 * <p>
 * Stateless; thread safe.
 */
final class TcpWire
{
    /** "KVT1". */
    static final int MAGIC = 0x4B565431;
    static final int STATUS_OK = 0;
    static final int STATUS_REFUSED = 1;
    static final int RESPONSE_HEADER_BYTES = Integer.BYTES + Long.BYTES;
    /** Largest notification or refusal message, in bytes. */
    static final int MAX_MESSAGE_BYTES = 1 << 16;
    /** Most blocks one request may ask for. */
    static final int MAX_BLOCKS_PER_REQUEST = 1 << 20;

    private TcpWire()
    {
    }

    /**
     * A parsed request.
     *
     * @param blockIds the remote (this pool's) block ids.
     * @param notification the notification, empty for none.
     */
    record Request(int[] blockIds, String notification)
    {
    }

    /**
     * A peer broke the format; the connection is closed.
     */
    static final class ProtocolException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        ProtocolException(final String message)
        {
            super(message);
        }
    }

    static ByteBuffer request(final int[] blockIds, final byte[] notification)
    {
        if (notification.length > MAX_MESSAGE_BYTES || blockIds.length > MAX_BLOCKS_PER_REQUEST)
        {
            throw new KvTransferException("tcp read: at most " + MAX_BLOCKS_PER_REQUEST + " blocks and a " +
                MAX_MESSAGE_BYTES + "-byte notification per read, got " + blockIds.length + " and " +
                notification.length);
        }
        final ByteBuffer out = ByteBuffer.allocate(3 * Integer.BYTES + Integer.BYTES * blockIds.length +
            notification.length);
        out.putInt(MAGIC).putInt(blockIds.length);
        for (final int id : blockIds)
        {
            out.putInt(id);
        }
        out.putInt(notification.length).put(notification);
        return out.flip();
    }

    /**
     * @param in bytes received, in read mode.
     * @return the first request, consumed, or null when {@code in} does not hold all of it yet (nothing consumed).
     * @throws ProtocolException on a wrong magic or a size beyond the limits.
     */
    static Request parseRequest(final ByteBuffer in)
    {
        final int start = in.position();
        final int needed = bytesNeeded(in);
        if (in.remaining() < needed)
        {
            return null;
        }
        in.getInt();
        final int[] ids = new int[in.getInt()];
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = in.getInt();
        }
        final byte[] notification = new byte[in.getInt()];
        in.get(notification);
        if (in.position() - start != needed)
        {
            throw new IllegalStateException("request parsed to " + (in.position() - start) + " bytes, not " + needed);
        }
        return new Request(ids, new String(notification, StandardCharsets.UTF_8));
    }

    /**
     * @param in bytes received, in read mode (not consumed).
     * @return how many bytes the first request needs, as far as {@code in} tells (a lower bound until its sizes
     *     arrived).
     * @throws ProtocolException on a wrong magic or a size beyond the limits.
     */
    static int bytesNeeded(final ByteBuffer in)
    {
        final int start = in.position();
        final int available = in.remaining();
        if (available < 2 * Integer.BYTES)
        {
            return 2 * Integer.BYTES;
        }
        final int magic = in.getInt(start);
        if (MAGIC != magic)
        {
            throw new ProtocolException("not a KVT1 request (magic 0x" + Integer.toHexString(magic) + ")");
        }
        final int n = in.getInt(start + Integer.BYTES);
        if (n < 0 || n > MAX_BLOCKS_PER_REQUEST)
        {
            throw new ProtocolException("a request for " + (n & 0xffffffffL) + " blocks");
        }
        final int beforeNotification = 3 * Integer.BYTES + n * Integer.BYTES;
        if (available < beforeNotification)
        {
            return beforeNotification;
        }
        final int notificationBytes = in.getInt(start + beforeNotification - Integer.BYTES);
        if (notificationBytes < 0 || notificationBytes > MAX_MESSAGE_BYTES)
        {
            throw new ProtocolException("a " + (notificationBytes & 0xffffffffL) + "-byte notification");
        }
        return beforeNotification + notificationBytes;
    }

    /**
     * @param request a request.
     * @param pool the pool it reads.
     * @return why it cannot be answered, or null when every block is in the pool.
     */
    static String check(final Request request, final KvPool pool)
    {
        for (final int id : request.blockIds())
        {
            if (id < 0 || id >= pool.numBlocks())
            {
                return "block " + id + " is not in a pool of " + pool.numBlocks();
            }
        }
        return null;
    }

    /**
     * @param request a checked request.
     * @param pool the pool it reads.
     * @return the answer for a gathering write: the header, then a view of each block.
     */
    static ByteBuffer[] answer(final Request request, final KvPool pool)
    {
        final int[] ids = request.blockIds();
        final ByteBuffer[] out = new ByteBuffer[ids.length + 1];
        out[0] = header(STATUS_OK, (long)ids.length * pool.blockBytes());
        for (int i = 0; i < ids.length; i++)
        {
            out[i + 1] = pool.block(ids[i]);
        }
        return out;
    }

    /**
     * @param message why.
     * @return a refusal for a gathering write.
     */
    static ByteBuffer[] refusal(final String message)
    {
        final byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        final int length = Math.min(bytes.length, MAX_MESSAGE_BYTES);
        return new ByteBuffer[] {header(STATUS_REFUSED, length), ByteBuffer.wrap(bytes, 0, length)};
    }

    /**
     * @param buffer a buffer in write mode.
     * @param capacity the new capacity, at least its position.
     * @return a larger buffer in write mode holding the same bytes.
     */
    static ByteBuffer grow(final ByteBuffer buffer, final int capacity)
    {
        return ByteBuffer.allocate(capacity).put(buffer.flip());
    }

    private static ByteBuffer header(final int status, final long length)
    {
        return ByteBuffer.allocate(RESPONSE_HEADER_BYTES).putInt(status).putLong(length).flip();
    }
}
