package dev.tapedeck.simulate;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.KvOffloadSettings;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.RequestObserver;
import dev.tapedeck.kv.KvEventSink;
import dev.tapedeck.kv.MediaSpans;
import dev.tapedeck.trace.TraceTestData;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CPU KV tier on a real agentic workload: 64 users replaying kv-cache-tester's Claude Code sessions on an engine
 * whose GPU KV cache (33,600 blocks, 537,600 tokens) holds a fraction of their contexts (about 3.5 million tokens),
 * with a host tier large enough for all of them behind it (600 GiB). Each turn is compared with itself in two other
 * runs of the same plan: one whose GPU cache holds everything (a GPU hit), one without a host tier (recomputed). A
 * sweep of users against the three server modes moves the cliff.
 */
class SimulateOffloadTest
{
    /** Llama-3.1-8B's KV bytes per token (the default step model's), bf16. */
    private static final long KV_BYTES_PER_TOKEN = 32 * 8 * 128 * 2 * 2;
    private static final int USERS = 64;

    private record Turn(int promptTokens, int cachedTokens, int externalTokens, long ttftNs)
    {
    }

    @Test
    void shouldServeEvictedPrefixesFromTheHostTierBetweenAGpuHitAndARecompute() throws IOException
    {
        final Map<String, Turn> gpuHit = run(400_000, false, null);
        final CpuEvents events = new CpuEvents();
        final Map<String, Turn> offloaded = run(33_600, true, events);
        final Map<String, Turn> recomputed = run(33_600, false, null);
        assertEquals(gpuHit.keySet(), offloaded.keySet());
        assertEquals(672, offloaded.size(), "64 users x their sessions' turns");

        double gpuHitTtft = 0;
        double offloadedTtft = 0;
        double recomputedTtft = 0;
        long cpuTokens = 0;
        int turns = 0;
        for (final Map.Entry<String, Turn> entry : offloaded.entrySet())
        {
            final Turn turn = entry.getValue();
            if (turn.externalTokens() > 0)
            {
                turns++;
                cpuTokens += turn.externalTokens();
                offloadedTtft += turn.ttftNs();
                gpuHitTtft += gpuHit.get(entry.getKey()).ttftNs();
                recomputedTtft += recomputed.get(entry.getKey()).ttftNs();
                assertEquals(0, recomputed.get(entry.getKey()).externalTokens());
            }
        }
        assertTrue(turns > 100, "turns served from the host tier: " + turns);
        assertTrue(cpuTokens > 1_000_000, "prompt tokens loaded from the host tier: " + cpuTokens);
        assertTrue(gpuHitTtft < offloadedTtft && offloadedTtft < recomputedTtft, String.format(
            "mean TTFT of the %d turns with host hits: GPU hit %.0f ms, host tier %.0f ms, recomputed %.0f ms",
            turns, gpuHitTtft / turns / 1e6, offloadedTtft / turns / 1e6, recomputedTtft / turns / 1e6));
        assertTrue(events.stored > 200_000 && events.removed == 0,
            "the host tier (307,200 blocks) stores every session's blocks and, big enough, never evicts: " +
                events.stored + " / " + events.removed);
    }

