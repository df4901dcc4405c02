package dev.tapedeck.engine;

import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CPU tier's stores, lookups, loads and evictions allocate nothing once warm: the same churn of requests (eight
 * prompts taking turns on a GPU cache too small for them) costs the engine's thread the same bytes per request with
 * the tier as without it (what remains is the requests' own objects and block hashes, made by the caller and at
 * submission).
 */
class OffloadAllocationTest
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    private record Churn(double bytesPerRequest, long loads, long evictions, long hits)
    {
    }

    private static Churn churn(final boolean hostTier)
    {
        final EngineConfig config = new EngineConfig().maxNumSeqs(16).maxModelLen(512).kvCacheBlocks(64)
            .latencyModel(new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000.with(15000, 30, 120, 1, 0)))
            .tokenSpace(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 0)
            .kvOffload(hostTier ? new KvOffloadSettings(KvOffloadSettings.OFFLOADING_CONNECTOR, 0, 4096, 0, 1024,
                1024, 50e9) : null)
            .conclude();
        final Engine engine = new Engine(config, OutputSink.DISCARD, 0);
        final int[][] prompts = new int[8][];
        for (int p = 0; p < prompts.length; p++)
        {
            prompts[p] = EngineHarness.prompt("prompt-" + p, 256);
        }
        final String[] ids = new String[4 * 900];
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = "r" + i;
        }
        final long[] nowNs = {0};
        final int[] submitted = {0};
        final Runnable round = () ->
        {
            for (int r = 0; r < 4; r++)
            {
                final int n = submitted[0]++;
                // rounds take prompts 0-3, then 4-7, ...: a prompt comes back after the GPU cache held four others
                if (SubmitResult.ACCEPTED != engine.submit(new Request(ids[n], prompts[(n / 4 % 2) * 4 + r])
                    .maxTokens(4), nowNs[0]))
                {
                    throw new IllegalStateException("refused " + ids[n]);
                }
            }
            engine.doWork(nowNs[0]);
            for (long next = engine.nextDeadlineNs(); Long.MAX_VALUE != next; next = engine.nextDeadlineNs())
            {
                nowNs[0] = next;
                engine.doWork(next);
            }
            nowNs[0] += 1_000_000;
        };
        for (int i = 0; i < 300; i++)
        {
            round.run();
        }
        final long loadsBefore = null == engine.metrics().offload() ? 0 : engine.metrics().offload().loads();
        final long bytesBefore = THREADS.getCurrentThreadAllocatedBytes();
        final int rounds = 600;
        for (int i = 0; i < rounds; i++)
        {
            round.run();
        }
        final long allocated = THREADS.getCurrentThreadAllocatedBytes() - bytesBefore;
        final long loads = null == engine.metrics().offload() ? 0 : engine.metrics().offload().loads() - loadsBefore;
        if (0 != engine.numWaiting() || 0 != engine.numRunning())
        {
            throw new IllegalStateException("the engine stopped with requests left: " + engine.numWaiting() +
                " waiting, " + engine.numRunning() + " running");
        }
        return new Churn((double)allocated / (rounds * 4), loads, engine.kvBlockPool().evictions(),
            engine.metrics().prefixCacheHits());
    }

    @Test
    void shouldAddNoAllocationPerRequestWithTheHostTier()
    {
        final Churn without = churn(false);
        final Churn with = churn(true);
        assertTrue(with.loads() > 500, "prefixes come back from the host tier: " + with);
        assertTrue(without.evictions() > 0 && with.evictions() > 0, "the GPU cache evicts");
        assertTrue(with.bytesPerRequest() - without.bytesPerRequest() < 32, String.format(
            "bytes per request: %.1f with the tier, %.1f without", with.bytesPerRequest(), without.bytesPerRequest()));
    }
}
