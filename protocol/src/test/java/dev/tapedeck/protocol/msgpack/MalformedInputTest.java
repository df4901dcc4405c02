package dev.tapedeck.protocol.msgpack;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Malformed input turns into an error code, never an exception, never a hang: every prefix of valid values, random
 * garbage, the unused byte, wrong types and lengths beyond the input.
 */
class MalformedInputTest
{
    private final MsgPackReader reader = new MsgPackReader();

    @Test
    void shouldReportTruncationAtEveryCutOfAValidValue()
    {
        final Random random = new Random(21);
        for (int i = 0; i < 200; i++)
        {
            final byte[] whole = Values.packWithOracle(Values.random(random, 0));
            for (int cut = 0; cut < whole.length; cut++)
            {
                reader.wrap(new UnsafeBuffer(whole), 0, cut);
                reader.skipValue();
                assertEquals(MsgPackReader.TRUNCATED, reader.error(), "cut at " + cut + " of " + whole.length);
                assertTrue(reader.position() <= cut);
            }
        }
    }

    @Test
    void shouldSurviveRandomGarbage()
    {
        final Random random = new Random(22);
        final byte[] garbage = new byte[4096];
        for (int round = 0; round < 2000; round++)
        {
            random.nextBytes(garbage);
            final int length = 1 + random.nextInt(garbage.length);
            reader.wrap(new UnsafeBuffer(garbage), 0, length);
            int values = 0;
            while (reader.hasRemaining() && values++ < length)
            {
                final int before = reader.position();
                reader.skipValue();
                assertTrue(reader.position() > before || !reader.ok(), "progress or error");
            }
            assertTrue(reader.position() <= length);
        }
    }

    @Test
    void shouldRejectTheUnusedFormatByte()
    {
        reader.wrap(new UnsafeBuffer(new byte[] {(byte)0x92, 0x01, (byte)0xc1}), 0, 3);
        assertEquals(ValueType.ARRAY, reader.nextType());
        reader.skipValue();
        assertEquals(MsgPackReader.INVALID_FORMAT, reader.error());
        assertTrue(reader.errorMessage().contains("byte 2"), reader.errorMessage());
    }

    @Test
    void shouldReportWrongTypesAndStayInErrorWithoutMoving()
    {
        reader.wrap(new UnsafeBuffer(new byte[] {(byte)0xa3, 'a', 'b', 'c', 0x05}), 0, 5);
        assertEquals(-1, reader.readArrayHeader());
        assertEquals(MsgPackReader.WRONG_TYPE, reader.error());
        final int position = reader.position();
        assertEquals(0, reader.readLong());
        assertEquals(null, reader.readString());
        assertFalse(reader.readBoolean());
        assertEquals(position, reader.position(), "reads after an error do not move");
        assertEquals(MsgPackReader.WRONG_TYPE, reader.error(), "the first error is kept");
    }

    @Test
    void shouldRejectLengthsBeyondTheInput()
    {
        // array32 claiming 2^31-1 elements, str32 claiming 1 GiB
        reader.wrap(new UnsafeBuffer(new byte[] {(byte)0xdd, 0x7f, (byte)0xff, (byte)0xff, (byte)0xff, 0}), 0, 6);
        assertEquals(-1, reader.readArrayHeader());
        assertEquals(MsgPackReader.TRUNCATED, reader.error());
        reader.wrap(new UnsafeBuffer(new byte[] {(byte)0xdb, 0x40, 0, 0, 0, 'x'}), 0, 6);
        assertEquals(null, reader.readString());
        assertEquals(MsgPackReader.TRUNCATED, reader.error());
    }

    @Test
    void shouldRefuseAUint64AboveLongMaxAsASignedLongButKeepItsBits()
    {
        final byte[] callId = {(byte)0xcf, (byte)0x80, 0, 0, 0, 0, 0, 0, 5};
        reader.wrap(new UnsafeBuffer(callId), 0, callId.length);
        assertEquals(0x8000000000000005L, reader.readUnsignedBits());
        assertTrue(reader.ok());
        reader.wrap(new UnsafeBuffer(callId), 0, callId.length);
        reader.readLong();
        assertEquals(MsgPackReader.OVERFLOW, reader.error());
    }

    @Test
    void shouldMatchKeysWithoutAllocating()
    {
        final byte[] map = Values.packWithOracle(java.util.Map.of("max_tokens", 16L));
        reader.wrap(new UnsafeBuffer(map), 0, map.length);
        assertEquals(1, reader.readMapHeader());
        assertTrue(reader.readStringEquals("max_tokens".getBytes()));
        assertEquals(16, reader.readInt());
        assertFalse(reader.hasRemaining());
    }
}