    @Test
    void shouldMoveTheCliffToMoreUsersWithTheHostTier() throws IOException
    {
        final SimulateContext context = new SimulateContext()
            .workload(TraceTestData.path("workloads/kv_cache_tester"))
            .engine(new EngineConfig().kvCacheBlocks(33_600).maxModelLen(70_000).kvOffload(tier(400)))
            .sweep("users=4,8,16,24,32,48")
            .sweep("offload=on,off,noprefix")
            .gpusPerEngine(2);
        final ObjectNode report = Simulate.run(context);
        assertEquals(2, report.path("target").path("gpus_per_server").asInt(), report.path("target").toString());
        final JsonNode series = report.path("series");
        final double on = series.path("offload=on").path("ttft_doubled_at").asDouble(Double.NaN);
        final double off = series.path("offload=off").path("ttft_doubled_at").asDouble(Double.NaN);
        assertTrue(on > off, "p99 TTFT doubles at " + on + " users with the host tier, " + off + " without: " +
            series);
        assertTrue(series.path("offload=off").path("hit_rate_collapsed_at").isNumber(), series.toString());
        assertTrue(series.path("offload=on").path("hit_rate_collapsed_at").isNull() ||
            series.path("offload=on").path("hit_rate_collapsed_at").asDouble() >
            series.path("offload=off").path("hit_rate_collapsed_at").asDouble(), series.toString());
        final JsonNode curve = series.path("offload=on").path("curve");
        assertEquals(6, curve.size(), curve.toString());
        for (final JsonNode at : curve)
        {
            assertTrue(at.path("output_tokens_per_s").asDouble() > 0 && at.path("ttft_p99_ms").asDouble() > 0 &&
                at.path("interactivity_tokens_per_s").asDouble() > 0, at.toString());
            assertEquals(at.path("output_tokens_per_s").asDouble() / 2,
                at.path("output_tokens_per_s_per_gpu").asDouble(), 0.05, "per GPU of 2: " + at);
        }
        assertTrue(curve.get(5).path("output_tokens_per_s").asDouble() > curve.get(0).path("output_tokens_per_s")
            .asDouble(), "48 users produce more than 4: " + curve);
        for (final JsonNode point : report.path("points"))
        {
            final String mode = point.path("series").asText();
            final JsonNode kv = point.path("kv_cache");
            assertEquals("offload=on".equals(mode), kv.path("offload_stored_bytes").asLong() > 0, point.toString());
            if ("offload=noprefix".equals(mode))
            {
                assertEquals(0, kv.path("hit_rate").asDouble(), point.toString());
            }
        }
    }

    private static KvOffloadSettings tier(final long gib)
    {
        return new KvOffloadSettings(KvOffloadSettings.OFFLOADING_CONNECTOR, gib << 30, 0, 0, KV_BYTES_PER_TOKEN,
            KV_BYTES_PER_TOKEN, 50e9);
    }

    private static Map<String, Turn> run(final int gpuBlocks, final boolean hostTier, final KvEventSink events)
        throws IOException
    {
        final Map<String, Turn> turns = new HashMap<>();
        final EngineConfig engine = new EngineConfig().kvCacheBlocks(gpuBlocks).maxModelLen(70_000)
            .kvOffload(hostTier ? tier(600) : null).requestObserver(new RequestObserver()
            {
                @Override
                public void onAccepted(final Request request, final int inFlight)
                {
                }

                @Override
                public void onToken(final Request request, final int tokenId, final long atNs, final int running,
                    final int prefillTokens, final boolean continuesChunk)
                {
                }

                @Override
                public void onFinished(final Request request)
                {
                    turns.put(request.requestId(), new Turn(request.promptLength(), request.numCachedTokens(),
                        request.numExternalTokens(), request.firstTokenNs() - request.arrivalNs()));
                }
            });
        if (null != events)
        {
            engine.kvEventSink(events);
        }
        Simulate.run(new SimulateContext()
            .workload(TraceTestData.path("workloads/kv_cache_tester"))
            .engine(engine)
            .replay(dev.tapedeck.load.WorkloadReplay.ofUsers(USERS)));
        return turns;
    }

    /** Counts the host tier's KV events. */
    private static final class CpuEvents implements KvEventSink
    {
        long stored;
        long removed;

        @Override
        public void blockStored(final long[] blockHashes, final int firstBlock, final int blockCount,
            final int[] tokenIds, final int blockSize, final int loraId, final byte[] loraNameUtf8,
            final byte[] cacheSaltUtf8, final MediaSpans media)
        {
        }

        @Override
        public void blockRemoved(final long blockHash)
        {
        }

        @Override
        public void offloadedBlocksStored(final long[] blockHashes, final int blockCount, final int blockSize)
        {
            stored += blockCount;
        }

        @Override
        public void offloadedBlockRemoved(final long blockHash)
        {
            removed++;
        }

        @Override
        public void allBlocksCleared()
        {
        }

        @Override
        public void endOfStep(final long nowNs)
        {
        }
    }
}
