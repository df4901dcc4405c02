package dev.tapedeck.enginecore;

import java.util.HashMap;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import dev.tapedeck.bench.EngineStepBenchmark;
import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.Request;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.protocol.enginecore.VllmLine;

/**
 * The play engine thread's work per step without the transport: {@code EngineCoreScaleBench}'s engine (256 running
 * decodes, 1 us steps) stepping, its outputs batched and encoded into the {@code EngineCoreOutputs} message the
 * engine hands to JeroMQ, the hand-over itself left out. What the engine thread spends per message on top of the
 * socket's send; below about 7 us per step the engine keeps a JeroMQ I/O thread busy on two cores.
 * <p>
 * Run with {@code java -cp bench/target/benchmarks.jar org.openjdk.jmh.Main PlayStepBenchmark -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED")
public class PlayStepBenchmark
{
    private static final int RUNNING = 256;

    /**
     * KV block size in tokens: 16384 (no decode in the run needs a new block, as in {@code EngineCoreScaleBench}) or
     * vLLM's default 16 (each step some of the 256 requests fill their last block and take a new one).
     */
    @Param({"16384", "16"})
    public int blockSize;

    private Engine engine;
    private long bytes;

    @Setup(Level.Trial)
    public void setUp()
    {
        // room for about 2 million steps (a run of -wi 3 -i 5 takes under 1.5 million)
        final EngineConfig config = EngineStepBenchmark.roomyConfig(RUNNING, RUNNING).blockSize(blockSize)
            .kvCacheBlocks(RUNNING * ((1 << 21) / blockSize + 2))
            .latencyModel(new StepLatencyModel(new StepCoefficients("bench", 1, 0, 0, 0, 0, "bench"))).conclude();
        final OutputBatcher batcher = new OutputBatcher(0, VllmLine.NEWEST, 1,
            (client, message) -> bytes += message.length, new HashMap<>());
        engine = new Engine(config, batcher, 0);
        batcher.engine(engine);
        for (int i = 0; i < RUNNING; i++)
        {
            // as play without a tokenizer (EngineCoreScaleBench's): output tokens drawn from the request's prompt
            final int[] prompt = {100, 101, 102, 103, 104, 105, 106, 107};
            final Request request = new Request("bench-" + i, prompt).maxTokens((1 << 24) - 8).ignoreEos(true)
                .tokenPool(prompt);
            request.attachment(new PlayRequest(request, 0));
            engine.submit(request, 0);
        }
        engine.doWork(0);
        for (int i = 0; i < 200; i++)
        {
            step();
        }
    }

    /**
     * @return bytes handed over so far (so the work is not optimised away).
     */
    @Benchmark
    public long step()
    {
        engine.doWork(engine.nextDeadlineNs());
        return bytes;
    }
}
