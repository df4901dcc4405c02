package dev.tapedeck.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;
import org.zeromq.ZContext;

import picocli.CommandLine;

import dev.tapedeck.serve.Serve;
import dev.tapedeck.testing.CliRun;
import dev.tapedeck.testing.KvEventSubscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --kv-transfer-config} with vLLM's {@code OffloadingConnector}, over real sockets: a prompt whose GPU
 * blocks were evicted by another comes back from the CPU tier (usage's cached tokens, {@code vllm:kv_offload_*} and
 * {@code prompt_tokens_by_source} on {@code /metrics}), and a ZMQ subscriber sees the tier's blocks as
 * {@code BlockStored} events of medium {@code "CPU"} beside the GPU's; and the flags' errors.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvOffloadServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String A = "the first user asks about the rivers of the north and their bridges ".repeat(10);
    private static final String B = "another user wants a long story about a lighthouse keeper and a cat ".repeat(14);

    @Test
    void shouldLoadAnEvictedPromptFromTheCpuTierAndPublishItsBlocksAsCpu() throws Exception
    {
        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--model", "Qwen/Qwen3-8B", "--kv-cache-size", "16",
            "--max-model-len", "256", "--vllm-version", "0.19.0", "--kv-transfer-config",
            "{\"kv_connector\":\"OffloadingConnector\",\"kv_role\":\"kv_both\"," +
                "\"kv_connector_extra_config\":{\"num_cpu_blocks\":64}}",
            "--enable-kv-cache-events", "--kv-events-endpoint", "tcp://127.0.0.1:*", "--kv-events-replay-endpoint",
            "tcp://127.0.0.1:*", "--enable-prompt-tokens-details");
        final ServeCommand serve = cli.getSubcommands().get("serve").getCommand();
        final Serve started = Serve.start(serve.context());
        try (ZContext context = new ZContext())
        {
            final String base = "http://127.0.0.1:" + started.httpServer().ports().get(0);
            final KvEventSubscriber sub = new KvEventSubscriber(context, started.kvEventPublishers().get(0),
                started.kvEventPublishers().get(0).settings().topic());
            final int promptTokens = complete(base, A).path("usage").path("prompt_tokens").asInt();
            assertTrue(promptTokens > 100 && promptTokens < 200, "A fills 7 to 12 blocks: " + promptTokens);
            complete(base, B); // B's blocks take the GPU's, A's leave it (they stay on the CPU)
            final var again = complete(base, A);
            final int cached = again.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt(-1);
            final String metrics = get(base + "/metrics");
            final double loaded = sample(metrics, "vllm:kv_offload_total_bytes_total{engine=\"0\",model_name=" +
                "\"Qwen/Qwen3-8B\",transfer_type=\"CPU_to_GPU\"}");
            final double external = sample(metrics, "vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=" +
                "\"Qwen/Qwen3-8B\",source=\"external_kv_transfer\"}");
            assertTrue(loaded > 0, "bytes loaded from the CPU tier: " + loaded);
            assertTrue(external >= 16, "prompt tokens from the CPU tier: " + external);
            assertTrue(cached >= 16 + external - 1, "usage counts the GPU hit and the loaded tokens as cached: " +
                cached + " of " + promptTokens);
            assertTrue(metrics.contains("vllm:kv_offload_size_bucket{engine=\"0\",le=\"1e+06\"") ||
                metrics.contains("vllm:kv_offload_size_bucket{engine=\"0\",le=\"1000000\""), "the size histogram");

            final List<String> media = new ArrayList<>();
            while (media.stream().noneMatch("BlockRemoved:GPU"::equals) ||
                media.stream().filter("BlockStored:CPU"::equals).count() < 2)
            {
                for (final ArrayValue event : events(sub.next().payload()))
                {
                    final String type = event.get(0).asStringValue().asString();
                    final Value medium = "BlockStored".equals(type) ? event.get(6) : event.get(2);
                    media.add(type + ":" + medium.asStringValue().asString());
                    if ("BlockStored".equals(type) && "CPU".equals(medium.asStringValue().asString()))
                    {
                        assertTrue(event.get(2).isNilValue(), "no parent: " + event);
                        assertEquals(0, event.get(3).asArrayValue().size(), "no token ids: " + event);
                        assertEquals(16, event.get(4).asIntegerValue().toInt(), "the offloaded block size");
                    }
                }
            }
            assertTrue(media.contains("BlockStored:GPU"), media.toString());
        }
        finally
        {
            started.close();
        }
    }

    @Test
    void shouldRefuseOffloadSettingsItDoesNotModel()
    {
        final CliRun arc = CliRun.of("serve", "--port", "0", "--kv-transfer-config", "{\"kv_connector\":" +
            "\"OffloadingConnector\",\"kv_connector_extra_config\":{\"cpu_bytes_to_use\":1e9,\"eviction_policy\":" +
            "\"arc\"}}");
        assertEquals(2, arc.exitCode());
        assertTrue(arc.err().contains("eviction_policy arc is not modelled"), arc.err());
        final CliRun sizeless = CliRun.of("serve", "--port", "0", "--kv-transfer-config",
            "{\"kv_connector\":\"OffloadingConnector\",\"kv_connector_extra_config\":{}}");
        assertEquals(2, sizeless.exitCode());
        assertTrue(sizeless.err().contains("cpu_bytes_to_use"), sizeless.err());
        final CliRun negative = CliRun.of("simulate", "--workload", "missing.jsonl", "--kv-offloading-size", "-1");
        assertEquals(2, negative.exitCode());
        assertTrue(negative.err().contains("--kv-offloading-size must be positive"), negative.err());
        final CliRun both = CliRun.of("serve", "--port", "0", "--kv-offloading-size", "4", "--kv-transfer-config",
            "{\"kv_connector\":\"OffloadingConnector\",\"kv_connector_extra_config\":{\"num_cpu_blocks\":8}}");
        assertEquals(2, both.exitCode());
        assertTrue(both.err().contains("not both"), both.err());
        final CliRun withPd = CliRun.of("serve", "--port", "0", "--kv-offloading-size", "4", "--kv-transfer-config",
            "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}");
        assertEquals(2, withPd.exitCode());
        assertTrue(withPd.err().contains("MultiConnector"), withPd.err());
        final CliRun backend = CliRun.of("simulate", "--workload", "missing.jsonl", "--kv-offloading-size", "4",
            "--kv-offloading-backend", "disk");
        assertEquals(2, backend.exitCode());
        assertTrue(backend.err().contains("native or lmcache"), backend.err());
        final CliRun sweep = CliRun.of("simulate", "--workload", "missing.jsonl", "--sweep", "offload=on,off");
        assertEquals(2, sweep.exitCode());
        assertTrue(sweep.err().contains("needs the CPU tier's size"), sweep.err());
    }

    private static com.fasterxml.jackson.databind.JsonNode complete(final String base, final String prompt)
        throws IOException, InterruptedException
    {
        final HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create(base + "/v1/completions")).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("model", "Qwen/Qwen3-8B",
                "prompt", prompt, "max_tokens", 2)))).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private static String get(final String url) throws IOException, InterruptedException
    {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
            HttpResponse.BodyHandlers.ofString()).body();
    }

    private static double sample(final String metrics, final String series)
    {
        for (final String line : metrics.split("\n"))
        {
            if (line.startsWith(series + " "))
            {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        throw new AssertionError("no sample " + series + " in\n" + metrics);
    }

    private static List<ArrayValue> events(final byte[] payload) throws IOException
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload))
        {
            final List<ArrayValue> events = new ArrayList<>();
            unpacker.unpackValue().asArrayValue().get(1).asArrayValue().forEach(v -> events.add(v.asArrayValue()));
            return events;
        }
    }
}
