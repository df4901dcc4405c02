package dev.tapedeck.net;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Opens a connecting JeroMQ socket and returns it once its ZMTP handshake with the peer has completed, healing the
 * JeroMQ defect that otherwise leaves some loopback connections silent forever.
 * <p>
 * The defect (JeroMQ 0.6.0, the newest release): when a TCP connect completes at once, as loopback connects often do,
 * the I/O thread may register the new stream engine's channel and then, while retiring the connecter's handle for the
 * same channel in the same pass (the order depends on a hash set), cancel that registration. The connection stays
 * open but the engine hears no more readiness events: depending on how far its first synchronous attempt got, no
 * greeting is sent at all, or the peer completes its side of the handshake while ours never reads the answer. About
 * 3 to 5 in 100 fresh loopback connections hit it. Replacing such a socket is unsafe: a peer ROUTER that already holds
 * our identity ignores a second connection with the same identity. What heals it is any later registration pass on the
 * same I/O thread, which registers the orphaned channel again. So when the peer accepted the connection but the
 * handshake has not finished within {@code stallNs}, this class binds and closes a throwaway listening socket in the
 * same context (which runs such a pass) and keeps waiting, repeating until the deadline.
 * <p>
 * Call from the thread that will own the socket (JeroMQ sockets are thread-confined). The context must have one I/O
 * thread (the default), so that the nudge reaches the thread that serves the socket.
 */
public final class ZmqConnector
{
    /** How long a connected socket may take to finish the ZMTP handshake before its I/O thread is nudged. */
    public static final long DEFAULT_STALL_NS = TimeUnit.MILLISECONDS.toNanos(200);

    private static final AtomicLong MONITOR_SEQUENCE = new AtomicLong();
    private static final int POLL_MS = 20;

    private final long stallNs;
    private int stalls;
    private java.util.function.BooleanSupplier cancelled = () -> false;

    /**
     * @param stallNs how long after the TCP connection the ZMTP handshake may take before the I/O thread is nudged.
     */
    public ZmqConnector(final long stallNs)
    {
        this.stallNs = stallNs;
    }

    /**
     * @param value asked while waiting: true ends the wait at once, as a passed deadline does (e.g. on shutdown).
     * @return this.
     */
    public ZmqConnector cancelWhen(final java.util.function.BooleanSupplier value)
    {
        cancelled = value;
        return this;
    }

    /**
     * Create a socket, configure it, connect it and wait until its handshake completes.
     *
     * @param context the context to create sockets in (one I/O thread).
     * @param type socket type.
     * @param configure sets options (identity, HWM, linger) on the socket before it connects.
     * @param endpoint the endpoint to connect to.
     * @param deadlineNs {@link System#nanoTime()} by which the handshake must have completed.
     * @return the connected socket.
     * @throws IllegalStateException if the deadline passes, or {@link #cancelWhen} says so, first (the socket is
     *     closed).
     */
    public ZMQ.Socket open(final ZContext context, final SocketType type, final Consumer<ZMQ.Socket> configure,
        final String endpoint, final long deadlineNs)
    {
        final ZMQ.Socket socket = context.createSocket(type);
        configure.accept(socket);
        final String monitorAddress = "inproc://tapedeck-connect-monitor-" + MONITOR_SEQUENCE.incrementAndGet();
        socket.monitor(monitorAddress, ZMQ.EVENT_CONNECTED | ZMQ.EVENT_HANDSHAKE_PROTOCOL);
        final ZMQ.Socket monitor = context.createSocket(SocketType.PAIR);
        monitor.setReceiveTimeOut(POLL_MS);
        monitor.connect(monitorAddress);
        socket.connect(endpoint);
        final int stallsBefore = stalls;
        final boolean handshaken = awaitHandshake(context, monitor, deadlineNs);
        socket.monitor(null, 0);
        monitor.close();
        if (handshaken)
        {
            return socket;
        }
        socket.setLinger(0);
        socket.close();
        throw new IllegalStateException(cancelled.getAsBoolean() ? "stopped while connecting to " + endpoint :
            stallsBefore == stalls ? "could not connect to " + endpoint + " before the deadline" : endpoint +
            " accepted the TCP connection but never completed a ZeroMQ handshake before the deadline (is it a " +
            "ZeroMQ endpoint?)");
    }

    private boolean awaitHandshake(final ZContext context, final ZMQ.Socket monitor, final long deadlineNs)
    {
        long waitingSinceNs = 0;
        boolean connected = false;
        while (true)
        {
            final long nowNs = System.nanoTime();
            if (nowNs - deadlineNs >= 0 || cancelled.getAsBoolean())
            {
                return false;
            }
            if (connected && nowNs - waitingSinceNs >= stallNs)
            {
                stalls++;
                nudgeIoThread(context);
                waitingSinceNs = nowNs;
            }
            final zmq.ZMQ.Event event = zmq.ZMQ.Event.read(monitor.base(), 0);
            if (null == event)
            {
                continue;
            }
            if (ZMQ.EVENT_HANDSHAKE_PROTOCOL == event.event)
            {
                return true;
            }
            if (ZMQ.EVENT_CONNECTED == event.event && !connected)
            {
                connected = true;
                waitingSinceNs = System.nanoTime();
            }
        }
    }

    /**
     * Make the context's I/O thread run a registration pass: a listening socket registers a channel there.
     */
    private static void nudgeIoThread(final ZContext context)
    {
        final ZMQ.Socket nudge = context.createSocket(SocketType.PULL);
        nudge.setLinger(0);
        nudge.bind("tcp://127.0.0.1:*");
        nudge.close();
    }

    /**
     * @return how many times a handshake was late and the I/O thread was nudged, so far.
     */
    public int stalls()
    {
        return stalls;
    }
}
