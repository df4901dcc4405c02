package dev.tapedeck.record;

import java.util.ArrayList;
import java.util.List;

import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.net.ZmqConnector;

/**
 * A fake vLLM engine core driven by the test, in raw JeroMQ: does the engine's side of the handshake with bytes the
 * test chooses (HELLO, registration, READY), then receives every frame sent to it and sends the frames it is told to.
 */
final class ScriptedEngine implements AutoCloseable
{
    private static final long DEADLINE_NS = 20_000_000_000L;

    final ZContext context = new ZContext();
    private final ZmqConnector connector = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS);
    ZMQ.Socket handshake;
    ZMQ.Socket input;
    ZMQ.Socket output;
    MapValue init;

    static byte[] hello(final boolean local, final boolean headless)
    {
        return Wire.pack(Wire.map("status", "HELLO", "local", local, "headless", headless));
    }

    static byte[] registration(final String vllmVersion)
    {
        return Wire.pack(Wire.map("max_model_len", 4096, "num_gpu_blocks", 1000, "block_size", 16,
            "dp_stats_address", null, "dtype", "bfloat16", "vllm_version", vllmVersion, "world_size", 1,
            "data_parallel_size", 1, "kv_cache_size_tokens", 16000, "kv_cache_max_concurrency", 3.9,
            "something_newer", Wire.array(1, "x")));
    }

    static byte[] ready()
    {
        return Wire.pack(Wire.map("status", "READY", "local", false, "headless", true, "num_gpu_blocks", 1000,
            "dp_stats_address", null));
    }

    /**
     * HELLO, INIT, then (when {@code registration} is not null) registration on the input and READY.
     */
    ScriptedEngine handshake(final String tapHandshake, final byte[] hello, final byte[] registration,
        final byte[] ready)
    {
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        handshake = connector.open(context, SocketType.DEALER, s -> s.setIdentity(new byte[] {0, 0}), tapHandshake,
            deadlineNs);
        handshake.send(hello, 0);
        handshake.setReceiveTimeOut(20_000);
        final byte[] initFrame = handshake.recv(0);
        if (null == initFrame)
        {
            throw new AssertionError("no INIT from the tap");
        }
        init = Wire.unpack(initFrame).asMapValue();
        final MapValue addresses = get(init, "addresses").asMapValue();
        final String inputAddress = get(addresses, "inputs").asArrayValue().get(0).asStringValue().asString();
        final String outputAddress = get(addresses, "outputs").asArrayValue().get(0).asStringValue().asString();
        input = connector.open(context, SocketType.DEALER, s ->
        {
            s.setIdentity(new byte[] {0, 0});
            s.setHWM(0);
        }, inputAddress, deadlineNs);
        input.setReceiveTimeOut(20_000);
        output = connector.open(context, SocketType.PUSH, s -> s.setHWM(0), outputAddress, deadlineNs);
        if (null != registration)
        {
            input.send(registration, 0);
            handshake.send(ready, 0);
        }
        return this;
    }

    static Value get(final MapValue map, final String key)
    {
        return map.map().get(ValueFactory.newString(key));
    }

    /** @return the frames of the next message on the input, or null after the timeout. */
    List<byte[]> receive()
    {
        final byte[] first = input.recv(0);
        if (null == first)
        {
            return null;
        }
        final List<byte[]> frames = new ArrayList<>();
        frames.add(first);
        while (input.hasReceiveMore())
        {
            frames.add(input.recv(0));
        }
        return frames;
    }

    void send(final List<byte[]> frames)
    {
        for (int i = 0; i < frames.size(); i++)
        {
            output.send(frames.get(i), i < frames.size() - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    void send(final byte[] frame)
    {
        output.send(frame, 0);
    }

    @Override
    public void close()
    {
        context.close();
    }
}
