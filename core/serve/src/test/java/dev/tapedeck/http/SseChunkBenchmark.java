package dev.tapedeck.http;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

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

import dev.tapedeck.engine.Request;

/**
 * Encoding one streamed token: the token's bytes appended to its choice, then a chat chunk event written into a
 * direct buffer (JSON escaping included), as {@code HttpStream} does per token per step. Run with {@code -prof gc}.
 * <p>
 * The buffer is reused here: on the server each step takes a pooled buffer on the event loop, whose buffer objects
 * Netty recycles only on its own (FastThreadLocal) threads, which JMH's threads are not. The whole server path,
 * pooling included, is measured on a real event loop by {@code SteadyStateAllocationIT}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dio.netty.leakDetection.level=disabled"})
public class SseChunkBenchmark
{
    private static final byte[][] TOKENS = {
        " the".getBytes(), " quick".getBytes(), "\"quoted\"".getBytes(), "\n".getBytes(), " caf\u00e9".getBytes(),
    };

    private final ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(512);
    private byte[] head;
    private Choice chat;
    private int next;

    /**
     * A chat stream head and one choice without stop strings.
     */
    @Setup(Level.Trial)
    public void setUp()
    {
        head = ("data: {\"id\":\"chatcmpl-0123456789abcdef0123456789abcdef\",\"object\":\"chat.completion.chunk\"," +
            "\"created\":1795261424,\"model\":\"Qwen/Qwen3-8B\",\"choices\":[").getBytes();
        chat = new Choice(null, 0, new Request("r", new int[] {1}), List.of(), false, true, null);
    }

    /**
     * @return bytes encoded.
     */
    @Benchmark
    public int chatTokenChunk()
    {
        chat.appendToken(TOKENS[next]);
        next = next + 1 == TOKENS.length ? 0 : next + 1;
        out.clear();
        final int length = chat.emittableLength();
        SseChunks.writeDeltaChunk(out, head, true, chat, length, null, 9, false, null, 0);
        chat.consume(length);
        return out.readableBytes();
    }
}
