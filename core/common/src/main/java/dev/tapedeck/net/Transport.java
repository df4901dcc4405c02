package dev.tapedeck.net;

import java.util.Locale;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;

/**
 * Netty's I/O transports: epoll (Linux; sub-millisecond timers), io_uring (Linux; batches system calls) and NIO
 * (anywhere; millisecond timers). {@code auto} picks epoll, then NIO: in the scale benchmark (docs/performance.md)
 * io_uring was no faster on loopback, where the cost is the kernel's TCP path, not the system-call count.
 * Immutable.
 */
public enum Transport
{
    /** Linux io_uring. */
    IO_URING,
    /** Linux epoll. */
    EPOLL,
    /** Java NIO. */
    NIO;

    /**
     * @param name {@code auto}, {@code io_uring}, {@code epoll} or {@code nio}.
     * @return the transport; {@code auto} resolves to epoll when available, NIO otherwise.
     * @throws IllegalArgumentException when the name is unknown or the transport is unavailable here.
     */
    public static Transport select(final String name)
    {
        final String key = name.toLowerCase(Locale.ROOT).replace('-', '_');
        if ("auto".equals(key))
        {
            return Epoll.isAvailable() ? EPOLL : NIO;
        }
        final Transport transport;
        try
        {
            transport = valueOf(key.toUpperCase(Locale.ROOT));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("unknown transport '" + name + "'; use auto, io_uring, epoll or nio");
        }
        if (IO_URING == transport && !IoUring.isAvailable())
        {
            throw new IllegalArgumentException("io_uring is not available here: " + IoUring.unavailabilityCause());
        }
        if (EPOLL == transport && !Epoll.isAvailable())
        {
            throw new IllegalArgumentException("epoll is not available here: " + Epoll.unavailabilityCause());
        }
        return transport;
    }

    /**
     * @return the event-loop I/O handler factory.
     */
    public IoHandlerFactory ioHandlerFactory()
    {
        switch (this)
        {
            case IO_URING:
                return IoUringIoHandler.newFactory();
            case EPOLL:
                return EpollIoHandler.newFactory();
            default:
                return NioIoHandler.newFactory();
        }
    }

    /**
     * @return the server socket channel class.
     */
    public Class<? extends ServerChannel> serverChannel()
    {
        switch (this)
        {
            case IO_URING:
                return IoUringServerSocketChannel.class;
            case EPOLL:
                return EpollServerSocketChannel.class;
            default:
                return NioServerSocketChannel.class;
        }
    }

    /**
     * @return the client socket channel class.
     */
    public Class<? extends SocketChannel> socketChannel()
    {
        switch (this)
        {
            case IO_URING:
                return IoUringSocketChannel.class;
            case EPOLL:
                return EpollSocketChannel.class;
            default:
                return NioSocketChannel.class;
        }
    }

    /**
     * @return the name used on the command line.
     */
    public String cliName()
    {
        return name().toLowerCase(Locale.ROOT);
    }
}
