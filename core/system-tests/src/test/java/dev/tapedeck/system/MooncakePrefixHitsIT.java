package dev.tapedeck.system;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.tapedeck.load.LengthDistribution;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.LoadRun;
import dev.tapedeck.load.PlannedRequest;
import dev.tapedeck.load.RunResult;
import dev.tapedeck.load.Slo;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.trace.TraceTestData;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadFormat;
import dev.tapedeck.workload.Workloads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real Mooncake trace's {@code hash_ids} become the prefix-cache hits of {@code serve}: its first 60 requests
 * replayed one at a time, in order, through {@code load} (closed loop, concurrency 1; prompts of up to tens of
 * thousands of tokens, 512-token hash blocks), and the server's {@code vllm:prefix_cache_hits_total} equals, token for
 * token, the hits the ids imply under vLLM's rules, computed here independently: a request reuses the longest run of
 * leading ids it shares with an earlier request, as far as both prompts reach, in whole 16-token blocks, and never its
 * last token.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MooncakePrefixHitsIT
{
    private static final int REQUESTS = 60;
    private static final int KV_BLOCK = 16;
    private static final String LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";

    @Test
    void shouldHitExactlyThePrefixesTheHashIdsImply() throws Exception
    {
        final Workload mooncake = Workloads.load(TraceTestData.path(
            "workloads/mooncake_fast25/conversation_trace.jsonl"), WorkloadFormat.MOONCAKE);
        final LoadPlan plan = LoadPlan.fromWorkload(mooncake, 1.0, REQUESTS, 0, LengthDistribution.parse("2"), 1);
        assertEquals(512, plan.blockSize(), "Mooncake's hash blocks are 512 tokens");
        long expectedHits = 0;
        long promptTokens = 0;
        final List<PlannedRequest> earlier = new ArrayList<>();
        for (final PlannedRequest request : plan.requests())
        {
            long reuse = 0;
            for (final PlannedRequest before : earlier)
            {
                final long shared = (long)commonLeadingIds(before.hashIds(), request.hashIds()) * plan.blockSize();
                reuse = Math.max(reuse, Math.min(shared, Math.min(before.promptTokens(), request.promptTokens())));
            }
            final long lastComputable = (request.promptTokens() - 1) / KV_BLOCK * KV_BLOCK;
            expectedHits += Math.min(reuse / KV_BLOCK * KV_BLOCK, lastComputable);
            promptTokens += request.promptTokens();
            earlier.add(request);
        }
        assertTrue(expectedHits >= 20 * 512, "the trace shares prefixes: " + expectedHits + " of " +
            promptTokens);

        // KV blocks for every prompt of the run, so nothing is evicted
        try (TestServer server = new TestServer(LoadHarness.serveContext(16 << 20), c -> c.maxModelLen(262_144)
            .kvCacheBlocks(300_000).maxNumBatchedTokens(32_768)))
        {
            final LoadRun.Settings oneAtATime = new LoadRun.Settings(plan, LoadRun.Mode.CLOSED, 1, REQUESTS, 0, 0,
                LoadHarness.DRAIN_NS, Slo.NONE, "run");
            final RunResult result = LoadHarness.run(LoadHarness.url(server.ports.get(0)), oneAtATime,
                TimeUnit.SECONDS.toNanos(60));
            assertEquals(REQUESTS, result.recorder().completed(), String.valueOf(result.recorder().errors()));
            assertEquals(promptTokens, result.recorder().promptTokens(), "prompts land on the trace's token counts");
            assertEquals((double)promptTokens, server.metric("vllm:prefix_cache_queries_total" + LABELS));
            assertEquals((double)expectedHits, server.metric("vllm:prefix_cache_hits_total" + LABELS),
                "hits implied by the hash ids");
        }
    }

    private static int commonLeadingIds(final long[] a, final long[] b)
    {
        if (null == a || null == b)
        {
            return 0;
        }
        int n = 0;
        while (n < a.length && n < b.length && a[n] == b[n])
        {
            n++;
        }
        return n;
    }
}
