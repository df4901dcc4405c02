package dev.tapedeck.enginecore;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The frontend's side of vLLM's engine-core protocol, written from the specification with JeroMQ and msgpack-java (an
 * encoder and decoder independent of tapedeck's): binds the handshake ROUTER, answers HELLO with INIT, binds one
 * input ROUTER and one output PULL per client, checks each engine's registration and READY, then sends ADD, ABORT and
 * UTILITY messages and decodes EngineCoreOutputs.
 */
public final class TestFrontend implements AutoCloseable
{
    /** A decoded EngineCoreOutput. */
    public record Output(String requestId, List<Long> tokens, Integer finishReason, Value stopReason, Value tail,
        int length, Value kvTransferParams)
    {
    }

    /** A decoded EngineCoreOutputs message. */
    public record Outputs(int engineIndex, List<Output> outputs, MapValue stats, double timestamp, Value utility,
        List<String> finished)
    {
    }

    public final ZContext context = new ZContext();
    public final ZMQ.Socket handshake;
    public final String handshakeAddress;
    public final List<ZMQ.Socket> inputs = new ArrayList<>();
    public final List<ZMQ.Socket> outputs = new ArrayList<>();
    public final List<String> inputAddresses = new ArrayList<>();
    public final List<String> outputAddresses = new ArrayList<>();
    public final Map<Integer, MapValue> registrations = new HashMap<>();
    public final Map<Integer, MapValue> readies = new HashMap<>();

    public TestFrontend(final int clients)
    {
        handshake = context.createSocket(SocketType.ROUTER);
        handshakeAddress = "tcp://127.0.0.1:" + handshake.bindToRandomPort("tcp://127.0.0.1");
        for (int i = 0; i < clients; i++)
        {
            final ZMQ.Socket input = context.createSocket(SocketType.ROUTER);
            inputAddresses.add("tcp://127.0.0.1:" + input.bindToRandomPort("tcp://127.0.0.1"));
            inputs.add(input);
            final ZMQ.Socket output = context.createSocket(SocketType.PULL);
            outputAddresses.add("tcp://127.0.0.1:" + output.bindToRandomPort("tcp://127.0.0.1"));
            output.setReceiveTimeOut(10_000);
            outputs.add(output);
        }
        handshake.setReceiveTimeOut(20_000);
    }

    /**
     * Perform the handshake with {@code engines} engines, as vLLM's frontend does.
     */
    public void awaitEngines(final int engines) throws IOException
    {
        int ready = 0;
        while (ready < engines)
        {
            final ZMsg message = ZMsg.recvMsg(handshake);
            if (null == message)
            {
                throw new AssertionError("no handshake message within the timeout");
            }
            final byte[] identity = message.pop().getData();
            final int engine = (identity[0] & 0xff) | (identity[1] & 0xff) << 8;
            final MapValue body = unpack(message.pop().getData()).asMapValue();
            final String status = get(body, "status").asStringValue().asString();
            if (get(body, "local").asBooleanValue().getBoolean())
            {
                throw new AssertionError("a remote engine must say local=false");
            }
            if ("HELLO".equals(status))
            {
                handshake.sendMore(identity);
                handshake.send(init());
                for (final ZMQ.Socket input : inputs)
                {
                    input.setReceiveTimeOut(20_000);
                    final ZMsg registration = ZMsg.recvMsg(input);
                    if (2 != registration.size())
                    {
                        throw new AssertionError("registration must be one frame after the identity");
                    }
                    registration.pop();
                    registrations.put(engine, unpack(registration.pop().getData()).asMapValue());
                }
            }
            else if ("READY".equals(status))
            {
                readies.put(engine, body);
                ready++;
            }
            else
            {
                throw new AssertionError("unexpected handshake status " + status);
            }
        }
    }

    private byte[] init() throws IOException
    {
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packMapHeader(2).packString("addresses").packMapHeader(5);
        p.packString("inputs").packArrayHeader(inputAddresses.size());
        for (final String address : inputAddresses)
        {
            p.packString(address);
        }
        p.packString("outputs").packArrayHeader(outputAddresses.size());
        for (final String address : outputAddresses)
        {
            p.packString(address);
        }
        p.packString("coordinator_input").packNil().packString("coordinator_output").packNil()
            .packString("frontend_stats_publish_address").packNil();
        p.packString("parallel_config").packMapHeader(0);
        return p.toByteArray();
    }

    /**
     * An EngineCoreRequest in the newest (main) layout: 21 slots.
     */
    public static byte[] addPayload(final String requestId, final int[] prompt, final int maxTokens, final int client,
        final int[] stopTokenIds, final boolean ignoreEos) throws IOException
    {
        return addPayload(requestId, prompt, maxTokens, client, stopTokenIds, ignoreEos, ValueFactory.newNil());
    }

    /**
     * An EngineCoreRequest in the newest layout with a {@code lora_request} (the msgspec array form of LoRARequest,
     * or nil).
     */
    public static byte[] addPayload(final String requestId, final int[] prompt, final int maxTokens, final int client,
        final int[] stopTokenIds, final boolean ignoreEos, final Value loraRequest) throws IOException
    {
        return addPayload(requestId, prompt, maxTokens, client, stopTokenIds, ignoreEos, loraRequest, null);
    }

    /**
     * An EngineCoreRequest in the newest layout whose sampling params carry {@code extra_args.kv_transfer_params}, as
     * vLLM's frontend puts a request's {@code kv_transfer_params} there.
     */
    public static byte[] addPayload(final String requestId, final int[] prompt, final int maxTokens, final int client,
        final int[] stopTokenIds, final boolean ignoreEos, final Value loraRequest, final Value kvTransferParams)
        throws IOException
    {
        return addPayload(requestId, prompt, maxTokens, client, stopTokenIds, ignoreEos, loraRequest,
            kvTransferParams, ValueFactory.newNil());
    }

    /**
     * An EngineCoreRequest in the newest layout with {@code mm_features} (a list of MultiModalFeatureSpec maps).
     */
    public static byte[] addPayload(final String requestId, final int[] prompt, final int maxTokens, final int client,
        final int[] stopTokenIds, final boolean ignoreEos, final Value loraRequest, final Value kvTransferParams,
        final Value mmFeatures) throws IOException
    {
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(21).packString(requestId);
        p.packArrayHeader(prompt.length);
        for (final int id : prompt)
        {
            p.packInt(id);
        }
        p.packValue(mmFeatures);
        p.packMapHeader(null == kvTransferParams ? 4 : 5).packString("max_tokens").packInt(maxTokens)
            .packString("stop_token_ids");
        p.packArrayHeader(stopTokenIds.length);
        for (final int id : stopTokenIds)
        {
            p.packInt(id);
        }
        p.packString("ignore_eos").packBoolean(ignoreEos).packString("_eos_token_id").packInt(151645);
        if (null != kvTransferParams)
        {
            p.packString("extra_args").packMapHeader(1).packString("kv_transfer_params").packValue(kvTransferParams);
        }
        p.packNil(); // pooling
        p.packDouble(System.currentTimeMillis() / 1000.0);
        p.packValue(loraRequest);
        p.packNil().packNil().packNil().packNil(); // salt, dp rank, embeds, is_token_ids
        p.packInt(client).packInt(0).packInt(0); // client_index, wave, priority
        p.packNil().packBoolean(false).packNil().packNil().packNil().packBoolean(false).packNil();
        return p.toByteArray();
    }

    public void send(final int engine, final int client, final byte type, final byte[] payload)
    {
        final ZMQ.Socket input = inputs.get(client);
        input.sendMore(new byte[] {(byte)engine, (byte)(engine >> 8)});
        input.sendMore(new byte[] {type});
        input.send(payload);
    }

    public void add(final int engine, final String id, final int[] prompt, final int maxTokens, final int client)
        throws IOException
    {
        send(engine, client, (byte)0, addPayload(id, prompt, maxTokens, client, new int[0], false));
    }

    public void add(final int engine, final String id, final int[] prompt, final int maxTokens, final Value loraRequest)
        throws IOException
    {
        send(engine, 0, (byte)0, addPayload(id, prompt, maxTokens, 0, new int[0], false, loraRequest));
    }

    public void abort(final int engine, final String... ids) throws IOException
    {
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(ids.length);
        for (final String id : ids)
        {
            p.packString(id);
        }
        send(engine, 0, (byte)1, p.toByteArray());
    }

    public void utility(final int engine, final long callId, final String method, final Value... args)
        throws IOException
    {
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(4).packInt(0).packBigInteger(new java.math.BigInteger(Long.toUnsignedString(callId)))
            .packString(method).packValue(ValueFactory.newArray(args));
        send(engine, 0, (byte)3, p.toByteArray());
    }

    /**
     * @return the next EngineCoreOutputs on a client's output socket, or null after the timeout.
     */
    public Outputs next(final int client) throws IOException
    {
        final ZMsg message = ZMsg.recvMsg(outputs.get(client));
        if (null == message)
        {
            return null;
        }
        final ArrayValue root = unpack(message.pop().getData()).asArrayValue();
        final List<Output> list = new ArrayList<>();
        for (final Value v : root.get(1).asArrayValue())
        {
            final ArrayValue o = v.asArrayValue();
            final List<Long> tokens = new ArrayList<>();
            o.get(1).asArrayValue().forEach(t -> tokens.add(t.asIntegerValue().toLong()));
            final Integer finish = o.size() > 5 && !o.get(5).isNilValue() ? o.get(5).asIntegerValue().toInt() : null;
            list.add(new Output(o.get(0).asStringValue().asString(), tokens, finish,
                o.size() > 6 ? o.get(6) : ValueFactory.newNil(), o.size() > 11 ? o.get(11) : null, o.size(),
                o.size() > 8 ? o.get(8) : ValueFactory.newNil()));
        }
        final List<String> finished = new ArrayList<>();
        if (root.size() > 5 && !root.get(5).isNilValue())
        {
            root.get(5).asArrayValue().forEach(f -> finished.add(f.asStringValue().asString()));
        }
        return new Outputs(root.get(0).asIntegerValue().toInt(), list,
            root.get(2).isNilValue() ? null : root.get(2).asMapValue(), root.get(3).asFloatValue().toDouble(),
            root.size() > 4 ? root.get(4) : ValueFactory.newNil(), finished);
    }

    public static Value unpack(final byte[] bytes) throws IOException
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(bytes))
        {
            return unpacker.unpackValue();
        }
    }

    public static Value get(final MapValue map, final String key)
    {
        return map.map().get(ValueFactory.newString(key));
    }

    @Override
    public void close()
    {
        context.close();
    }
}
