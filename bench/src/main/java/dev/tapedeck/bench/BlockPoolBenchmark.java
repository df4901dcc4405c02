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
import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kv.BlockPool;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;

/**
 * The KV block pool: one block's life (allocate, possibly evicting a cached hash; cache under a hash; release to the
 * free queue), the prefix lookup a request makes at admission, and one engine step with 256 running requests and the
 * real block size (16 tokens, so a request takes a new block every 16 decode steps). Run with {@code -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED")
public class BlockPoolBenchmark
{
    private static final int POOL_BLOCKS = 1 << 16;
    private static final int RUNNING = 256;
    private static final int OUTPUT_TOKENS = 512;

    private final BlockPool pool = new BlockPool(POOL_BLOCKS);
    private final long[] promptHashes = new BlockHasher("0").blockHashes(prompt(1024, 7), 16, null, null);
    private final int[] hashedPrompt = prompt(1024, 11);
    private final BlockHasher sha256Cbor = new BlockHasher("0", BlockHashAlgo.SHA256_CBOR);
    private final BlockHasher xxhashCbor = new BlockHasher("0", BlockHashAlgo.XXHASH_CBOR);
    private long nextHash = 1;
    private Engine engine;
    private long nowNs;
    private int submitted;

    /** Resubmits a fresh request whenever one finishes, so 256 always run. */
    private final class Refill implements OutputSink
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
            submit(nowNs);
        }

        @Override
        public void onBatchEnd(final long batchNs)
        {
        }
    }

    private static int[] prompt(final int length, final int seed)
    {
        final int[] ids = new int[length];
        for (int i = 0; i < length; i++)
        {
            ids[i] = 1000 + (i * 31 + seed) % 50_000;
        }
        return ids;
    }

    /**
     * A warm pool (every block once cached, so allocations evict) and an engine with 256 running requests.
     */
    @Setup(Level.Trial)
    public void setUp()
    {
        for (int i = 0; i < POOL_BLOCKS; i++)
        {
            blockLife();
        }
        for (int i = 0; i < promptHashes.length; i++)
        {
            final int block = pool.allocate();
            pool.cache(block, promptHashes[i]);
            pool.release(block);
        }
        final EngineConfig config = new EngineConfig().maxNumSeqs(RUNNING).maxModelLen(4096).blockSize(16)
            .kvCacheBlocks(RUNNING * 4096 / 16 + 1024)
            .latencyModel(new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000))
            .tokenSpace(new int[] {10, 11, 12, 13, 14, 15, 16, 17}, 2).conclude();
        engine = new Engine(config, new Refill(), 0);
        for (int i = 0; i < RUNNING; i++)
        {
            submit(0);
        }
        engine.doWork(0);
        for (int i = 0; i < 2_000; i++)
        {
            step();
        }
    }

    private void submit(final long atNs)
    {
        // distinct prompts: no prefix hits, every prompt block allocated and cached, evictions once the pool is full
        engine.submit(new Request("r" + submitted, prompt(256, submitted++)).maxTokens(OUTPUT_TOKENS)
            .ignoreEos(true), atNs);
    }

    /**
     * Hash a 1,024-token prompt (64 blocks) with {@code sha256_cbor}, serve's default; allocates the returned array.
     *
     * @return the last block's hash.
     */
    @Benchmark
    public long hashPrompt64BlocksSha256Cbor()
    {
        final long[] hashes = sha256Cbor.blockHashes(hashedPrompt, 16, null, null);
        return hashes[hashes.length - 1];
    }

    /**
     * Hash the same prompt with {@code xxhash_cbor}, simulate's default.
     *
     * @return the last block's hash.
     */
    @Benchmark
    public long hashPrompt64BlocksXxhashCbor()
    {
        final long[] hashes = xxhashCbor.blockHashes(hashedPrompt, 16, null, null);
        return hashes[hashes.length - 1];
    }

    /**
     * A block's life: taken from the free queue, cached under a new hash, released (it stays cached, evictable).
     *
     * @return the block handled (consumed by JMH).
     */
    @Benchmark
    public int blockLife()
    {
        final int block = pool.allocate();
        pool.cache(block, nextHash++);
        pool.release(block);
        return block;
    }

    /**
     * @return cached blocks found for a 1,024-token prompt whose 64 blocks are all cached.
     */
    @Benchmark
    public int prefixLookup64Blocks()
    {
        int found = 0;
        for (final long hash : promptHashes)
        {
            if (pool.cachedBlock(hash) < 0)
            {
                break;
            }
            found++;
        }
        return found;
    }

    /**
     * @return steps taken so far (consumed by JMH).
     */
    @Benchmark
    public long step()
    {
        nowNs = engine.nextDeadlineNs();
        engine.doWork(nowNs);
        return engine.stepCount();
    }
}
