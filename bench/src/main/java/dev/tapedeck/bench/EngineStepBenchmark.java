package dev.tapedeck.bench;

import java.util.concurrent.TimeUnit;

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

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;

/**
 * One engine step with 256 running decodes: compose (budget, running set), time (step model), complete (256 tokens
 * to the sink). Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the allocation per step.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED")
public class EngineStepBenchmark
{
    private static final int RUNNING = 256;

    private Engine engine;
    private long nowNs;
    private final CountingSink sink = new CountingSink();

    /** Counts tokens. */
    static final class CountingSink implements OutputSink
    {
        long tokens;

        @Override
        public boolean onToken(final Request request, final int tokenId)
        {
            tokens++;
            return false;
        }

        @Override
        public void onFinished(final Request request)
        {
        }

        @Override
        public void onBatchEnd(final long batchNs)
        {
        }
    }

    /**
     * An engine's settings with huge blocks, so that the KV pool holds every context for the whole run: capacity is not
     * what the step benchmarks measure (this one, {@code PlayStepBenchmark}, {@link EngineCoreScaleBench}).
     *
     * @param maxNumSeqs the running-set cap.
     * @param requests how many requests the pool must hold.
     * @return the settings, not concluded.
     */
    public static EngineConfig roomyConfig(final int maxNumSeqs, final int requests)
    {
        return new EngineConfig().maxNumSeqs(maxNumSeqs).maxModelLen(1 << 24).blockSize(1 << 14)
            .kvCacheBlocks(requests << 10);
    }

    /**
     * 256 requests decoding with a context of about 1000 tokens each.
     */
    @Setup(Level.Trial)
    public void setUp()
    {
        final EngineConfig config = roomyConfig(RUNNING, RUNNING)
            .latencyModel(new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000))
            .tokenSpace(new int[] {10, 11, 12, 13, 14, 15, 16, 17}, 2).conclude();
        engine = new Engine(config, sink, 0);
        for (int i = 0; i < RUNNING; i++)
        {
            engine.submit(new Request("r" + i, new int[1000]).maxTokens((1 << 24) - 1000), 0);
        }
        engine.doWork(0);
        for (int i = 0; i < 200; i++)
        {
            step();
        }
    }

    /**
     * @return tokens emitted so far (consumed by JMH).
     */
    @Benchmark
    public long step()
    {
        nowNs = engine.nextDeadlineNs();
        engine.doWork(nowNs);
        return sink.tokens;
    }
}
