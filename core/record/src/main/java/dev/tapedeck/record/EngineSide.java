package dev.tapedeck.record;

import java.io.IOException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.function.BooleanSupplier;

import com.fasterxml.jackson.databind.JsonNode;

import org.agrona.ExpandableArrayBuffer;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * The tap's side towards the real engine, where it plays the frontend: binds the handshake ROUTER, the input ROUTER
 * and the output PULL, answers the engine's HELLO with INIT naming the input and output addresses (no coordinator,
 * an empty {@code parallel_config}, so the engine keeps its own), then takes the registration payload on the input
 * socket and READY on the handshake socket, in either order, keeping both byte for byte.
 * <p>
 * Used on the relay thread only (it creates and uses the sockets); waits in slices of {@value #SLICE_MS} ms so that a
 * stop request ends it promptly.
 */
final class EngineSide
{
    /** What the engine said during the handshake. */
    record Handshaken(byte[] identity, boolean local, boolean headless, byte[] registration, byte[] ready,
        String vllmVersion, int blockSize)
    {
        /** @return the registration payload as lowercase hex. */
        String registrationHex()
        {
            return HexFormat.of().formatHex(registration);
        }
    }

    private static final System.Logger LOG = System.getLogger(EngineSide.class.getName());
    private static final int SLICE_MS = 100;

    private final ZMQ.Socket handshake;
    private final ZMQ.Socket input;
    private final ZMQ.Socket output;
    private final String handshakeEndpoint;
    private final String inputEndpoint;
    private final String outputEndpoint;
    private final ZMQ.Poller poller;
    private final int handshakeIndex;
    private final int inputIndex;
    private byte[] inputIdentity;

    /**
     * Bind the three sockets; port 0 picks a free port (see the endpoint accessors).
     */
    EngineSide(final ZContext context, final String handshakeAddress, final String inputAddress,
        final String outputAddress)
    {
        handshake = context.createSocket(SocketType.ROUTER);
        handshake.setLinger(0);
        handshakeEndpoint = bind(handshake, handshakeAddress, "--engine-handshake");
        input = context.createSocket(SocketType.ROUTER);
        input.setHWM(0);
        input.setLinger(1000);
        inputEndpoint = bind(input, inputAddress, "--input-address");
        output = context.createSocket(SocketType.PULL);
        output.setHWM(0);
        output.setLinger(0);
        outputEndpoint = bind(output, outputAddress, "--output-address");
        poller = context.createPoller(2);
        handshakeIndex = poller.register(handshake, ZMQ.Poller.POLLIN);
        inputIndex = poller.register(input, ZMQ.Poller.POLLIN);
    }

    private static String bind(final ZMQ.Socket socket, final String address, final String flag)
    {
        final String wanted = address.endsWith(":0") ? address.substring(0, address.length() - 1) + "*" : address;
        try
        {
            socket.bind(wanted);
        }
        catch (final RuntimeException ex)
        {
            throw new IllegalArgumentException(flag + " " + address + ": cannot bind: " + ex.getMessage(), ex);
        }
        final String bound = socket.getLastEndpoint();
        return null == bound ? address : bound;
    }

    /**
     * Perform the handshake with the engine.
     *
     * @param deadlineNs by when each step must have happened ({@link System#nanoTime()}).
     * @param running false once the tap is asked to stop.
     * @return what the engine sent.
     * @throws IOException when the engine does not follow the protocol or the deadline passes.
     * @throws RecordingTap.Stopped when the tap is stopped meanwhile.
     */
    Handshaken handshake(final long deadlineNs, final BooleanSupplier running) throws IOException
    {
        LOG.log(System.Logger.Level.INFO, "waiting for the engine''s HELLO on {0}", handshakeEndpoint);
        ZMsg hello = null;
        while (null == hello)
        {
            checkWaiting(deadlineNs, running, "HELLO");
            hello = 1 == poller.poll(SLICE_MS) && poller.pollin(handshakeIndex) ?
                ZMsg.recvMsg(handshake, ZMQ.DONTWAIT) : null;
        }
        if (2 != hello.size())
        {
            throw new IOException("the engine's HELLO has " + (hello.size() - 1) + " frames, expected 1");
        }
        final byte[] identity = hello.pop().getData();
        final JsonNode helloBody = decode(hello.pop().getData(), "HELLO");
        if (!"HELLO".equals(helloBody.path("status").asText()))
        {
            throw new IOException("the engine sent status " + helloBody.path("status") + " before HELLO");
        }
        handshake.send(identity, ZMQ.SNDMORE);
        handshake.send(init(), 0);
        LOG.log(System.Logger.Level.INFO, "engine {0} said HELLO; INIT sent, waiting for its registration and " +
            "READY (the engine loads its model first)", HexFormat.of().formatHex(identity));
        byte[] registration = null;
        byte[] ready = null;
        while (null == registration || null == ready)
        {
            checkWaiting(deadlineNs, running, null == registration ? "registration" : "READY");
            poller.poll(SLICE_MS);
            if (null == registration && poller.pollin(inputIndex))
            {
                registration = readRegistration(identity);
            }
            if (null == ready && poller.pollin(handshakeIndex))
            {
                ready = readReady();
            }
        }
        return handshaken(identity, helloBody, registration, ready);
    }

    private static Handshaken handshaken(final byte[] identity, final JsonNode hello, final byte[] registration,
        final byte[] ready)
    {
        String version = null;
        int blockSize = -1;
        if (registration.length > 0)
        {
            try
            {
                final JsonNode body = MsgPackTree.of(registration);
                version = body.path("vllm_version").isTextual() ? body.path("vllm_version").textValue() : null;
                blockSize = body.path("block_size").canConvertToInt() ? body.path("block_size").intValue() : -1;
            }
            catch (final IllegalArgumentException ex)
            {
                LOG.log(System.Logger.Level.WARNING, "the engine''s registration payload is not msgpack ({0}); it is " +
                    "relayed as it is", ex.getMessage());
            }
        }
        return new Handshaken(identity, hello.path("local").asBoolean(false), hello.path("headless").asBoolean(true),
            registration, ready, version, blockSize);
    }

    private byte[] readRegistration(final byte[] identity)
    {
        final ZMsg message = ZMsg.recvMsg(input, ZMQ.DONTWAIT);
        if (null == message)
        {
            return null;
        }
        final byte[] from = message.pop().getData();
        if (!Arrays.equals(identity, from))
        {
            LOG.log(System.Logger.Level.WARNING, "registration from identity {0}, HELLO came from {1}: input is " +
                "routed to the registering identity", HexFormat.of().formatHex(from),
                HexFormat.of().formatHex(identity));
        }
        inputIdentity = from;
        if (1 != message.size())
        {
            LOG.log(System.Logger.Level.WARNING, "the engine''s registration has {0} frames, vLLM expects 1; the " +
                "first is relayed", message.size());
        }
        return message.isEmpty() ? new byte[0] : message.pop().getData();
    }

    private byte[] readReady() throws IOException
    {
        final ZMsg message = ZMsg.recvMsg(handshake, ZMQ.DONTWAIT);
        if (null == message)
        {
            return null;
        }
        message.pop();
        final byte[] body = message.isEmpty() ? new byte[0] : message.pop().getData();
        final JsonNode ready = decode(body, "READY");
        if (!"READY".equals(ready.path("status").asText()))
        {
            throw new IOException("the engine sent status " + ready.path("status") + " where READY was expected");
        }
        return body;
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
            throw new IOException("no " + what + " from the engine within the handshake timeout " +
                "(--handshake-timeout)");
        }
    }

    private static JsonNode decode(final byte[] body, final String what) throws IOException
    {
        try
        {
            return MsgPackTree.of(body);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException("the engine's " + what + " is not a msgpack map: " + ex.getMessage(), ex);
        }
    }

    private byte[] init()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final MsgPackWriter writer = new MsgPackWriter().wrap(buffer, 0);
        writer.mapHeader(2).string("addresses").mapHeader(5)
            .string("inputs").arrayHeader(1).string(inputEndpoint)
            .string("outputs").arrayHeader(1).string(outputEndpoint)
            .string("coordinator_input").nil()
            .string("coordinator_output").nil()
            .string("frontend_stats_publish_address").nil()
            .string("parallel_config").mapHeader(0);
        return Arrays.copyOf(buffer.byteArray(), writer.length());
    }

    /** @return the identity to route input to: the one the engine registered with on the input socket. */
    byte[] inputIdentity()
    {
        return inputIdentity;
    }

    /** @return the handshake endpoint as bound. */
    String handshakeEndpoint()
    {
        return handshakeEndpoint;
    }

    /** @return the input endpoint as bound (what INIT names). */
    String inputEndpoint()
    {
        return inputEndpoint;
    }

    /** @return the output endpoint as bound (what INIT names). */
    String outputEndpoint()
    {
        return outputEndpoint;
    }

    /** @return the input ROUTER (frontend requests go to the engine through it). */
    ZMQ.Socket input()
    {
        return input;
    }

    /** @return the output PULL (engine outputs arrive on it). */
    ZMQ.Socket output()
    {
        return output;
    }

    /**
     * Close the handshake socket; the data sockets stay open for relaying.
     */
    void closeHandshake()
    {
        poller.close();
        handshake.close();
    }
}
