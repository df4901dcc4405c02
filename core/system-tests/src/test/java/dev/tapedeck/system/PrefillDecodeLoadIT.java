package dev.tapedeck.system;

import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.tapedeck.http.TestServer;
import dev.tapedeck.kvtransfer.KvTransferSettings;
import dev.tapedeck.nixl.KvBridgeNative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The whole P/D loop in one JVM, every part real: {@code tapedeck load --prefill-url --decode-url} (picocli,
 * in-process) drives a prefill {@code serve} and a decode {@code serve} as vLLM's disaggregation proxy does; the
 * decode pulls every request's KV from the prefill (bytes over the {@code tcp} plane, a modelled time over
 * {@code noop}); the report splits TTFT and reads the server's transfer time from the decode's metrics; the decode's
 * notifications leave the prefill holding no block.
 */
@Timeout(120)
class PrefillDecodeLoadIT
{
    @TempDir
    Path dir;

    private static KvTransferSettings settings(final String engineId, final String plane)
    {
        return new KvTransferSettings("kv_both", engineId, "127.0.0.1", 0, plane, KvTransferSettings.DEFAULT_SHAPE,
            4096, 0, 64L << 20, true, false, true, 480_000_000_000L, 5_000, 2_000_000, 25e9, 0);
    }

    private static TestServer server(final String engineId, final String plane) throws Exception
    {
        return new TestServer(TestServer.context().servedModelNames(List.of(TestServer.MODEL))
            .shutdownTimeoutNs(0).kvTransfer(settings(engineId, plane)), c -> c.kvCacheBlocks(4096));
    }

    @ParameterizedTest
    @ValueSource(strings = {"noop", "tcp", "ucx"})
    void loadDrivesAPrefillDecodePairAndSplitsTtft(final String plane) throws Exception
    {
        assumeTrue(!"ucx".equals(plane) || KvBridgeNative.available(),
            () -> "the ucx plane needs libucx (apt-get install libucx-dev): " + KvBridgeNative.unavailableReason());
        try (TestServer prefill = server("prefill-" + plane, plane);
            TestServer decode = server("decode-" + plane, plane))
        {
            final Path report = dir.resolve("pd-" + plane + ".json");
            final String decodeUrl = "http://127.0.0.1:" + decode.ports.get(0);
            final LoadHarness.Cli cli = LoadHarness.load("--prefill-url", "http://127.0.0.1:" + prefill.ports.get(0),
                "--decode-url", decodeUrl, "--prompt-tokens", "100..300", "--output-tokens", "8", "--ignore-eos",
                "--concurrency", "4", "--max-requests", "40", "--scrape-metrics", decodeUrl + "/metrics",
                "--report", report.toString(), "--quiet");
            assertEquals(0, cli.exitCode(), cli.err());
            final JsonNode point = LoadHarness.readReport(report).get("points").get(0);
            assertEquals(40, point.at("/requests/completed").asInt(), point.get("errors").toString());
            assertEquals(0, point.at("/requests/failed").asInt());
            final JsonNode split = point.get("prefill_decode");
            assertEquals(40, split.at("/ttft_split_ms/prefill/count").asInt());
            assertTrue(split.at("/ttft_split_ms/decode_first_token/p50").asDouble() > 0);
            assertTrue(split.at("/kv_transfer/reported").asBoolean(), split.toString());
            assertEquals(40, split.at("/kv_transfer/transfers").asInt(), "one pull per request");
            assertTrue(split.at("/kv_transfer/mean_ms").asDouble() > 0);

            final String labels = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";
            assertEquals(0.0, decode.metric("vllm:nixl_num_failed_transfers_total" + labels));
            assertTrue(decode.metric("vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"," +
                "source=\"external_kv_transfer\"}") >= 40 * 96, "every prompt's full blocks were pulled");
            double held = Double.NaN;
            for (int i = 0; i < 500 && 0.0 != held; i++)
            {
                held = prefill.metric("vllm:kv_cache_usage_perc" + labels);
                Thread.sleep(10);
            }
            assertEquals(0.0, held, "every decode's notification freed its prefill blocks");
        }
    }
}
