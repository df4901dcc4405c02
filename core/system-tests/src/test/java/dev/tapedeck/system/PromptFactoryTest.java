package dev.tapedeck.system;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.PlannedRequest;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.http.TestServer;
import dev.tapedeck.trace.TraceTestData;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadFormat;
import dev.tapedeck.workload.Workloads;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Prompts built from real hash ids (Mooncake's 512-token blocks, kv-cache-tester's 64-token blocks) share exactly the
 * prefixes their ids imply, have exactly their planned token counts, and stop sharing with {@code cache-resistant}.
 */
class PromptFactoryTest
{
    private static int[] tokenIds(final PromptFactory prompts, final PlannedRequest request)
    {
        final StringBuilder out = new StringBuilder();
        prompts.appendTokenIds(request, out);
        final String inner = out.substring(1, out.length() - 1);
        return inner.isEmpty() ? new int[0] : Arrays.stream(inner.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    private static int commonIds(final long[] a, final long[] b)
    {
        int n = 0;
        while (n < a.length && n < b.length && a[n] == b[n])
        {
            n++;
        }
        return n;
    }

    private static int commonTokens(final int[] a, final int[] b)
    {
        int n = 0;
        while (n < a.length && n < b.length && a[n] == b[n])
        {
            n++;
        }
        return n;
    }

    /**
     * For every pair: the prompts share at least the tokens of their shared leading ids, and when the ids part before
     * the end of both prompts, the block where they part differs.
     */
    private static void assertPrefixesFollowTheIds(final LoadPlan plan, final int pairs)
    {
        final PromptFactory prompts = new PromptFactory(LoadHarness.words(), 3, plan.blockSize(), false);
        final List<PlannedRequest> requests = plan.requests();
        final int[][] ids = new int[requests.size()][];
        for (int i = 0; i < requests.size(); i++)
        {
            ids[i] = tokenIds(prompts, requests.get(i));
            assertEquals(requests.get(i).promptTokens(), ids[i].length, "exactly the planned length");
        }
        int sharing = 0;
        for (int i = 0; i < requests.size(); i++)
        {
            for (int j = i + 1; j < requests.size(); j++)
            {
                final PlannedRequest a = requests.get(i);
                final PlannedRequest b = requests.get(j);
                final int sharedIds = commonIds(a.hashIds(), b.hashIds());
                final int expected = Math.min(sharedIds * plan.blockSize(), Math.min(a.promptTokens(),
                    b.promptTokens()));
                final int shared = commonTokens(ids[i], ids[j]);
                assertTrue(shared >= expected, i + "/" + j + ": " + shared + " < " + expected);
                final int partAt = sharedIds * plan.blockSize();
                if (sharedIds < a.hashIds().length && sharedIds < b.hashIds().length &&
                    partAt + plan.blockSize() <= Math.min(a.promptTokens(), b.promptTokens()))
                {
                    assertFalse(Arrays.equals(Arrays.copyOfRange(ids[i], partAt, partAt + plan.blockSize()),
                        Arrays.copyOfRange(ids[j], partAt, partAt + plan.blockSize())), i + "/" + j +
                        ": different ids, different blocks");
                }
                sharing += sharedIds > 0 ? 1 : 0;
            }
        }
        assertTrue(sharing >= pairs, "the real trace has shared prefixes: " + sharing);
    }

    @Test
    void shouldShareMooncakePrefixesBlockByBlock() throws IOException
    {
        final Workload mooncake = Workloads.load(TraceTestData.path(
            "workloads/mooncake_fast25/conversation_trace.jsonl"), WorkloadFormat.MOONCAKE);
        final LoadPlan plan = LoadPlan.fromWorkload(mooncake, 1.0, 30, 0, null, 0);
        assertEquals(512, plan.blockSize());
        assertPrefixesFollowTheIds(plan, 100);
    }

    @Test
    void shouldShareKvCacheTesterPrefixesTurnAfterTurn() throws IOException
    {
        final Workload conversations = Workloads.load(TraceTestData.path("workloads/kv_cache_tester"),
            WorkloadFormat.KVCACHE_TESTER);
        final LoadPlan plan = LoadPlan.fromWorkload(conversations, 1.0, 0, 0, null, 0);
        assertEquals(64, plan.blockSize());
        assertPrefixesFollowTheIds(plan, 20);
    }

    @Test
    void shouldGiveTextOfExactlyThePlannedTokens()
    {
        final PromptFactory prompts = new PromptFactory(LoadHarness.words(), 3, 4, false);
        final PlannedRequest request = new PlannedRequest(5, 0, 37, 8, new long[] {9, 10, 11}, -1, 0, 0);
        final StringBuilder text = new StringBuilder();
        prompts.appendText(request, text);
        assertArrayEquals(tokenIds(prompts, request), TestServer.tokenizer().encode(text.toString()),
            "the text encodes to the token ids sent in token mode");
    }

    @Test
    void shouldShareNothingWhenCacheResistant()
    {
        final PromptFactory prompts = new PromptFactory(LoadHarness.words(), 3, 16, true);
        final long[] ids = {1, 2, 3, 4};
        final int[] a = tokenIds(prompts, new PlannedRequest(0, 0, 64, 8, ids, -1, 0, 0));
        final int[] b = tokenIds(prompts, new PlannedRequest(1, 0, 64, 8, ids, -1, 0, 0));
        assertEquals(64, a.length);
        assertNotEquals(a[0], b[0], "a unique first token");
        final PromptFactory plain = new PromptFactory(LoadHarness.words(), 3, 16, false);
        assertEquals(64, commonTokens(tokenIds(plain, new PlannedRequest(0, 0, 64, 8, ids, -1, 0, 0)),
            tokenIds(plain, new PlannedRequest(1, 0, 64, 8, ids, -1, 0, 0))), "without it, equal ids, equal text");
    }
}
