package dev.tapedeck.record;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.net.ZmqConnector;
import dev.tapedeck.protocol.enginecore.Handshake;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * The tap's side towards the real frontend, where it plays engine 0 (identity {@code 00 00}): connects to the
 * frontend's handshake ROUTER, says HELLO with the engine's {@code local} and {@code headless}, takes INIT, connects
 * a DEALER to the frontend's input and a PUSH to its output, sends the engine's registration payload byte for byte
 * on the input, then the engine's READY byte for byte on the handshake socket.
 * <p>
 * Every socket is connected through {@link ZmqConnector} (JeroMQ 0.6.0 loses some loopback connections otherwise).
 * Before that, it waits for the frontend's handshake port to accept TCP connections, in slices that notice a stop
 * request (the frontend may start long after the tap). Used on the relay thread only.
 */
final class FrontendSide
{
    /** The connected data sockets. */
    record Connected(ZMQ.Socket input, ZMQ.Socket output, String inputAddress, String outputAddress)
    {
    }

    private static final System.Logger LOG = System.getLogger(FrontendSide.class.getName());
    private static final byte[] ENGINE_ZERO = {0, 0};
    private static final int SLICE_MS = 200;

    private final ZContext context;
    private final ZmqConnector connector = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS);

    FrontendSide(final ZContext context)
    {
        this.context = context;
    }

    /**
     * @param handshakeAddress the frontend's handshake ROUTER.
     * @param engine what the engine said in its handshake (relayed).
     * @param deadlineNs by when the frontend must have answered ({@link System#nanoTime()}).
     * @param running false once the tap is asked to stop.
     * @return the connected data sockets.
     * @throws IOException when the frontend does not answer in time or its INIT cannot be served.
     * @throws RecordingTap.Stopped when the tap is stopped meanwhile.
     */
    Connected connect(final String handshakeAddress, final EngineSide.Handshaken engine, final long deadlineNs,
        final BooleanSupplier running) throws IOException
    {
        awaitListening(handshakeAddress, deadlineNs, running);
        final ZMQ.Socket handshake = open(SocketType.DEALER, s ->
        {
            s.setIdentity(ENGINE_ZERO);
            s.setLinger(5000);
        }, handshakeAddress, deadlineNs);
        handshake.send(hello(engine.local(), engine.headless()), 0);
        handshake.setReceiveTimeOut(SLICE_MS);
        byte[] initFrame = null;
        while (null == initFrame)
        {
            checkWaiting(deadlineNs, running, "INIT from the frontend at " + handshakeAddress);
            initFrame = handshake.recv(0);
        }
        final Handshake.Init init;
        try
        {
            init = Handshake.decodeInit(new UnsafeBuffer(initFrame), 0, initFrame.length);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException("the frontend's INIT: " + ex.getMessage(), ex);
        }
        checkServable(init);
        final String inputAddress = init.inputs().get(0);
        final String outputAddress = init.outputs().get(0);
        final ZMQ.Socket input = open(SocketType.DEALER, s ->
        {
            s.setIdentity(ENGINE_ZERO);
            s.setHWM(0);
            s.setLinger(1000);
        }, inputAddress, deadlineNs);
        input.send(engine.registration(), 0);
        final ZMQ.Socket output = open(SocketType.PUSH, s ->
        {
            s.setHWM(0);
            s.setLinger(1000);
        }, outputAddress, deadlineNs);
        handshake.send(engine.ready(), 0);
        handshake.close();
        LOG.log(System.Logger.Level.INFO, "frontend at {0}: registered and READY (input {1}, output {2})",
            handshakeAddress, inputAddress, outputAddress);
        return new Connected(input, output, inputAddress, outputAddress);
    }

    private static void checkServable(final Handshake.Init init) throws IOException
    {
        if (init.inputs().size() > 1)
        {
            throw new IOException("the frontend has " + init.inputs().size() + " API-server clients; the tap relays " +
                "one (start the frontend with --api-server-count 1)");
        }
        if (null != init.coordinatorInput() || null != init.coordinatorOutput())
        {
            throw new IOException("the frontend runs a data-parallel coordinator; the tap relays one engine without " +
                "one (start the frontend with --data-parallel-size 1)");
        }
        for (final String address : new String[] {init.inputs().get(0), init.outputs().get(0)})
        {
            if (!address.startsWith("tcp://"))
            {
                throw new IOException("the frontend's INIT names " + address + ", which JeroMQ cannot reach (TCP " +
                    "only): start the frontend with --data-parallel-size-local 0 so that it listens on TCP");
            }
        }
    }

    private ZMQ.Socket open(final SocketType type, final java.util.function.Consumer<ZMQ.Socket> configure,
        final String address, final long deadlineNs) throws IOException
    {
        try
        {
            return connector.open(context, type, configure, address, deadlineNs);
        }
        catch (final IllegalStateException ex)
        {
            throw new IOException("frontend: " + ex.getMessage(), ex);
        }
    }

    /**
     * Wait until the frontend's handshake port accepts a TCP connection (a plain probe, closed at once), so that the
     * ZeroMQ connect that follows completes promptly and a stop request is noticed while the frontend is not up yet.
     */
    private static void awaitListening(final String address, final long deadlineNs, final BooleanSupplier running)
        throws IOException
    {
        final URI uri = URI.create(address);
        if (null == uri.getHost() || uri.getPort() < 0)
        {
            throw new IllegalArgumentException("--frontend-handshake must be tcp://HOST:PORT, got " + address);
        }
        final InetSocketAddress target = new InetSocketAddress(uri.getHost(), uri.getPort());
        boolean logged = false;
        while (true)
        {
            checkWaiting(deadlineNs, running, "frontend listening at " + address);
            try (Socket probe = new Socket())
            {
                probe.connect(target, SLICE_MS);
                return;
            }
            catch (final IOException ex)
            {
                if (!logged)
                {
                    LOG.log(System.Logger.Level.INFO, "waiting for the frontend to listen at {0}", address);
                    logged = true;
                }
                pause();
            }
        }
    }

    private static void pause()
    {
        try
        {
            Thread.sleep(SLICE_MS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new RecordingTap.Stopped();
        }
    }

    private static void checkWaiting(final long deadlineNs, final BooleanSupplier running, final String what)
        throws IOException
    {
        if (!running.getAsBoolean())
        {
            throw new RecordingTap.Stopped();
        }
        if (System.nanoTime() - deadlineNs >= 0)
        {
            throw new IOException("no " + what + " within the handshake timeout (--handshake-timeout)");
        }
    }

    private static byte[] hello(final boolean local, final boolean headless)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final MsgPackWriter writer = new MsgPackWriter().wrap(buffer, 0);
        writer.mapHeader(3).string("status").string("HELLO").string("local").bool(local)
            .string("headless").bool(headless);
        return Arrays.copyOf(buffer.byteArray(), writer.length());
    }
}
