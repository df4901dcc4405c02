package dev.tapedeck.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import picocli.CommandLine;

import dev.tapedeck.serve.Serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve} started as existing deployments start their server: with the flags of an llm-d-inference-sim pod of
 * llm-d's one-rank-per-pod layout (KV events dialled to a subscriber, rank 2), with a {@code vllm serve} command line,
 * and from a {@code --config} YAML file; each starts and serves.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DropInFlagsIT
{
    private static final String COMPLETION = "{\"model\":\"%s\",\"prompt\":\"%s\",\"max_tokens\":4}";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();

    private static ServeCommand parse(final CommandLine cli, final String... args)
    {
        cli.parseArgs(args);
        return cli.getSubcommands().get("serve").getCommand();
    }

    private HttpResponse<String> complete(final Serve serve, final String model, final String requestId)
        throws Exception
    {
        return complete(serve, model, requestId, "hello there");
    }

    private HttpResponse<String> complete(final Serve serve, final String model, final String requestId,
        final String prompt) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" +
            serve.ports().get(0) + "/v1/completions")).header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(String.format(COMPLETION, model, prompt)));
        if (null != requestId)
        {
            request.header("X-Request-Id", requestId);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String metrics(final Serve serve) throws Exception
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serve.ports().get(0) + "/metrics"))
            .build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void shouldStartAndServeWithTheFlagsOfAnLlmdInferenceSimPod() throws Exception
    {
        try (ZContext zmq = new ZContext())
        {
            // llm-d-inference-sim dials --zmq-endpoint; rank 2 dials its port + 2, where the subscriber (the endpoint
            // picker) listens
            final ZMQ.Socket subscriber = zmq.createSocket(SocketType.SUB);
            subscriber.subscribe(new byte[0]);
            final int base = subscriber.bindToRandomPort("tcp://127.0.0.1", 20_000, 30_000) - 2;
            final CommandLine cli = Main.commandLine();
            final ServeCommand command = parse(cli, "serve", "--port", "0", "--model",
                "meta-llama/Llama-3.1-8B-Instruct", "--served-model-name", "meta-llama/Llama-3.1-8B-Instruct",
                "--max-num-seqs", "5", "--max-model-len", "4096", "--mode", "random", "--seed", "7",
                "--time-to-first-token", "20ms", "--inter-token-latency", "5ms", "--enable-kvcache",
                "--kv-cache-size", "1024", "--block-size", "16", "--zmq-endpoint", "tcp://127.0.0.1:" + base,
                "--event-batch-size", "16", "--hash-seed", "42", "--use-vllm-map-event-format",
                "--kv-events-replay-queue-size", "64", "--global-cache-hit-threshold", "0", "--data-parallel-size",
                "4", "--data-parallel-rank", "2", "--enable-request-id-headers", "--max-request-body-size-mb", "8",
                "--startup-duration", "0s", "--failure-injection-rate", "0", "--v", "5");
            assertEquals(List.of("--event-batch-size", "--v"),
                CompatOptions.noEffect(cli.getSubcommands().get("serve").getParseResult()));
            try (Serve serve = Serve.start(command.context()))
            {
                assertEquals(8 << 20, serve.context().serveOptions().maxRequestBodyBytes());
                final HttpResponse<String> answer = complete(serve, "meta-llama/Llama-3.1-8B-Instruct", "abc-123");
                assertEquals(200, answer.statusCode(), answer.body());
                assertEquals("abc-123", answer.headers().firstValue("x-request-id").orElse(null));
                assertTrue(answer.body().contains("\"id\":\"cmpl-abc-123\""), answer.body());
                assertTrue(metrics(serve).contains("vllm:num_requests_running{engine=\"2\","),
                    "rank 2 of a fleet with one rank per pod");
                assertEquals(1, serve.engineConfigs().size(), "one rank in this process");
                final HttpResponse<String> pinned = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" +
                    serve.ports().get(0) + "/v1/completions")).header("content-type", "application/json")
                    .header("X-data-parallel-rank", "2").POST(HttpRequest.BodyPublishers.ofString(String.format(
                    COMPLETION, "meta-llama/Llama-3.1-8B-Instruct", "pinned"))).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertEquals(200, pinned.statusCode(), "a request pinned to this pod's rank: " + pinned.body());
                assertTrue(pinned.headers().firstValue("x-request-id").orElse("").matches("[0-9a-f]{32}"),
                    "a new id when the client sends none, as vLLM's middleware");
                final HttpResponse<String> missing = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" +
                    serve.ports().get(0) + "/no-such-route")).header("X-Request-Id", "err-1").build(),
                    HttpResponse.BodyHandlers.ofString());
                assertEquals(404, missing.statusCode());
                assertEquals("err-1", missing.headers().firstValue("x-request-id").orElse(null), "errors carry it too");
                subscriber.setReceiveTimeOut(200);
                byte[] topic = null;
                // a PUB that dials drops what it sends before it joined; on a loaded 2-core box joining took over 10 s
                for (int i = 0; i < 150 && null == topic; i++)
                {
                    complete(serve, "meta-llama/Llama-3.1-8B-Instruct", null,
                        i + " many words in a long prompt".repeat(20)); // new blocks each time: new events
                    topic = subscriber.recv(0);
                }
                assertNotNull(topic, "KV events reached the subscriber on port + rank");
                subscriber.recv(0);
                final byte[] payload = subscriber.recv(0);
                assertTrue(payload.length > 0);
                assertEquals(2, serve.kvEventPublishers().get(0).settings().dataParallelRank());
                assertTrue(serve.kvEventPublishers().get(0).settings().eventsAsMaps());
                assertEquals(64, serve.kvEventPublishers().get(0).settings().bufferSteps());
            }
        }
    }

    @Test
    void shouldStartAndServeWithAVllmServeCommandLine() throws Exception
    {
        final CommandLine cli = Main.commandLine();
        final ServeCommand command = parse(cli, "serve", "Qwen/Qwen3-8B", "--port", "0", "--tensor-parallel-size",
            "1", "--enforce-eager", "--gpu-memory-utilization", "0.9", "--dtype", "bfloat16", "--max-model-len",
            "8192", "--disable-log-requests", "--trust-remote-code", "--swap-space", "4", "--max-num-seqs", "64",
            "--no-enable-prefix-caching", "--uvicorn-log-level", "warning", "--generation-config", "vllm",
            "--enable-mfu-metrics", "--kv-cache-metrics", "--show-hidden-metrics-for-version", "0.18");
        assertEquals(List.of("--dtype", "--trust-remote-code", "--disable-log-requests", "--uvicorn-log-level",
            "--swap-space", "--generation-config", "--enforce-eager").stream().sorted().toList(),
            CompatOptions.noEffect(cli.getSubcommands().get("serve").getParseResult()).stream().sorted().toList());
        try (Serve serve = Serve.start(command.context()))
        {
            assertEquals(200, complete(serve, "Qwen/Qwen3-8B", null).statusCode());
            assertEquals(8192, serve.engineConfigs().get(0).maxModelLen());
            final String text = metrics(serve);
            final java.util.regex.Matcher flops = java.util.regex.Pattern.compile(
                "vllm:estimated_flops_per_gpu_total\\{[^}]*} ([0-9.eE+]+)").matcher(text);
            assertTrue(flops.find() && Double.parseDouble(flops.group(1)) > 1e10,
                "a request through Qwen3-8B costs more than 10 GFLOPs: " + text);
            assertTrue(text.contains("vllm:kv_block_lifetime_seconds_count{engine=\"0\"," +
                "model_name=\"Qwen/Qwen3-8B\"} 0"), "registered, but never observed without prefix caching, as in " +
                "vLLM: " + text);
        }
    }

    @Test
    void shouldReadAConfigFileTheCommandLineOverrides() throws Exception
    {
        final Path config = dir.resolve("config.yaml");
        Files.writeString(config, "port: 0\nmodel: my/model\nserved-model-name:\n  - my/model\n  - alias\n" +
            "max-num-seqs: 3\ntime-to-first-token: 10ms\nenforce-eager: true\nenable-kvcache: false\n" +
            "no-such-flag: 1\n");
        final CommandLine cli = Main.commandLine();
        final StringWriter err = new StringWriter();
        final String[] args = ConfigFile.expand(new String[] {"serve", "--config", config.toString(),
            "--max-num-seqs", "4"}, cli, new PrintWriter(err, true));
        assertTrue(err.toString().contains("'no-such-flag' is not a flag of tapedeck serve; skipped"), err.toString());
        final ServeCommand command = parse(cli, args);
        try (Serve serve = Serve.start(command.context()))
        {
            assertEquals(4, serve.engineConfigs().get(0).maxNumSeqs(), "the command line overrides the file");
            assertEquals(List.of("my/model", "alias"), serve.context().serveOptions().servedModelNames());
            assertEquals(200, complete(serve, "alias", null).statusCode());
        }
        Files.writeString(config, "port: 0\nserved-model-name: [from-file]\nmax-num-seqs: 3\n");
        final CommandLine second = Main.commandLine();
        final ServeCommand positional = parse(second, ConfigFile.expand(new String[] {"serve", "Qwen/Qwen3-8B",
            "--config", config.toString(), "--served-model-name", "from-cli"}, second, new PrintWriter(err, true)));
        final dev.tapedeck.serve.ServeContext context = positional.context().conclude();
        assertEquals("Qwen/Qwen3-8B", context.model(), "the positional model is not taken as a list's value");
        assertEquals(List.of("from-cli"), context.serveOptions().servedModelNames(), "the command line's list wins");
        assertEquals(3, context.engine().maxNumSeqs(), "what the command line does not give comes from the file");
        // llm-d-inference-sim's fake-metrics as a YAML map, as its deployments write it
        Files.writeString(config, "port: 0\nfake-metrics:\n  running-requests: 7\n  waiting-requests: 2\n" +
            "  kv-cache-usage: 0.25\n  request-success-total:\n    stop: 5\n");
        final CommandLine faked = Main.commandLine();
        try (Serve serve = Serve.start(parse(faked, ConfigFile.expand(new String[] {"serve", "--config",
            config.toString()}, faked, new PrintWriter(err, true))).context()))
        {
            assertEquals(200, complete(serve, "Qwen/Qwen3-8B", null).statusCode());
            final String text = metrics(serve);
            assertTrue(text.contains("vllm:num_requests_running{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 7.0") &&
                text.contains("vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 0.25") &&
                text.contains("finished_reason=\"stop\",model_name=\"Qwen/Qwen3-8B\"} 5.0"),
                "the fake values, not the served request's: " + text);
        }
        Files.writeString(config, "- port\n");
        final CommandLine other = Main.commandLine();
        final StringWriter refused = new StringWriter();
        other.setErr(new PrintWriter(refused, true));
        assertEquals(2, Main.execute(other, "serve", "--config", config.toString()));
        assertTrue(refused.toString().contains("expected a map of flags"), refused.toString());
    }
}
