package dev.tapedeck.protocol.enginecore;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;

import org.agrona.ExpandableDirectByteBuffer;
import org.junit.jupiter.api.Test;

import dev.tapedeck.protocol.msgpack.MsgPackReader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Encoding a typical step (256 outputs, scheduler stats) and reading it back with the flyweight reader allocate
 * nothing, measured with the thread's allocated-bytes counter.
 */
class CodecAllocationTest
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    private final EngineCoreOutputsEncoder encoder = new EngineCoreOutputsEncoder();
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64 * 1024);
    private final MsgPackReader reader = new MsgPackReader();
    private final SchedulerStats stats = new SchedulerStats();
    private final byte[][] ids = new byte[256][];
    private final int[] tokens = {151643, 42};

    @Test
    void shouldEncodeAndReadAStepWithoutAllocating()
    {
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = ("chatcmpl-0123456789abcdef0123456789ab-" + i).getBytes(StandardCharsets.UTF_8);
        }
        long tokensRead = 0;
        for (int i = 0; i < 20_000; i++)
        {
            tokensRead += roundTrip(i);
        }
        final long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 20_000; i++)
        {
            tokensRead += roundTrip(i);
        }
        final long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        assertEquals(40_000L * 256, tokensRead);
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes for 20,000 steps");
    }

    private long roundTrip(final int step)
    {
        encoder.begin(buffer, VllmLine.NEWEST, 0);
        for (int r = 0; r < ids.length; r++)
        {
            encoder.output(ids[r], tokens, 1, 1, EngineCoreOutputsEncoder.NO_FINISH, EngineCoreOutputsEncoder.NONE,
                null, 100, 0 == step ? 0 : EngineCoreOutputsEncoder.NONE);
        }
        stats.numRunningReqs = 256;
        stats.stepCounter = step;
        final int length = encoder.end(stats, step * 0.01, null, 0);
        reader.wrap(buffer, 0, length);
        reader.readArrayHeader();
        reader.readInt();
        final int outputs = reader.readArrayHeader();
        long tokenCount = 0;
        for (int r = 0; r < outputs; r++)
        {
            final int fields = reader.readArrayHeader();
            reader.skipValue();
            tokenCount += reader.readArrayHeader();
            reader.skipValue();
            for (int f = 2; f < fields; f++)
            {
                reader.skipValue();
            }
        }
        reader.skipValue();
        reader.readDouble();
        return reader.ok() ? tokenCount : -1;
    }
}
