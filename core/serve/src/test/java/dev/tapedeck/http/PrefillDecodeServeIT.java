package dev.tapedeck.http;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.agrona.concurrent.NanoClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tapedeck.kvtransfer.KvTransferSettings;
import dev.tapedeck.nixl.KvBridgeNative;
import dev.tapedeck.serve.ServeContext;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Prefill/decode disaggregation between two {@code serve} servers over real HTTP, side channel and data plane, as
 * vLLM's disaggregation proxy drives them: the prefill answers a {@code do_remote_decode} request ({@code max_tokens}
 * 1) with vLLM's {@code kv_transfer_params} and keeps its blocks; the decode pulls them (real bytes on {@code tcp},
 * a modelled time on {@code noop}), reports the pulled tokens as external, and its notification frees the prefill's
 * blocks. The faults: params missing a field, a side channel nobody answers, an unknown engine id, a compatibility
 * hash mismatch, blocks that expire before the pull.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PrefillDecodeServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";
    private static final String PROMPT =
        "a prompt long enough to fill a few KV blocks of sixteen tokens each ".repeat(4);

    private static KvTransferSettings settings(final String engineId, final String plane,
        final KvTransferSettings.ModelShape shape, final long abortTimeoutNs, final boolean recompute)
    {
        // a handshake may take seconds on a loaded 2-core machine: 20 s before it counts as failed
        return new KvTransferSettings("kv_both", engineId, "127.0.0.1", 0, plane, shape, 4096, 0, 64L << 20, true,
            recompute, true, abortTimeoutNs, 20_000, 1_000_000, 25e9, 0);
    }

    private static TestServer server(final KvTransferSettings settings) throws Exception
    {
        return server(settings, System::nanoTime);
    }

    private static TestServer server(final KvTransferSettings settings, final NanoClock clock) throws Exception
    {
        final ServeContext context = TestServer.context().servedModelNames(List.of(TestServer.MODEL))
            .enablePromptTokensDetails(true).shutdownTimeoutNs(0).kvTransfer(settings).nanoClock(clock);
        return new TestServer(context, c -> c.kvCacheBlocks(512));
    }

    private static JsonNode prefill(final TestServer prefill) throws Exception
    {
        final HttpResponse<String> response = prefill.post("/v1/completions", "{\"prompt\":\"" + PROMPT +
            "\",\"max_tokens\":1,\"kv_transfer_params\":{\"do_remote_decode\":true,\"do_remote_prefill\":false," +
            "\"remote_engine_id\":null,\"remote_block_ids\":null,\"remote_host\":null,\"remote_port\":null}}");
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private static JsonNode decode(final TestServer decode, final JsonNode params) throws Exception
    {
        final HttpResponse<String> response = decode.post("/v1/completions", "{\"prompt\":\"" + PROMPT +
            "\",\"max_tokens\":4,\"kv_transfer_params\":" + JSON.writeValueAsString(params) + "}");
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private static void awaitMetric(final TestServer server, final String name, final double expected)
        throws Exception
    {
        double value = Double.NaN;
        for (int i = 0; i < 500; i++)
        {
            value = server.metric(name + LABELS);
            if (expected == value)
            {
                return;
            }
            Thread.sleep(10);
        }
        assertEquals(expected, value, name);
    }

    /**
     * A prefill's clock: the wall clock until the test skips it ahead. A prefill on it keeps its blocks for as long as
     * the test looks at them and lets them expire when the test says, however slowly the machine runs.
     */
    private static final class SkippableClock implements NanoClock
    {
        private final AtomicLong skippedNs = new AtomicLong();

        @Override
        public long nanoTime()
        {
            return System.nanoTime() + skippedNs.get();
        }
    }

    /**
     * Skip the prefill's clock past {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} and let its engine catch up at once (its
     * timer was set on the wall clock, 480 s away): every block kept until now expires.
     */
    private static void skipPastTheExpiry(final TestServer prefill, final SkippableClock clock) throws Exception
    {
        clock.skippedNs.addAndGet(KvTransferSettings.DEFAULT_ABORT_TIMEOUT_NS + 1_000_000_000L);
        prefill.server.onEngine(0, engine -> engine.doWork(clock.nanoTime()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"noop", "tcp", "ucx"})
    void theDecodePullsThePrefillsBlocksAndItsNotificationFreesThem(final String plane) throws Exception
    {
        assumeTrue(!"ucx".equals(plane) || KvBridgeNative.available(),
            () -> "the ucx plane needs libucx (apt-get install libucx-dev): " + KvBridgeNative.unavailableReason());
        final KvTransferSettings.ModelShape shape = KvTransferSettings.DEFAULT_SHAPE;
        // 4096 KV bytes per token (--kv-bytes-per-token) whatever the shape
        try (TestServer prefill = server(settings("prefill-a", plane, shape, 480_000_000_000L, false));
            TestServer decode = server(settings("decode-a", plane, shape, 480_000_000_000L, false)))
        {
            final JsonNode first = prefill(prefill);
            final JsonNode params = first.get("kv_transfer_params");
            final int promptTokens = first.at("/usage/prompt_tokens").asInt();
            final int blocks = (promptTokens + 15) / 16;
            final int fullBlocks = promptTokens / 16;
            final int pulled = pulledTokens(promptTokens, 0);
            assertEquals("length", first.at("/choices/0/finish_reason").asText());
            assertEquals(List.of("do_remote_prefill", "do_remote_decode", "remote_block_ids", "remote_engine_id",
                "remote_request_id", "remote_host", "remote_port", "tp_size"), fieldNames(params), "vLLM's keys");
            assertTrue(params.get("do_remote_prefill").asBoolean());
            assertFalse(params.get("do_remote_decode").asBoolean());
            assertEquals(fullBlocks, params.get("remote_block_ids").size(), "the full blocks, as vLLM sends them");
            assertTrue(params.get("remote_block_ids").get(0).isInt());
            assertEquals("prefill-a", params.get("remote_engine_id").asText());
            assertEquals(first.get("id").asText() + "-0", params.get("remote_request_id").asText());
            assertEquals("127.0.0.1", params.get("remote_host").asText());
            assertTrue(params.get("remote_port").isInt() && params.get("remote_port").asInt() > 0);
            assertEquals(1, params.get("tp_size").asInt());
            assertEquals(blocks / 512.0, prefill.metric("vllm:kv_cache_usage_perc" + LABELS), 1e-9, "kept");

            final JsonNode second = decode(decode, params);
            assertEquals(4, second.at("/usage/completion_tokens").asInt());
            assertEquals(pulled, second.at("/usage/prompt_tokens_details/cached_tokens").asInt(),
                "vLLM counts the pulled tokens as cached");
            assertTrue(second.get("kv_transfer_params").isNull());
            assertEquals(pulled, decode.metric("vllm:prompt_tokens_by_source_total{engine=\"0\"," +
                "model_name=\"Qwen/Qwen3-8B\",source=\"external_kv_transfer\"}"));
            assertEquals(promptTokens - pulled, decode.metric("vllm:prompt_tokens_by_source_total{engine=\"0\"," +
                "model_name=\"Qwen/Qwen3-8B\",source=\"local_compute\"}"), "the partial block, computed here");
            assertEquals(1.0, decode.metric("vllm:nixl_xfer_time_seconds_count" + LABELS));
            assertEquals(fullBlocks, decode.metric("vllm:nixl_num_descriptors_sum" + LABELS));
            final double bytes = decode.metric("vllm:nixl_bytes_transferred_sum" + LABELS);
            if (!"noop".equals(plane))
            {
                assertTrue(bytes >= fullBlocks * 8.0 && bytes % fullBlocks == 0, "real bytes, whole blocks: " + bytes);
            }
            else
            {
                assertEquals(fullBlocks * 16 * 4096.0, bytes, "the modelled bytes: the full blocks' KV");
            }
            assertEquals(0.0, decode.metric("vllm:nixl_num_failed_transfers_total" + LABELS));
            awaitMetric(prefill, "vllm:kv_cache_usage_perc", 0.0);
            assertEquals(0.0, prefill.metric("vllm:nixl_num_kv_expired_reqs_total" + LABELS));
        }
    }

    private static String tokenIds(final int count, final int first)
    {
        final StringBuilder ids = new StringBuilder("[");
        for (int i = 0; i < count; i++)
        {
            ids.append(i > 0 ? "," : "").append(first + i);
        }
        return ids.append(']').toString();
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 57})
    void withALocalPrefixHitTheDecodeReadsOnlyTheBlocksItLacksOrNothing(final int promptTokens) throws Exception
    {
        try (TestServer prefill = server(settings("prefill-i", "tcp", KvTransferSettings.DEFAULT_SHAPE,
            480_000_000_000L, false));
            TestServer decode = server(settings("decode-i", "tcp", KvTransferSettings.DEFAULT_SHAPE,
                480_000_000_000L, false)))
        {
            final String prompt = tokenIds(promptTokens, 1000);
            // the decode computed this prompt before: its full blocks but the last token's are in its prefix cache
            decode.post("/v1/completions", "{\"prompt\":" + prompt + ",\"max_tokens\":1}");
            final HttpResponse<String> first = prefill.post("/v1/completions", "{\"prompt\":" + prompt +
                ",\"max_tokens\":1,\"kv_transfer_params\":{\"do_remote_decode\":true}}");
            final JsonNode params = JSON.readTree(first.body()).get("kv_transfer_params");
            final HttpResponse<String> response = decode.post("/v1/completions", "{\"prompt\":" + prompt +
                ",\"max_tokens\":4,\"kv_transfer_params\":" + JSON.writeValueAsString(params) + "}");
            final JsonNode answer = JSON.readTree(response.body());
            final int hitTokens = (promptTokens - 1) / 16 * 16;
            final int readBlocks = promptTokens / 16 - hitTokens / 16;
            assertEquals(4, answer.at("/usage/completion_tokens").asInt(), response.body());
            assertEquals(hitTokens + pulledTokens(promptTokens, hitTokens),
                answer.at("/usage/prompt_tokens_details/cached_tokens").asInt());
            assertEquals(64 == promptTokens ? 1 : 0, readBlocks, "64 tokens: the last block; 57: a full prefix hit");
            assertEquals(readBlocks, decode.metric("vllm:nixl_num_descriptors_sum" + LABELS));
            assertEquals(readBlocks, decode.metric("vllm:nixl_xfer_time_seconds_count" + LABELS));
            assertEquals(0.0, decode.metric("vllm:nixl_num_failed_transfers_total" + LABELS), "and they verify");
            assertEquals(pulledTokens(promptTokens, hitTokens), decode.metric("vllm:prompt_tokens_by_source_total{" +
                "engine=\"0\",model_name=\"Qwen/Qwen3-8B\",source=\"external_kv_transfer\"}"));
            awaitMetric(prefill, "vllm:kv_cache_usage_perc", 0.0);
            assertEquals(0.0, prefill.metric("vllm:nixl_num_kv_expired_reqs_total" + LABELS),
                "freed by the notification, with or without a read");
        }
    }

    @Test
    void aStreamingPrefillReturnsNoParamsAndKeepsItsBlocksUntilTheyExpire() throws Exception
    {
        final SkippableClock prefillClock = new SkippableClock();
        try (TestServer prefill = server(settings("prefill-j", "noop", KvTransferSettings.DEFAULT_SHAPE,
            KvTransferSettings.DEFAULT_ABORT_TIMEOUT_NS, false), prefillClock))
        {
            final HttpResponse<String> response = prefill.post("/v1/completions", "{\"prompt\":\"" + PROMPT +
                "\",\"max_tokens\":1,\"stream\":true,\"kv_transfer_params\":{\"do_remote_decode\":true}}");
            assertEquals(200, response.statusCode());
            assertTrue(response.body().endsWith("data: [DONE]\n\n"), response.body());
            assertFalse(response.body().contains("kv_transfer_params"), "vLLM's stream chunks have no params");
            assertTrue(prefill.metric("vllm:kv_cache_usage_perc" + LABELS) > 0, "the blocks are kept all the same");
            skipPastTheExpiry(prefill, prefillClock);
            awaitMetric(prefill, "vllm:nixl_num_kv_expired_reqs_total", 1.0);
            awaitMetric(prefill, "vllm:kv_cache_usage_perc", 0.0);
        }
    }

    /** What vLLM's decode pulls: the prompt's full blocks beyond the local hit, never the last token. */
    private static int pulledTokens(final int promptTokens, final int hitTokens)
    {
        final int full = promptTokens / 16 * 16;
        final int loaded = full == promptTokens ? promptTokens - 1 : full;
        return Math.max(0, loaded - hitTokens);
    }

    private static List<String> fieldNames(final JsonNode node)
    {
        final List<String> names = new java.util.ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    @Test
    void paramsMissingAFieldAreIgnoredAndThePromptIsComputedLocally() throws Exception
    {
        try (TestServer decode = server(settings("decode-b", "noop", KvTransferSettings.DEFAULT_SHAPE,
            480_000_000_000L, false)))
        {
            final ObjectNode params = JSON.createObjectNode().put("do_remote_prefill", true)
                .put("remote_engine_id", "somebody");
            final JsonNode answer = decode(decode, params);
            assertEquals(0, answer.at("/usage/prompt_tokens_details/cached_tokens").asInt());
            assertEquals(0.0, decode.metric("vllm:nixl_xfer_time_seconds_count" + LABELS));
            assertEquals(0.0, decode.metric("vllm:prompt_tokens_by_source_total{engine=\"0\"," +
                "model_name=\"Qwen/Qwen3-8B\",source=\"external_kv_transfer\"}"));
        }
    }

    @Test
    void aPullFromASideChannelNobodyAnswersFailsOrRecomputesAsThePolicySays() throws Exception
    {
        final int deadPort;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            deadPort = socket.getLocalPort();
        }
        final ObjectNode params = JSON.createObjectNode().put("do_remote_prefill", true)
            .put("do_remote_decode", false).put("remote_engine_id", "gone").put("remote_request_id", "gone-1")
            .put("remote_host", "127.0.0.1").put("remote_port", deadPort).put("tp_size", 1);
        params.putArray("remote_block_ids").add(1).add(2).add(3).add(4).add(5).add(6).add(7).add(8).add(9).add(10)
            .add(11).add(12).add(13).add(14).add(15).add(16).add(17);
        try (TestServer failing = server(settings("decode-c", "noop", KvTransferSettings.DEFAULT_SHAPE,
            480_000_000_000L, false));
            TestServer recomputing = server(settings("decode-d", "noop", KvTransferSettings.DEFAULT_SHAPE,
                480_000_000_000L, true)))
        {
            final HttpResponse<String> failed = failing.post("/v1/completions", "{\"prompt\":\"" + PROMPT +
                "\",\"max_tokens\":4,\"kv_transfer_params\":" + JSON.writeValueAsString(params) + "}");
            assertEquals(200, failed.statusCode(), failed.body());
            assertEquals("error", JSON.readTree(failed.body()).at("/choices/0/finish_reason").asText(),
                "kv_load_failure_policy=fail: the request fails");
            assertEquals(1.0, failing.metric("vllm:nixl_num_failed_transfers_total" + LABELS));

            final JsonNode recomputed = decode(recomputing, params);
            assertEquals(4, recomputed.at("/usage/completion_tokens").asInt(), "recompute: answered in full");
            assertEquals(0, recomputed.at("/usage/prompt_tokens_details/cached_tokens").asInt());
            assertEquals(1.0, recomputing.metric("vllm:nixl_num_failed_transfers_total" + LABELS));
        }
    }

    @Test
    void anUnknownEngineIdOrAnotherModelShapeFailsTheHandshake() throws Exception
    {
        final KvTransferSettings.ModelShape other = new KvTransferSettings.ModelShape(32, 8, 128, 2);
        try (TestServer prefill = server(settings("prefill-e", "noop", KvTransferSettings.DEFAULT_SHAPE,
            480_000_000_000L, false));
            TestServer decode = server(settings("decode-e", "noop", KvTransferSettings.DEFAULT_SHAPE,
                480_000_000_000L, true));
            TestServer otherModel = server(settings("decode-f", "noop", other, 480_000_000_000L, true)))
        {
            final ObjectNode renamed = (ObjectNode)prefill(prefill).get("kv_transfer_params");
            renamed.put("remote_engine_id", "not-the-prefill");
            decode(decode, renamed);
            assertEquals(1.0, decode.metric("vllm:nixl_num_failed_transfers_total" + LABELS), "unknown engine id");

            decode(otherModel, prefill(prefill).get("kv_transfer_params"));
            assertEquals(1.0, otherModel.metric("vllm:nixl_num_failed_transfers_total" + LABELS),
                "compatibility hash mismatch");
        }
    }

    @Test
    void blocksNoDecodeReadsExpireAndAreCountedAndALatePullStillAnswers() throws Exception
    {
        final SkippableClock prefillClock = new SkippableClock();
        try (TestServer prefill = server(settings("prefill-g", "tcp", KvTransferSettings.DEFAULT_SHAPE,
            KvTransferSettings.DEFAULT_ABORT_TIMEOUT_NS, false), prefillClock);
            TestServer decode = server(settings("decode-g", "tcp", KvTransferSettings.DEFAULT_SHAPE,
                480_000_000_000L, false)))
        {
            final JsonNode params = prefill(prefill).get("kv_transfer_params");
            assertTrue(prefill.metric("vllm:kv_cache_usage_perc" + LABELS) > 0, "kept for a decode");
            assertEquals(0.0, prefill.metric("vllm:nixl_num_kv_expired_reqs_total" + LABELS), "not expired yet");
            skipPastTheExpiry(prefill, prefillClock);
            awaitMetric(prefill, "vllm:nixl_num_kv_expired_reqs_total", 1.0);
            awaitMetric(prefill, "vllm:kv_cache_usage_perc", 0.0);
            // as with NIXL, the read is of whatever the freed blocks hold: here still the prompt's, so it verifies;
            // the prefill ignores the notification of a request it no longer knows
            final JsonNode answer = decode(decode, params);
            assertEquals(4, answer.at("/usage/completion_tokens").asInt(), answer.toString());
            assertEquals(0.0, decode.metric("vllm:nixl_num_failed_transfers_total" + LABELS), "the read verified");
            assertEquals(1.0, decode.metric("vllm:nixl_xfer_time_seconds_count" + LABELS));
            assertEquals(1.0, prefill.metric("vllm:nixl_num_kv_expired_reqs_total" + LABELS), "counted once");
        }
    }

    @Test
    void aDecodeAbortedBeforeItsPullStillFreesThePrefillsBlocks() throws Exception
    {
        final KvTransferSettings slowPull = new KvTransferSettings("kv_both", "decode-h", "127.0.0.1", 0, "noop",
            KvTransferSettings.DEFAULT_SHAPE, 4096, 0, 64L << 20, true, false, true, 480_000_000_000L, 2_000,
            20_000_000_000L, 0, 0);
        try (TestServer prefill = server(settings("prefill-h", "noop", KvTransferSettings.DEFAULT_SHAPE,
            480_000_000_000L, false));
            TestServer decode = server(slowPull))
        {
            final JsonNode params = prefill(prefill).get("kv_transfer_params");
            assertTrue(prefill.metric("vllm:kv_cache_usage_perc" + LABELS) > 0);
            final java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(decode.uri(
                "/v1/completions")).timeout(java.time.Duration.ofMillis(300))
                .header("content-type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"prompt\":\"" + PROMPT +
                    "\",\"max_tokens\":4,\"kv_transfer_params\":" + JSON.writeValueAsString(params) + "}"))
                .build();
            final java.net.http.HttpClient client = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
            try
            {
                client.send(request, HttpResponse.BodyHandlers.ofString());
            }
            catch (final java.net.http.HttpTimeoutException expected)
            {
                // the client gives up during the 20 s modelled pull and closes its connection: the decode aborts
            }
            awaitMetric(decode, "vllm:num_requests_waiting", 0.0);
            awaitMetric(prefill, "vllm:kv_cache_usage_perc", 0.0);
            assertEquals(0.0, prefill.metric("vllm:nixl_num_kv_expired_reqs_total" + LABELS), "notified, not expired");
        }
    }
}
