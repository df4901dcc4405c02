package dev.tapedeck.protocol.msgpack;

import java.util.Arrays;
import java.util.Random;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Seeded property tests with msgpack-java (msgpack-core) as the oracle, in both directions: what our writer produces
 * is byte-for-byte what msgpack-core produces for the same value (and msgpack-core reads it back to the same value),
 * and what msgpack-core produces our reader reads back to the original value.
 */
class MsgPackRoundTripTest
{
    private final MsgPackWriter writer = new MsgPackWriter();
    private final MsgPackReader reader = new MsgPackReader();
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64);

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void shouldWriteExactlyWhatMsgpackJavaWrites(final long seed)
    {
        final Random random = new Random(seed);
        for (int i = 0; i < 300; i++)
        {
            final Object value = Values.random(random, 0);
            writer.wrap(buffer, 0);
            Values.write(writer, value);
            final byte[] ours = new byte[writer.length()];
            buffer.getBytes(0, ours);
            final byte[] oracle = Values.packWithOracle(value);
            assertArrayEquals(oracle, ours, "value " + describe(value));
            assertEquals(Values.unpackWithOracle(oracle), Values.unpackWithOracle(ours));
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 14, 15, 16, 17, 18})
    void shouldReadWhatMsgpackJavaWrites(final long seed)
    {
        final Random random = new Random(seed);
        for (int i = 0; i < 300; i++)
        {
            final Object value = Values.random(random, 0);
            final byte[] oracle = Values.packWithOracle(value);
            reader.wrap(new UnsafeBuffer(oracle), 0, oracle.length);
            final Object back = Values.read(reader);
            assertTrue(reader.ok(), reader.errorMessage());
            assertEquals(oracle.length, reader.position(), "consumed the whole value");
            assertTrue(deepEquals(value, back), describe(value) + " read back as " + describe(back));
            reader.wrap(new UnsafeBuffer(oracle), 0, oracle.length);
            reader.skipValue();
            assertTrue(reader.ok());
            assertEquals(oracle.length, reader.position(), "skipValue skips exactly one value");
        }
    }

    /**
     * Headers patched after the fact move what follows them: backwards over overlapping bytes when the header is
     * smaller than reserved, forwards when an array outgrows 65,535 elements. Every kind of Agrona buffer.
     */
    @Test
    void patchedHeadersMoveOverlappingTailsIntact()
    {
        final java.util.List<Object> small = new java.util.ArrayList<>();
        final java.util.List<Object> large = new java.util.ArrayList<>();
        for (int i = 0; i < 7; i++)
        {
            small.add("element " + i);
        }
        for (int i = 0; i < 70_000; i++)
        {
            large.add((long)(i * 31 % 1000));
        }
        final java.util.List<Object> value = java.util.List.of(small, large, small);
        final byte[] oracle = Values.packWithOracle(value);
        for (final MutableDirectBuffer target : new MutableDirectBuffer[] {new ExpandableDirectByteBuffer(16),
            new ExpandableArrayBuffer(16), new UnsafeBuffer(new byte[oracle.length + 16])})
        {
            writer.wrap(target, 0);
            final int outer = writer.beginArray();
            for (final Object element : value)
            {
                final java.util.List<?> list = (java.util.List<?>)element;
                final int marker = writer.beginArray();
                list.forEach(v -> Values.write(writer, v));
                writer.endArray(marker, list.size());
            }
            writer.endArray(outer, value.size());
            final byte[] ours = new byte[writer.length()];
            target.getBytes(0, ours);
            assertArrayEquals(oracle, ours, target.getClass().getSimpleName());
        }
    }

    @Test
    void shouldPatchAFixArrayInPlaceAndRefuseACountItCannotHold()
    {
        final java.util.List<Object> value = java.util.List.of(1L, "two", java.util.List.of(3L), 4.5);
        writer.wrap(buffer, 0);
        final int marker = writer.beginFixArray();
        value.forEach(v -> Values.write(writer, v));
        writer.endFixArray(marker, value.size());
        final byte[] ours = new byte[writer.length()];
        buffer.getBytes(0, ours);
        assertArrayEquals(Values.packWithOracle(value), ours);
        assertThrows(IllegalArgumentException.class, () -> writer.endFixArray(marker, 16));
    }

    private static boolean deepEquals(final Object a, final Object b)
    {
        if (a instanceof byte[] && b instanceof byte[])
        {
            return Arrays.equals((byte[])a, (byte[])b);
        }
        if (a instanceof java.util.List && b instanceof java.util.List)
        {
            final java.util.List<?> x = (java.util.List<?>)a;
            final java.util.List<?> y = (java.util.List<?>)b;
            if (x.size() != y.size())
            {
                return false;
            }
            for (int i = 0; i < x.size(); i++)
            {
                if (!deepEquals(x.get(i), y.get(i)))
                {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof java.util.Map && b instanceof java.util.Map)
        {
            final java.util.Map<?, ?> x = (java.util.Map<?, ?>)a;
            final java.util.Map<?, ?> y = (java.util.Map<?, ?>)b;
            return x.size() == y.size() && x.entrySet().stream()
                .allMatch(e -> y.containsKey(e.getKey()) && deepEquals(e.getValue(), y.get(e.getKey())));
        }
        return java.util.Objects.equals(a, b);
    }

    private static String describe(final Object value)
    {
        final String text = value instanceof byte[] ? "bin[" + ((byte[])value).length + "]" : String.valueOf(value);
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }
}
