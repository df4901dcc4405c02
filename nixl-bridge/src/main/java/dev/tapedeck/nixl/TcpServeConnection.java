package dev.tapedeck.nixl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * The prefill's side of one {@link TcpDataPlane} data connection ({@link TcpWire}): reads requests, answers each with a
 * gathering write of the asked blocks' views, and hands over the request's notification once the answer is written in
 * full. It reads no further request while an answer is being written.
 * <p>
 * <b>Not thread safe</b>: used only on the plane's I/O thread.
 */
final class TcpServeConnection
{
    private static final System.Logger LOG = System.getLogger(TcpServeConnection.class.getName());

    private final SocketChannel channel;
    private final SelectionKey key;
    private final KvPool pool;
    private final Consumer<String> notifications;
    private final Consumer<TcpServeConnection> onClosed;
    private final String engineId;
    private ByteBuffer in = ByteBuffer.allocate(4096);
    private ByteBuffer[] out;
    private String outNotification;

    /**
     * @param channel an accepted connection, non-blocking.
     * @param selector the I/O thread's selector.
     * @param pool the blocks it serves.
     * @param notifications takes the notification of each request answered in full.
     * @param onClosed told once the connection closed.
     * @param engineId this engine's id, for the log.
     * @throws IOException when the channel cannot be registered.
     */
    TcpServeConnection(final SocketChannel channel, final Selector selector, final KvPool pool,
        final Consumer<String> notifications, final Consumer<TcpServeConnection> onClosed, final String engineId)
        throws IOException
    {
        this.channel = channel;
        this.pool = pool;
        this.notifications = notifications;
        this.onClosed = onClosed;
        this.engineId = engineId;
        this.key = channel.register(selector, SelectionKey.OP_READ, this);
    }

    void onReady(final SelectionKey readyKey)
    {
        try
        {
            if (readyKey.isWritable() && !write())
            {
                return;
            }
            if (readyKey.isReadable())
            {
                if (!in.hasRemaining())
                {
                    in = TcpWire.grow(in, in.capacity() * 2);
                }
                if (channel.read(in) < 0)
                {
                    close();
                    return;
                }
            }
            serve();
        }
        catch (final IOException | TcpWire.ProtocolException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "tcp plane {0}: closed a data connection: {1}",
                engineId, ex.toString());
            close();
        }
    }

    private void serve() throws IOException
    {
        while (null == out)
        {
            in.flip();
            final TcpWire.Request request = TcpWire.parseRequest(in);
            if (null == request)
            {
                final int needed = TcpWire.bytesNeeded(in);
                in.compact();
                if (needed > in.capacity())
                {
                    in = TcpWire.grow(in, needed);
                }
                return;
            }
            in.compact();
            final String refusal = TcpWire.check(request, pool);
            if (null == refusal)
            {
                out = TcpWire.answer(request, pool);
                outNotification = request.notification();
            }
            else
            {
                out = TcpWire.refusal(refusal);
                outNotification = null;
            }
            if (!write())
            {
                return;
            }
        }
    }

    /**
     * @return true when the answer is written in full.
     */
    private boolean write() throws IOException
    {
        if (null == out)
        {
            key.interestOps(SelectionKey.OP_READ);
            return true;
        }
        channel.write(out);
        if (out[out.length - 1].hasRemaining())
        {
            key.interestOps(SelectionKey.OP_WRITE);
            return false;
        }
        out = null;
        if (null != outNotification && !outNotification.isEmpty())
        {
            notifications.accept(outNotification);
        }
        outNotification = null;
        key.interestOps(SelectionKey.OP_READ);
        return true;
    }

    void close()
    {
        key.cancel();
        try
        {
            channel.close();
        }
        catch (final IOException ignored)
        {
            // nothing to do: the connection is gone either way
        }
        onClosed.accept(this);
    }
}
