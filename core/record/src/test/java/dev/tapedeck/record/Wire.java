package dev.tapedeck.record;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

/**
 * Engine-core messages built with msgpack-java (independent of tapedeck's codecs), for the tap's tests.
 */
public final class Wire
{
    private Wire()
    {
    }

    public static byte[] pack(final Value value)
    {
        try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker())
        {
            packer.packValue(value);
            return packer.toByteArray();
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    public static Value unpack(final byte[] bytes)
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(bytes))
        {
            return unpacker.unpackValue();
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /** A map from alternating keys (strings) and values (Value, String, Number, Boolean or null). */
    public static Value map(final Object... keysAndValues)
    {
        final Value[] kv = new Value[keysAndValues.length];
        for (int i = 0; i < keysAndValues.length; i++)
        {
            kv[i] = value(keysAndValues[i]);
        }
        return ValueFactory.newMap(kv);
    }

    public static Value array(final Object... elements)
    {
        final List<Value> values = new ArrayList<>();
        for (final Object element : elements)
        {
            values.add(value(element));
        }
        return ValueFactory.newArray(values);
    }

    public static Value value(final Object o)
    {
        if (null == o)
        {
            return ValueFactory.newNil();
        }
        if (o instanceof Value v)
        {
            return v;
        }
        if (o instanceof String s)
        {
            return ValueFactory.newString(s);
        }
        if (o instanceof Boolean b)
        {
            return ValueFactory.newBoolean(b);
        }
        if (o instanceof Double d)
        {
            return ValueFactory.newFloat(d);
        }
        if (o instanceof Number n)
        {
            return ValueFactory.newInteger(n.longValue());
        }
        if (o instanceof int[] ints)
        {
            return ValueFactory.newArray(Arrays.stream(ints).mapToObj(ValueFactory::newInteger).toArray(Value[]::new));
        }
        throw new IllegalArgumentException(o.getClass().toString());
    }

    /**
     * An EngineCoreRequest in the newest (main) layout: 21 slots.
     */
    public static byte[] add(final String requestId, final int[] prompt, final int maxTokens,
        final Value kvTransferParams)
    {
        final Value sampling = null == kvTransferParams ? map("max_tokens", maxTokens, "_eos_token_id", 151645) :
            map("max_tokens", maxTokens, "_eos_token_id", 151645, "extra_args",
                map("kv_transfer_params", kvTransferParams));
        return pack(array(requestId, prompt, null, sampling, null, System.currentTimeMillis() / 1000.0,
            null, null, null, null, null, 0, 0, 0, null, false, null, null, null, false, null));
    }

    public static byte[] add(final String requestId, final int[] prompt, final int maxTokens)
    {
        return add(requestId, prompt, maxTokens, null);
    }

    public static byte[] abort(final String... ids)
    {
        return pack(array((Object[])ids));
    }

    public static byte[] utility(final long callId, final String method)
    {
        return pack(array(0, ValueFactory.newInteger(new java.math.BigInteger(Long.toUnsignedString(callId))),
            method, array()));
    }

    /** An EngineCoreOutput: [id, tokens, nil, nil, nil, finish]. */
    public static Value output(final String id, final int[] tokens, final Integer finish)
    {
        return array(id, tokens, null, null, null, finish);
    }

    /** An EngineCoreOutput carrying {@code tail} at index {@code tailIndex} (9, 10 or 11). */
    public static Value output(final String id, final int[] tokens, final Integer finish, final int tailIndex,
        final Object tail)
    {
        final Object[] fields = new Object[tailIndex + 1];
        fields[0] = id;
        fields[1] = tokens;
        fields[5] = finish;
        fields[tailIndex] = tail;
        return array(fields);
    }

    /** EngineCoreOutputs: [0, outputs, stats, timestamp(, nil, finished)]. */
    public static byte[] outputs(final List<Value> outputs, final Value stats, final List<String> finished)
    {
        final Value list = ValueFactory.newArray(outputs);
        final Value statsValue = null == stats ? ValueFactory.newNil() : stats;
        if (null == finished)
        {
            return pack(array(0, list, statsValue, 1234.5));
        }
        return pack(array(0, list, statsValue, 1234.5, null, array(finished.toArray())));
    }

    public static Value prefillStats(final int prompt, final int local, final int external)
    {
        return map("num_prompt_tokens", prompt, "num_computed_tokens", prompt - local - external,
            "num_cached_tokens", local + external, "num_local_cached_tokens", local,
            "num_external_cached_tokens", external);
    }

    public static Value stats(final int running, final int waiting)
    {
        return map("num_running_reqs", running, "num_waiting_reqs", waiting, "step_counter", 7, "current_wave", 0,
            "kv_cache_usage", 0.25, "prefix_cache_stats", map("reset", false, "requests", 1, "queries", 16,
                "hits", 0));
    }
}
