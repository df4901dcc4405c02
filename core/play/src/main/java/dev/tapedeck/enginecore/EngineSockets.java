package dev.tapedeck.enginecore;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.net.ZmqConnector;
import dev.tapedeck.net.ZmqContexts;

/**
 * One engine's ZeroMQ sockets: opened in the context the process's engines share (its I/O threads; or a context of
 * the engine's own), and closed when the engine stops, each with its linger (outputs flush their last messages), or
 * with none when the engine dies. The shared context outlives the engine; its owner closes it.
 * <p>
 * Confined to the engine's thread.
 */
final class EngineSockets implements AutoCloseable
{
    private final ZContext context;
    private final boolean ownsContext;
    /** Set when {@link #close()} begins (read on the own context's I/O thread). */
    private volatile boolean closing;
    private final ZmqConnector connector;
    private final List<ZMQ.Socket> sockets = new ArrayList<>();

    /**
     * @param shared the process's context, or null for one of this engine's own (closed with it).
     * @param connector how sockets connect (bounded waits, cancellable).
     */
    EngineSockets(final ZContext shared, final ZmqConnector connector)
    {
        this.context = null != shared ? shared : ZmqContexts.create(1, "play engine", () -> closing);
        this.ownsContext = null == shared;
        this.connector = connector;
    }

    ZContext context()
    {
        return context;
    }

    /**
     * @return a connected socket of this engine's (see {@link ZmqConnector#open}).
     */
    ZMQ.Socket open(final SocketType type, final Consumer<ZMQ.Socket> configure, final String endpoint,
        final long deadlineNs)
    {
        final ZMQ.Socket socket = connector.open(context, type, configure, endpoint, deadlineNs);
        sockets.add(socket);
        return socket;
    }

    /**
     * Close one socket now (the handshake's, once it is done).
     */
    void close(final ZMQ.Socket socket)
    {
        sockets.remove(socket);
        socket.close();
    }

    /**
     * A crash: nothing queued is sent when the sockets close.
     */
    void dropLinger()
    {
        for (final ZMQ.Socket socket : sockets)
        {
            socket.setLinger(0);
        }
    }

    @Override
    public void close()
    {
        closing = true;
        sockets.forEach(ZMQ.Socket::close);
        sockets.clear();
        if (ownsContext)
        {
            context.close();
        }
    }
}
