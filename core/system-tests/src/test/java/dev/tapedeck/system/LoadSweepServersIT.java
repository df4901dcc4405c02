package dev.tapedeck.system;

import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.engine.KvOffloadSettings;
import dev.tapedeck.http.TestServer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code load --sweep users=... --sweep-servers off=URL,on=URL} over real sockets: two in-process servers whose GPU
 * KV cache holds the sessions of 2 users but not of 8, one with a CPU tier; kv-cache-tester conversations replayed
 * by 2 and 8 users against each; one report with a point per server and level, each server's prefix-hit rates from
 * its scraped {@code /metrics}, and a frontier per server; and the warning a replay gets when some of its requests
 * need more context than the server serves.
 */
@Timeout(90)
class LoadSweepServersIT
{
    @TempDir
    Path dir;

    @Test
    void shouldRunEveryLevelAgainstEachServerAndReportTheirHitRates() throws Exception
    {
        final Path conversations = conversations();
        // 160 blocks of 16 tokens: 2 users' 1,024-token contexts fit, 8 users' do not
        try (TestServer off = new TestServer(LoadHarness.serveContext(1 << 20),
                c -> c.kvCacheBlocks(160).maxModelLen(2048));
            TestServer on = new TestServer(LoadHarness.serveContext(1 << 20),
                c -> c.kvCacheBlocks(160).maxModelLen(2048).kvOffload(new KvOffloadSettings(
                    KvOffloadSettings.OFFLOADING_CONNECTOR, 0, 4096, 0, 1024, 1024, 50e9))))
        {
            final Path report = dir.resolve("sweep.json");
            final LoadHarness.Cli cli = LoadHarness.load("--sweep-servers", "off=http://127.0.0.1:" +
                off.ports.get(0) + ",on=http://127.0.0.1:" + on.ports.get(0), "--workload", conversations.toString(),
                "--sweep", "users=2,8", "--users-ramp", "200ms", "--ignore-eos", "--gpus-per-server", "4",
                "--report", report.toString(), "--html", dir.resolve("sweep.html").toString(), "--quiet");
            assertEquals(0, cli.exitCode(), cli.err());
            final JsonNode json = LoadHarness.readReport(report);
            final JsonNode points = json.path("points");
            assertEquals(4, points.size(), points.toString());
            final String[] labels = {"off users=2", "off users=8", "on users=2", "on users=8"};
            for (int i = 0; i < labels.length; i++)
            {
                final JsonNode point = points.get(i);
                assertEquals(labels[i], point.path("label").asText());
                assertEquals(labels[i].split(" ")[0], point.path("series").asText());
                assertEquals(0, point.path("requests").path("failed").asLong(), point.path("errors").toString());
                assertEquals(4 * (i % 2 == 0 ? 2 : 8), point.path("requests").path("completed").asLong());
                assertTrue(point.path("kv_cache").path("hit_rate").isNumber(), "scraped: " + point);
            }
            assertEquals(0, points.get(1).path("kv_cache").path("cpu_hit_rate").asDouble(), "off has no CPU tier");
            assertTrue(points.get(3).path("kv_cache").path("cpu_hit_rate").asDouble() > 0,
                "8 users on the server with a CPU tier load prefixes from it: " + points.get(3).path("kv_cache"));
            assertTrue(points.get(3).path("kv_cache").path("hit_rate").asDouble() >
                points.get(1).path("kv_cache").path("hit_rate").asDouble(), "more hits with the tier");
            assertTrue(json.path("series").path("off").path("pareto").isArray(), json.path("series").toString());
            assertTrue(json.path("series").path("on").has("ttft_doubled_at"), json.path("series").toString());
            assertEquals(4, json.path("target").path("gpus_per_server").asInt());
            final JsonNode level = json.path("series").path("on").path("curve").path(1);
            assertEquals(level.path("output_tokens_per_s").asDouble() / 4,
                level.path("output_tokens_per_s_per_gpu").asDouble(), 0.05, level.toString());
            final String html = Files.readString(dir.resolve("sweep.html"));
            assertTrue(html.contains("Throughput per GPU vs interactivity, per server mode") &&
                html.contains("output tokens/s per GPU (4 GPUs per server)"), "the per-GPU chart");
            assertEquals("http://127.0.0.1:" + on.ports.get(0),
                json.path("target").path("servers").path("on").asText());
        }
    }

    @Test
    void shouldWarnOfRequestsLongerThanTheServersContextBeforeSendingThem() throws Exception
    {
        final Path conversations = conversations();
        // the last turn of each conversation is 1,024 prompt + 4 output tokens: 2 of 8 do not fit 1,024
        try (TestServer server = new TestServer(LoadHarness.serveContext(1 << 20), c -> c.maxModelLen(1024)))
        {
            final Path report = dir.resolve("short.json");
            final java.io.ByteArrayOutputStream stderr = new java.io.ByteArrayOutputStream();
            final java.io.PrintStream realErr = System.err;
            System.setErr(new java.io.PrintStream(stderr, true, java.nio.charset.StandardCharsets.UTF_8));
            try
            {
                LoadHarness.load("--url", "http://127.0.0.1:" + server.ports.get(0), "--workload",
                    conversations.toString(), "--time-scale", "0.2", "--ignore-eos", "--report", report.toString(),
                    "--quiet");
            }
            finally
            {
                System.setErr(realErr);
            }
            final String err = stderr.toString(java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(err.contains("load: 2 of 8 requests need more than the server's max_model_len of 1024 " +
                "tokens (longest 1028, prompt plus output)"), err);
            assertTrue(err.contains("--max-model-len 1028"), err);
            final JsonNode requests = LoadHarness.readReport(report).path("points").path(0).path("requests");
            assertEquals(2, requests.path("failed").asLong(), requests.toString());
            assertEquals(6, requests.path("completed").asLong(), requests.toString());
        }
    }

    private Path conversations() throws java.io.IOException
    {
        final Path conversations = Files.createDirectories(dir.resolve("conversations"));
        for (int c = 0; c < 2; c++)
        {
            final StringBuilder requests = new StringBuilder();
            for (int turn = 0; turn < 4; turn++)
            {
                final int in = 256 * (turn + 1);
                final StringBuilder ids = new StringBuilder();
                for (int b = 1; b <= in / 64; b++)
                {
                    ids.append(b > 1 ? "," : "").append(b);
                }
                requests.append(turn > 0 ? "," : "").append("{\"t\":").append(0.15 * turn)
                    .append(",\"type\":\"n\",\"in\":").append(in).append(",\"out\":4,\"hash_ids\":[").append(ids)
                    .append("],\"think_time\":0.05}");
            }
            Files.writeString(conversations.resolve("c" + c + ".json"), "{\"id\":\"c" + c + "\",\"block_size\":64," +
                "\"hash_id_scope\":\"local\",\"requests\":[" + requests + "]}");
        }
        return conversations;
    }
}
