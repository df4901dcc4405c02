package dev.tapedeck.http;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve} over real HTTP with the KV block pool: a repeated long prompt reports its cached full blocks in
 * {@code usage.prompt_tokens_details.cached_tokens} and in the prefix-cache counters; a pool too small for the
 * running set preempts, counts it in {@code vllm:num_preemptions_total}, and every answer still has its full length.
 * Timing is not asserted as wall clock: the counters say what the engine computed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(NoNettyLeaks.class)
class PrefixCacheServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";

    private static ServeContext withPromptTokensDetails()
    {
        return TestServer.context().servedModelNames(List.of(TestServer.MODEL)).shutdownTimeoutNs(0)
            .enablePromptTokensDetails(true);
    }

    @Test
    void shouldReportTheCachedPrefixOfARepeatedPrompt() throws Exception
    {
        final String prompt = "the quick brown fox jumps over the lazy dog ".repeat(30);
        final String body = "{\"prompt\":\"" + prompt + "\",\"max_tokens\":4}";
        try (TestServer server = new TestServer(withPromptTokensDetails(), c -> c))
        {
            final JsonNode first = JSON.readTree(server.post("/v1/completions", body).body());
            final JsonNode second = JSON.readTree(server.post("/v1/completions", body).body());
            final int promptTokens = first.at("/usage/prompt_tokens").asInt();
            assertTrue(promptTokens > 200, "a long prompt: " + promptTokens);
            assertEquals(0, first.at("/usage/prompt_tokens_details/cached_tokens").asInt());
            final int cached = second.at("/usage/prompt_tokens_details/cached_tokens").asInt();
            assertEquals((promptTokens - 1) / 16 * 16, cached, "every full block but never the last token");
            assertEquals(4, second.at("/usage/completion_tokens").asInt());

            assertEquals(2.0 * promptTokens, server.metric("vllm:prefix_cache_queries_total" + LABELS));
            assertEquals(cached, server.metric("vllm:prefix_cache_hits_total" + LABELS));
            assertEquals(cached, server.metric("vllm:prompt_tokens_cached_total" + LABELS));
            // the engine computed the second prompt's uncached tail only
            assertEquals(2.0 * promptTokens - cached, server.metric("vllm:request_prefill_kv_computed_tokens_sum" +
                LABELS));
            assertEquals(0.0, server.metric("vllm:kv_cache_usage_perc" + LABELS), "idle: no block held");
            assertEquals(0.0, server.metric("vllm:num_preemptions_total" + LABELS));
            assertTrue(server.get("/metrics").body().contains("enable_prefix_caching=\"True\""));
        }
    }

    @Test
    void shouldShareBlocksOnlyBetweenRequestsWithTheSameCacheSalt() throws Exception
    {
        final String prompt = "a salted prompt long enough for a few blocks of tokens ".repeat(10);
        try (TestServer server = new TestServer(withPromptTokensDetails(), c -> c))
        {
            assertEquals(0, cachedTokens(server, prompt, ",\"cache_salt\":\"alice\""));
            assertEquals(0, cachedTokens(server, prompt, ",\"cache_salt\":\"bob\""), "another salt, no hit");
            assertEquals(0, cachedTokens(server, prompt, ""), "no salt, no hit");
            assertTrue(cachedTokens(server, prompt, ",\"cache_salt\":\"alice\"") > 0, "the same salt hits");
            final HttpResponse<String> empty = server.post("/v1/completions", "{\"prompt\":\"x\",\"cache_salt\":\"\"}");
            assertEquals(400, empty.statusCode());
            assertTrue(empty.body().contains("cache_salt"), empty.body());
        }
    }

    private static int cachedTokens(final TestServer server, final String prompt, final String extra)
        throws Exception
    {
        final HttpResponse<String> response = server.post("/v1/completions", "{\"prompt\":\"" + prompt +
            "\",\"max_tokens\":2" + extra + "}");
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body()).at("/usage/prompt_tokens_details/cached_tokens").asInt();
    }

    @Test
    void shouldCountTheLastTokenOfAWhollyCachedPromptAsRecomputed() throws Exception
    {
        // 33 token ids: all but the last fill two blocks of 16, which is as much as vLLM's cache can give
        final StringBuilder ids = new StringBuilder();
        for (int i = 0; i < 33; i++)
        {
            ids.append(0 == i ? "" : ",").append(1000 + i);
        }
        final String body = "{\"prompt\":[" + ids + "],\"max_tokens\":2}";
        try (TestServer server = new TestServer(withPromptTokensDetails(), c -> c))
        {
            server.post("/v1/completions", body);
            assertEquals(0.0, server.metric("vllm:prompt_tokens_recomputed_total" + LABELS));
            final JsonNode second = JSON.readTree(server.post("/v1/completions", body).body());
            assertEquals(32, second.at("/usage/prompt_tokens_details/cached_tokens").asInt());
            assertEquals(1.0, server.metric("vllm:prompt_tokens_recomputed_total" + LABELS));
            assertEquals(32.0, server.metric("vllm:prompt_tokens_cached_total" + LABELS));
            assertEquals(33.0, server.metric("vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"" +
                TestServer.MODEL + "\",source=\"local_cache_hit\"}"), "the hit counts the recomputed token too, as " +
                "vLLM's invariant local_cache_hit - recomputed = cached says");
        }
    }

    @Test
    void shouldExportKvBlockResidencyWithKvCacheMetrics() throws Exception
    {
        try (TestServer server = new TestServer(TestServer.context(), c -> c.blockSize(4).kvCacheBlocks(16)
            .maxModelLen(64).kvCacheMetricsSample(1.0)))
        {
            final String shared = "\"prompt\":\"the same words open every prompt here, then";
            for (int i = 0; i < 12; i++)
            {
                // a shared prefix (hits, reuse gaps) and a tail of its own (new blocks that push old ones out)
                assertEquals(200, server.post("/v1/completions", "{" + shared + " request " + i + " of twelve, " +
                    "with a tail long enough to need blocks of its own\",\"max_tokens\":4}").statusCode());
            }
            for (int i = 0; i < 6; i++)
            {
                // other prompts push the shared blocks out too: their hits are counted when they go
                assertEquals(200, server.post("/v1/completions", "{\"prompt\":\"" + i + " unrelated text that " +
                    "shares nothing with the others and fills the pool\",\"max_tokens\":4}").statusCode());
            }
            final String text = server.get("/metrics").body();
            assertTrue(server.metric("vllm:kv_block_lifetime_seconds_count" + LABELS) > 0, "blocks were evicted");
            assertEquals(server.metric("vllm:kv_block_lifetime_seconds_count" + LABELS),
                server.metric("vllm:kv_block_idle_before_evict_seconds_count" + LABELS));
            assertTrue(server.metric("vllm:kv_block_reuse_gap_seconds_count" + LABELS) > 0, "shared blocks were hit");
            assertTrue(text.contains("vllm:kv_block_lifetime_seconds_bucket{engine=\"0\",le=\"1800.0\""), text);
        }
        try (TestServer server = new TestServer(TestServer.context(), c -> c))
        {
            assertTrue(!server.get("/metrics").body().contains("vllm:kv_block_"), "only with --kv-cache-metrics");
        }
    }

    @Test
    void shouldFinishAtOnceBelowLlmdsCacheHitThreshold() throws Exception
    {
        final String prompt = "a prompt long enough to fill two blocks of sixteen tokens each, and then some more " +
            "words after that, so that the hit rate is well defined";
        final String threshold = "{\"prompt\":\"" + prompt + "\",\"max_tokens\":5,\"cache_hit_threshold\":0.5";
        try (TestServer server = new TestServer(withPromptTokensDetails(), c -> c))
        {
            final JsonNode cold = JSON.readTree(server.post("/v1/completions", threshold + "}").body());
            assertEquals("cache_threshold", cold.at("/choices/0/finish_reason").asText(), "nothing cached yet");
            assertEquals(0, cold.at("/usage/completion_tokens").asInt());
            assertEquals(0.0, server.metric("vllm:prefix_cache_queries_total" + LABELS), "it never ran");
            assertTrue(cachedTokens(server, prompt, "") == 0, "a request without a threshold runs and fills the cache");
            final JsonNode warm = JSON.readTree(server.post("/v1/completions", threshold + "}").body());
            assertEquals("length", warm.at("/choices/0/finish_reason").asText(), "now above the threshold");
            assertEquals(5, warm.at("/usage/completion_tokens").asInt());
            final String stream = server.client.send(HttpRequest.newBuilder(server.uri("/v1/chat/completions"))
                .header("X-Cache-Threshold-Finish-Reason", "true").POST(HttpRequest.BodyPublishers.ofString(
                    "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(stream.contains("\"finish_reason\":\"cache_threshold\"") && stream.endsWith("[DONE]\n\n"),
                "the header forces it, streamed too: " + stream);
            assertEquals(400, server.post("/v1/completions", "{\"prompt\":\"x\",\"cache_hit_threshold\":1.5}")
                .statusCode());
        }
    }

    @Test
    void shouldPreemptWhenThePoolRunsOutAndStillFinishEveryAnswer() throws Exception
    {
        // 4 requests of about 10 prompt + 40 output tokens need 13 blocks of 4 each; the pool has 16
        try (TestServer server = new TestServer(TestServer.context(), c -> c.blockSize(4).kvCacheBlocks(16)
            .maxModelLen(64).maxNumSeqs(4)))
        {
            final List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
            for (int i = 0; i < 4; i++)
            {
                answers.add(server.client.sendAsync(HttpRequest.newBuilder(server.uri("/v1/completions"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"request number " + i +
                        " says hello\",\"max_tokens\":40}")).build(), HttpResponse.BodyHandlers.ofString()));
            }
            for (final CompletableFuture<HttpResponse<String>> answer : answers)
            {
                final HttpResponse<String> response = answer.get(30, TimeUnit.SECONDS);
                assertEquals(200, response.statusCode(), response.body());
                final JsonNode json = JSON.readTree(response.body());
                assertEquals(40, json.at("/usage/completion_tokens").asInt());
                assertEquals("length", json.at("/choices/0/finish_reason").asText());
            }
            assertTrue(server.metric("vllm:num_preemptions_total" + LABELS) >= 1);
            assertTrue(server.metric("vllm:request_num_preemptions_sum" + LABELS) >= 1);
            assertEquals(0.0, server.metric("vllm:kv_cache_usage_perc" + LABELS));
        }
    }
}
