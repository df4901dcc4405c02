package dev.tapedeck.protocol.enginecore;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;

import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
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
    /**
     * Measured windows at most: the first that allocates under 1 KiB passes. A window can catch the JIT replacing the
     * warm-up's code on a busy machine (an allocation the compiled code does not make); an allocation per call shows in
     * every window (20,000 calls, kilobytes at least).
     */
    private static final int WINDOWS = 5;

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
        long allocated = Long.MAX_VALUE;
        for (int window = 0; window < WINDOWS && allocated >= 1024; window++)
        {
            final long before = THREADS.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 20_000; i++)
            {
                tokensRead += roundTrip(i);
            }
            allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
            assertEquals(40_000L * 256 + window * 20_000L * 256, tokensRead);
        }
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes for 20,000 steps");
    }

    /**
     * Decoding ADD requests allocates nothing once the reusable request has grown: the real multimodal frame captured
     * from a vLLM frontend and a typical text request of today's layout (1,000 prompt tokens, sampling parameters
     * with stop token ids, seed, EOS and KV transfer parameters).
     */
    @Test
    void shouldDecodeRequestsWithoutAllocating() throws Exception
    {
        final byte[] captured = TestData.hex("vllm-vcr-fixtures/mm_request_large_aux.hex");
        final byte[] typical = typicalTextRequest();
        final UnsafeBuffer capturedView = new UnsafeBuffer(captured);
        final UnsafeBuffer typicalView = new UnsafeBuffer(typical);
        final AddRequestDecoder decoder = new AddRequestDecoder();
        final AddRequest request = new AddRequest();
        long checksum = 0;
        for (int i = 0; i < 20_000; i++)
        {
            checksum += decodeBoth(decoder, request, capturedView, captured.length, typicalView, typical.length);
        }
        long allocated = Long.MAX_VALUE;
        for (int window = 0; window < WINDOWS && allocated >= 1024; window++)
        {
            final long before = THREADS.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 20_000; i++)
            {
                checksum += decodeBoth(decoder, request, capturedView, captured.length, typicalView, typical.length);
            }
            allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
            assertEquals((40_000L + window * 20_000L) * (259 + 1000 + 300), checksum);
        }
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes for 40,000 decodes");
    }

    private static long decodeBoth(final AddRequestDecoder decoder, final AddRequest request,
        final UnsafeBuffer captured, final int capturedLength, final UnsafeBuffer typical, final int typicalLength)
    {
        long sum = 0;
        if (decoder.decode(captured, 0, capturedLength, request))
        {
            sum += request.promptLength();
        }
        if (decoder.decode(typical, 0, typicalLength, request) && request.hasSeed && 7 == request.eosTokenId)
        {
            sum += request.promptLength() + request.maxTokens;
        }
        return sum;
    }

    private static byte[] typicalTextRequest() throws java.io.IOException
    {
        final org.msgpack.core.MessageBufferPacker p = org.msgpack.core.MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(13).packString("cmpl-5f0c7e1d2b3a4c5d8e9f0a1b2c3d4e5f-0");
        p.packArrayHeader(1000);
        for (int i = 0; i < 1000; i++)
        {
            p.packInt(100 + i * 37 % 150_000);
        }
        p.packNil();
        p.packMapHeader(7).packString("temperature").packDouble(0.7).packString("max_tokens").packInt(300)
            .packString("stop_token_ids").packArrayHeader(2).packInt(151643).packInt(151645)
            .packString("seed").packInt(42).packString("_eos_token_id").packInt(7)
            .packString("output_kind").packInt(1).packString("extra_args").packMapHeader(1)
            .packString("kv_transfer_params").packMapHeader(1).packString("do_remote_decode").packBoolean(true);
        p.packNil().packDouble(1795261424.5).packNil().packNil().packNil().packNil().packInt(0).packInt(0).packInt(0);
        return p.toByteArray();
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
