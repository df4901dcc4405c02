package dev.tapedeck.record;

import java.util.ArrayList;
import java.util.List;

import org.msgpack.value.MapValue;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The frontend's side of vLLM's engine-core protocol in raw JeroMQ, keeping every byte it receives: binds the
 * handshake ROUTER, the input ROUTER and the output PULL on ephemeral ports, answers HELLO with INIT, keeps the
 * registration and READY frames, then sends the frames it is told to and receives whole messages.
 */
public final class RecordingFrontend implements AutoCloseable
{
    public final ZContext context = new ZContext();
    public final ZMQ.Socket handshake;
    public final ZMQ.Socket input;
    public final ZMQ.Socket output;
    public final String handshakeAddress;
    public final String inputAddress;
    public final String outputAddress;
    public byte[] engineIdentity;
    public byte[] hello;
    public byte[] registration;
    public byte[] ready;

    public RecordingFrontend()
    {
        handshake = context.createSocket(SocketType.ROUTER);
        handshakeAddress = "tcp://127.0.0.1:" + handshake.bindToRandomPort("tcp://127.0.0.1");
        input = context.createSocket(SocketType.ROUTER);
        input.setHWM(0);
        inputAddress = "tcp://127.0.0.1:" + input.bindToRandomPort("tcp://127.0.0.1");
        output = context.createSocket(SocketType.PULL);
        output.setHWM(0);
        outputAddress = "tcp://127.0.0.1:" + output.bindToRandomPort("tcp://127.0.0.1");
        handshake.setReceiveTimeOut(30_000);
        input.setReceiveTimeOut(30_000);
        output.setReceiveTimeOut(30_000);
    }

    /** HELLO, INIT, registration, READY, as vLLM's frontend does them. */
    public RecordingFrontend awaitEngine()
    {
        final ZMsg helloMessage = ZMsg.recvMsg(handshake);
        if (null == helloMessage)
        {
            throw new AssertionError("no HELLO from the tap");
        }
        engineIdentity = helloMessage.pop().getData();
        hello = helloMessage.pop().getData();
        handshake.sendMore(engineIdentity);
        handshake.send(Wire.pack(Wire.map("addresses", Wire.map("inputs", Wire.array(inputAddress), "outputs",
            Wire.array(outputAddress), "coordinator_input", null, "coordinator_output", null,
            "frontend_stats_publish_address", null), "parallel_config", Wire.map())));
        final ZMsg registrationMessage = ZMsg.recvMsg(input);
        if (null == registrationMessage || 2 != registrationMessage.size())
        {
            throw new AssertionError("registration must be one frame after the identity: " + registrationMessage);
        }
        registrationMessage.pop();
        registration = registrationMessage.pop().getData();
        final ZMsg readyMessage = ZMsg.recvMsg(handshake);
        if (null == readyMessage)
        {
            throw new AssertionError("no READY from the tap");
        }
        readyMessage.pop();
        ready = readyMessage.pop().getData();
        return this;
    }

    public MapValue helloBody()
    {
        return Wire.unpack(hello).asMapValue();
    }

    public void send(final List<byte[]> frames)
    {
        input.sendMore(engineIdentity);
        for (int i = 0; i < frames.size(); i++)
        {
            input.send(frames.get(i), i < frames.size() - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    public void send(final byte type, final byte[] payload)
    {
        send(List.of(new byte[] {type}, payload));
    }

    /** @return the frames of the next output message, or null after the timeout. */
    public List<byte[]> receive()
    {
        final byte[] first = output.recv(0);
        if (null == first)
        {
            return null;
        }
        final List<byte[]> frames = new ArrayList<>();
        frames.add(first);
        while (output.hasReceiveMore())
        {
            frames.add(output.recv(0));
        }
        return frames;
    }

    @Override
    public void close()
    {
        context.close();
    }
}
