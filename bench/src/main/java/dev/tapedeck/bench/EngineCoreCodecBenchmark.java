package dev.tapedeck.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import dev.tapedeck.protocol.enginecore.AddRequest;
import dev.tapedeck.protocol.enginecore.AddRequestDecoder;
import dev.tapedeck.protocol.enginecore.EngineCoreOutputsEncoder;
import dev.tapedeck.protocol.enginecore.SchedulerStats;
import dev.tapedeck.protocol.enginecore.VllmLine;

/**
 * The engine-core codecs: encoding one step's {@code EngineCoreOutputs} for 256 running requests (one token each,
 * scheduler stats), and decoding one {@code EngineCoreRequest} (ADD, 1,000 prompt tokens, newest layout). Run with
 * {@code -prof gc}; decoding allocates the request id and prompt array by design (they outlive the message).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED")
public class EngineCoreCodecBenchmark
{
    private final EngineCoreOutputsEncoder encoder = new EngineCoreOutputsEncoder();
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64 * 1024);
    private final SchedulerStats stats = new SchedulerStats();
    private final byte[][] ids = new byte[256][];
    private final int[] token = {9707};
    private final AddRequestDecoder decoder = new AddRequestDecoder();
    private final AddRequest add = new AddRequest();
    private UnsafeBuffer request;
    private int requestLength;

    /**
     * Request ids and one encoded ADD.
     *
     * @throws IOException never.
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = ("chatcmpl-0123456789abcdef0123456789abcdef-" + i).getBytes(StandardCharsets.UTF_8);
        }
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(21).packString("chatcmpl-0123456789abcdef0123456789abcdef").packArrayHeader(1000);
        for (int i = 0; i < 1000; i++)
        {
            p.packInt(1000 + i * 97);
        }
        p.packNil().packMapHeader(3).packString("max_tokens").packInt(256).packString("ignore_eos").packBoolean(true)
            .packString("_eos_token_id").packInt(151645).packNil().packDouble(1.7952614245e9);
        p.packNil().packNil().packNil().packNil().packNil().packInt(0).packInt(0).packInt(0);
        p.packNil().packBoolean(false).packNil().packNil().packNil().packBoolean(false).packNil();
        final byte[] bytes = p.toByteArray();
        request = new UnsafeBuffer(bytes);
        requestLength = bytes.length;
        stats.numRunningReqs = 256;
    }

    /**
     * @return encoded length.
     */
    @Benchmark
    public int encodeStepOf256()
    {
        encoder.begin(buffer, VllmLine.NEWEST, 0);
        for (final byte[] id : ids)
        {
            encoder.output(id, token, 0, 1, EngineCoreOutputsEncoder.NO_FINISH, EngineCoreOutputsEncoder.NONE, null,
                1000, EngineCoreOutputsEncoder.NONE);
        }
        return encoder.end(stats, 1.0, null, 0);
    }

    /**
     * @return prompt length decoded.
     */
    @Benchmark
    public int decodeAddRequest()
    {
        decoder.decode(request, 0, requestLength, add);
        return add.promptLength();
    }
}
