package dev.tapedeck.nixl;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The decode's data connection to one {@link TcpDataPlane} peer ({@link TcpWire}): requests go out in order, answers
 * come back in the same order and are scattered straight into the local pool's block views. Any failure (connect,
 * I/O, a peer closing mid-read, a format error, a timeout) fails every read on the connection and closes it.
 * <p>
 * <b>Not thread safe</b>: used only on the plane's I/O thread.
 */
final class TcpPullConnection
{
    private final KvPeer peer;
    private final SocketChannel channel;
    private final SelectionKey key;
    private final ArrayDeque<TcpTransfer> unsent = new ArrayDeque<>();
    private final ArrayDeque<TcpTransfer> awaiting = new ArrayDeque<>();
    private final ByteBuffer header = ByteBuffer.allocate(TcpWire.RESPONSE_HEADER_BYTES);
    private final ByteBuffer scratch = ByteBuffer.allocate(64);
    private final Consumer<TcpPullConnection> onClosed;
    private boolean connected;
    private boolean closed;
    private ByteBuffer errorMessage;
    private long bodyRemaining = -1;

    /**
     * Start connecting.
     *
     * @param peer the peer.
     * @param unresolved its address, resolved here.
     * @param selector the I/O thread's selector.
     * @param onClosed told once the connection closed (failed, timed out, removed).
     * @throws IOException when the connection cannot be started.
     */
    TcpPullConnection(final KvPeer peer, final InetSocketAddress unresolved, final Selector selector,
        final Consumer<TcpPullConnection> onClosed) throws IOException
    {
        this.peer = peer;
        this.onClosed = onClosed;
        final SocketChannel opened = SocketChannel.open();
        try
        {
            opened.configureBlocking(false);
            opened.setOption(StandardSocketOptions.TCP_NODELAY, true);
            connected = opened.connect(new InetSocketAddress(unresolved.getHostString(), unresolved.getPort()));
            key = opened.register(selector, connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, this);
        }
        catch (final IOException | RuntimeException ex)
        {
            opened.close();
            throw ex;
        }
        channel = opened;
    }

    /**
     * @return the peer.
     */
    KvPeer peer()
    {
        return peer;
    }

    /**
     * @return the oldest read not yet answered, or null.
     */
    TcpTransfer oldest()
    {
        return awaiting.peekFirst();
    }

    void enqueue(final TcpTransfer transfer)
    {
        unsent.add(transfer);
        awaiting.add(transfer);
        if (connected)
        {
            flush();
        }
    }

    void onReady(final SelectionKey readyKey)
    {
        try
        {
            if (readyKey.isConnectable())
            {
                channel.finishConnect();
                connected = true;
                readyKey.interestOps(SelectionKey.OP_READ);
                flush();
            }
            if (readyKey.isValid() && readyKey.isWritable())
            {
                flush();
            }
            if (readyKey.isValid() && readyKey.isReadable())
            {
                receive();
            }
        }
        catch (final IOException ex)
        {
            failAll((connected ? "connection to " : "cannot connect to ") +
                peer.address() + " failed: " + ex);
        }
    }

    private void flush()
    {
        try
        {
            while (!unsent.isEmpty())
            {
                final TcpTransfer head = unsent.peekFirst();
                channel.write(head.request);
                if (head.request.hasRemaining())
                {
                    key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    return;
                }
                head.postedNs = System.nanoTime();
                unsent.pollFirst();
            }
            key.interestOps(SelectionKey.OP_READ);
        }
        catch (final IOException ex)
        {
            failAll("sending to " + peer.address() + " failed: " + ex);
        }
    }

    private void receive() throws IOException
    {
        while (true)
        {
            final TcpTransfer head = awaiting.peekFirst();
            if (null == head)
            {
                scratch.clear();
                if (channel.read(scratch) < 0)
                {
                    failAll("connection closed by " + peer.address());
                }
                else if (scratch.position() > 0)
                {
                    failAll(peer.address() + " sent bytes nobody asked for");
                }
                return;
            }
            if (!readResponse(head))
            {
                return;
            }
        }
    }

    /**
     * @return true when {@code head} completed (and the next answer may be read), false when more bytes are
     *     needed or the connection was dropped.
     */
    private boolean readResponse(final TcpTransfer head) throws IOException
    {
        if (header.hasRemaining())
        {
            if (channel.read(header) < 0)
            {
                failAll("connection closed by " + peer.address() + " mid-read");
                return false;
            }
            if (header.hasRemaining())
            {
                return false;
            }
            final int status = header.getInt(0);
            final long length = header.getLong(Integer.BYTES);
            if (TcpWire.STATUS_OK == status && length != head.expectedBytes)
            {
                failAll(peer.address() + " answered " + length + " bytes, expected " +
                    head.expectedBytes + " (do the pools' block sizes differ?)");
                return false;
            }
            if (TcpWire.STATUS_OK != status)
            {
                errorMessage = ByteBuffer.allocate((int)Math.min(Math.max(0, length), TcpWire.MAX_MESSAGE_BYTES));
            }
            bodyRemaining = length;
        }
        if (null != errorMessage)
        {
            if (channel.read(errorMessage) < 0)
            {
                failAll("connection closed by " + peer.address() + " mid-read");
                return false;
            }
            if (errorMessage.hasRemaining())
            {
                return false;
            }
            final String message = new String(errorMessage.array(), 0, errorMessage.position(),
                StandardCharsets.UTF_8);
            nextResponse();
            head.future.completeExceptionally(new KvTransferException("tcp read from " + peer.engineId() +
                " at " + peer.address() + " refused: " + message));
            return true;
        }
        while (bodyRemaining > 0)
        {
            final long read = channel.read(head.targets);
            if (read < 0)
            {
                failAll("connection closed by " + peer.address() + " mid-read");
                return false;
            }
            if (0 == read)
            {
                return false;
            }
            bodyRemaining -= read;
        }
        nextResponse();
        final long doneNs = System.nanoTime();
        final long postedNs = 0 == head.postedNs ? doneNs : head.postedNs;
        head.future.complete(new PullResult(head.expectedBytes, head.targets.length, postedNs - head.submitNs,
            doneNs - postedNs));
        return true;
    }

    private void nextResponse()
    {
        awaiting.pollFirst();
        header.clear();
        errorMessage = null;
        bodyRemaining = -1;
    }

    /**
     * Fail every read on the connection and close it; later calls do nothing.
     *
     * @param reason why, for the reads' exceptions.
     */
    void failAll(final String reason)
    {
        if (closed)
        {
            return;
        }
        closed = true;
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
        TcpTransfer transfer;
        while (null != (transfer = awaiting.pollFirst()))
        {
            transfer.future.completeExceptionally(new KvTransferException("tcp read from " + peer.engineId() +
                " at " + peer.address() + ": " + reason));
        }
        unsent.clear();
    }
}
