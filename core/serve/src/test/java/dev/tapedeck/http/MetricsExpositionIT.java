package dev.tapedeck.http;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code /metrics} is valid Prometheus text exposition with vLLM's names, labels and buckets, and its numbers agree
 * with the traffic: checked with a strict parser here, with prometheus_client's own parser (the library vLLM exposes
 * with; Debian's python3-prometheus-client) and with {@code promtool check metrics} when they are installed
 * ({@code .ci/run} installs them).
 */
@Timeout(60)
@ExtendWith(NoNettyLeaks.class)
class MetricsExpositionIT
{
    private static final String MODEL_LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";

    @Test
    void shouldExposeConsistentVllmMetrics() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            server.post("/v1/completions", "{\"prompt\":\"a b c\",\"max_tokens\":5}");
            server.post("/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]," +
                "\"max_tokens\":3,\"stream\":true}");
            final CompletableFuture<HttpResponse<String>> running = server.client.sendAsync(
                HttpRequest.newBuilder(server.uri("/v1/completions")).POST(HttpRequest.BodyPublishers.ofString(
                    "{\"prompt\":\"x\",\"max_tokens\":3000,\"stream\":true}")).build(),
                HttpResponse.BodyHandlers.ofString());
            // running is set at admission, the first token a step later: wait for both
            for (int i = 0; i < 200 && (server.metric("vllm:num_requests_running" + MODEL_LABELS) < 1 ||
                server.metric("vllm:time_to_first_token_seconds_count" + MODEL_LABELS) < 3); i++)
            {
                Thread.sleep(10);
            }
            final String text = server.get("/metrics").body();
            final Map<String, ExpositionParser.Family> families = ExpositionParser.parse(text);
            for (final String name : List.of("vllm:num_requests_running", "vllm:num_requests_waiting",
                "vllm:kv_cache_usage_perc", "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
                "vllm:prompt_tokens_recomputed_total",
                "vllm:request_success_total", "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
                "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds", "vllm:cache_config_info"))
            {
                assertTrue(families.containsKey(name), "missing " + name);
            }
            assertEquals("counter", families.get("vllm:request_success_total").type());
            assertEquals("histogram", families.get("vllm:time_to_first_token_seconds").type());
            assertEquals(1.0, value(families, "vllm:num_requests_running", Map.of()), "the long request runs");
            assertEquals(0.0, value(families, "vllm:num_requests_waiting", Map.of()));
            assertTrue(value(families, "vllm:kv_cache_usage_perc", Map.of()) > 0);
            assertEquals(2.0, value(families, "vllm:request_success_total", Map.of("finished_reason", "length")));
            assertEquals(3.0, value(families, "vllm:time_to_first_token_seconds", Map.of("le", "+Inf")),
                "three requests have their first token");
            assertEquals(List.of("0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5",
                "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "160.0", "640.0", "2560.0",
                "+Inf"), bounds(families.get("vllm:time_to_first_token_seconds")));
            assertEquals(List.of("1", "2", "5", "10", "20", "50", "100", "200", "500", "1000", "2000", "5000",
                "+Inf"), bounds(families.get("vllm:request_prompt_tokens")).stream()
                .map(b -> b.replace(".0", "")).toList());
            running.cancel(true);
            checkWithPrometheusClient(text);
            checkWithPromtool(text);
        }
    }

    @Test
    void shouldStayValidWithLoraOn() throws Exception
    {
        try (TestServer server = new TestServer(LoraServeIT.options(), c -> c.maxLoras(1)))
        {
            assertEquals(200, server.post("/v1/completions", "{\"model\":\"sql\",\"prompt\":\"a b c\"," +
                "\"max_tokens\":3}").statusCode());
            // a name that needs escaping in a label value
            final String quoted = "we \\\"quote\\\" \\\\ it";
            assertEquals(200, server.post("/v1/load_lora_adapter", "{\"lora_name\":\"" + quoted + "\"," +
                "\"lora_path\":\"/q\"}").statusCode());
            final CompletableFuture<HttpResponse<String>> running = send(server, "chat", 3000);
            for (int i = 0; i < 200 && server.metric("vllm:num_requests_running" + MODEL_LABELS) < 1; i++)
            {
                Thread.sleep(10);
            }
            final CompletableFuture<HttpResponse<String>> waiting = send(server, quoted, 1);
            for (int i = 0; i < 200 && server.metric("vllm:num_requests_waiting_by_reason{engine=\"0\"," +
                "model_name=\"Qwen/Qwen3-8B\",reason=\"deferred\"}") < 1; i++)
            {
                Thread.sleep(10);
            }
            final String text = server.get("/metrics").body();
            final Map<String, ExpositionParser.Family> families = ExpositionParser.parse(text);
            final ExpositionParser.Family info = families.get("vllm:lora_requests_info");
            assertEquals("gauge", info.type());
            assertTrue(info.samples().stream().allMatch(s -> "1".equals(s.labels().get("max_lora"))));
            assertTrue(text.contains("vllm:lora_requests_info{max_lora=\"1\",running_lora_adapters=\"chat\"," +
                "waiting_lora_adapters=\"we \\\"quote\\\" \\\\ it\"} "), text);
            assertEquals(1.0, value(families, "vllm:num_requests_waiting_by_reason", Map.of("reason", "deferred")));
            assertEquals(0.0, value(families, "vllm:num_requests_waiting_by_reason", Map.of("reason", "capacity")));
            running.cancel(true);
            waiting.cancel(true);
            checkWithPrometheusClient(text);
            checkWithPromtool(text);
        }
    }

    @Test
    void shouldStayValidWithTheOptionalFamiliesOfThisIssue() throws Exception
    {
        // an older vLLM line's deprecated names, the KV residency sample, and (next) llm-d's fake metrics
        try (TestServer server = new TestServer(TestServer.context().vllmVersion("0.11.0").api(new ApiSurface(false,
            384, 1.0, 20, null, 0, null, 100_000_000L, "0.10")), c -> c.blockSize(4).kvCacheBlocks(16).maxModelLen(64)
            .kvCacheMetricsSample(1.0)))
        {
            for (int i = 0; i < 10; i++)
            {
                assertEquals(200, server.post("/v1/completions", "{\"prompt\":\"request " + i + " with enough words " +
                    "to take several blocks\",\"max_tokens\":3}").statusCode());
            }
            final String text = server.get("/metrics").body();
            final Map<String, ExpositionParser.Family> families = ExpositionParser.parse(text);
            for (final String name : List.of("vllm:gpu_cache_usage_perc", "vllm:gpu_prefix_cache_queries_total",
                "vllm:time_per_output_token_seconds", "vllm:kv_block_lifetime_seconds",
                "vllm:kv_block_idle_before_evict_seconds", "vllm:kv_block_reuse_gap_seconds"))
            {
                assertTrue(families.containsKey(name), "missing " + name);
            }
            assertEquals(value(families, "vllm:prefix_cache_queries_total", Map.of()),
                value(families, "vllm:gpu_prefix_cache_queries_total", Map.of()), "the old name, the same value");
            checkWithPrometheusClient(text);
            checkWithPromtool(text);
        }
        try (TestServer server = new TestServer(TestServer.context().api(new ApiSurface(false, 384, 1.0, 20, null, 0,
            "{\"running-requests\":\"oscillate:1:9:10s\",\"ttft-buckets-values\":[3,1],\"request-success-total\":" +
            "{\"length\":4}}", 100_000_000L, null))))
        {
            final String text = server.get("/metrics").body();
            final Map<String, ExpositionParser.Family> families = ExpositionParser.parse(text);
            assertEquals(4.0, value(families, "vllm:time_to_first_token_seconds", Map.of("le", "0.005")));
            checkWithPrometheusClient(text);
            checkWithPromtool(text);
        }
    }

    private static CompletableFuture<HttpResponse<String>> send(final TestServer server, final String model,
        final int maxTokens)
    {
        return server.client.sendAsync(HttpRequest.newBuilder(server.uri("/v1/completions"))
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model + "\",\"prompt\":\"x\"," +
                "\"max_tokens\":" + maxTokens + ",\"stream\":true}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static double value(final Map<String, ExpositionParser.Family> families, final String family,
        final Map<String, String> labels)
    {
        final String sampleName = "histogram".equals(families.get(family).type()) ? family + "_bucket" : family;
        for (final ExpositionParser.Sample sample : families.get(family).samples())
        {
            if (sample.name().equals(sampleName) && sample.labels().entrySet().containsAll(labels.entrySet()))
            {
                return sample.value();
            }
        }
        throw new AssertionError(family + labels + " not found");
    }

    private static List<String> bounds(final ExpositionParser.Family family)
    {
        return family.samples().stream().filter(s -> s.name().endsWith("_bucket"))
            .map(s -> s.labels().get("le")).toList();
    }

    private static void checkWithPrometheusClient(final String text) throws IOException, InterruptedException
    {
        final boolean available = new ProcessBuilder("/usr/bin/python3", "-c", "import prometheus_client")
            .start().waitFor() == 0;
        Assumptions.assumeTrue(available, "python3-prometheus-client not installed (.ci/run installs it)");
        final Path file = Files.createTempFile("metrics", ".txt");
        Files.writeString(file, text);
        final Process python = new ProcessBuilder("/usr/bin/python3", "-c",
            "import sys\nfrom prometheus_client.parser import text_string_to_metric_families\n" +
            "fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))\n" +
            "print(len(fams), sum(len(f.samples) for f in fams))", file.toString()).redirectErrorStream(true).start();
        final String output = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(python.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, python.exitValue(), "prometheus_client could not parse /metrics: " + output);
        assertTrue(Integer.parseInt(output.split(" ")[0]) > 30, output);
    }

    private static void checkWithPromtool(final String text) throws IOException, InterruptedException
    {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/promtool")),
            "promtool not installed (.ci/run installs Debian's prometheus package)");
        final Process promtool = new ProcessBuilder("/usr/bin/promtool", "check", "metrics")
            .redirectErrorStream(true).start();
        promtool.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        promtool.getOutputStream().close();
        final String output = new String(promtool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(promtool.waitFor(30, TimeUnit.SECONDS));
        // vLLM's own names draw these two lint remarks; anything else (a parse error above all) fails
        for (final String line : output.split("\n"))
        {
            if (!line.isBlank())
            {
                assertTrue(line.endsWith("metric names should not contain ':'") ||
                    line.equals("vllm:iteration_tokens_total non-counter metrics should not have \"_total\" suffix"),
                    "promtool: " + line);
            }
        }
    }
}
