package dev.tapedeck.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.testing.Sse;
import dev.tapedeck.trace.TraceReader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shaded jar as users run it, in its own process: it starts, serves, and on SIGTERM lets in-flight requests
 * finish within --shutdown-timeout; what is left is aborted (finish_reason "abort", then [DONE]).
 */
@Timeout(90)
class ServeProcessIT
{
    private static final Pattern LISTENING = Pattern.compile("on (http://127\\.0\\.0\\.1:(\\d+))");
    private final HttpClient client = HttpClient.newHttpClient();

    private record Server(Process process, String url, List<String> log, Thread pump)
    {
    }

    private static Server start(final String... flags) throws IOException, InterruptedException
    {
        return start(java.util.Map.of(), flags);
    }

    private static Server start(final java.util.Map<String, String> environment, final String... flags)
        throws IOException, InterruptedException
    {
        final String jar = System.getProperty("tapedeck.test.jar");
        assertTrue(null != jar && Files.isRegularFile(Path.of(jar)), "the shaded jar is built before ITs: " + jar);
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
            .toString(), "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-jar", jar, "serve", "--port",
            "0", "--step-base", "2ms"));
        command.addAll(List.of(flags));
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        final Process process = builder.start();
        final BufferedReader output = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8));
        final List<String> log = new ArrayList<>();
        String line;
        while (null != (line = output.readLine()))
        {
            log.add(line);
            final Matcher m = LISTENING.matcher(line);
            if (m.find())
            {
                final Thread pump = new Thread(() -> output.lines().forEach(l ->
                {
                    synchronized (log)
                    {
                        log.add(l);
                    }
                }));
                pump.setDaemon(true);
                pump.start();
                return new Server(process, m.group(1), log, pump);
            }
        }
        throw new AssertionError("serve exited before listening: " + log);
    }

    private CompletableFuture<HttpResponse<String>> stream(final Server server, final int maxTokens)
    {
        return client.sendAsync(HttpRequest.newBuilder(URI.create(server.url() + "/v1/completions"))
            .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"x\",\"stream\":true,\"max_tokens\":" +
                maxTokens + "}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    private void awaitRunning(final Server server) throws Exception
    {
        for (int i = 0; i < 500; i++)
        {
            final String metrics = client.send(HttpRequest.newBuilder(URI.create(server.url() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
            if (metrics.contains("vllm:num_requests_running{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"} 1.0"))
            {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the request never ran");
    }

    @Test
    void shouldStartWithARealTokenizerWithoutGpuNoiseAndWithItsChatTemplate() throws Exception
    {
        final Path qwen3 = Path.of(System.getProperty("tapedeck.test.qwen3Tokenizer", "missing"));
        final Server server = start("--tokenizer", qwen3.toString());
        try
        {
            final List<String> startup;
            synchronized (server.log())
            {
                startup = List.copyOf(server.log());
            }
            assertTrue(startup.stream().noneMatch(l -> l.contains("CUDA") || l.contains("GPU")),
                "a GPU-free tool prints nothing about GPUs: " + startup);
            assertTrue(startup.stream().anyMatch(l -> l.contains("chat template: Jinja from") &&
                l.contains("tokenizer_config.json")), "the model's own template is named: " + startup);
        }
        finally
        {
            server.process().destroy();
            server.process().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldAnswerWithLlmdsPodHeadersFromTheEnvironment() throws Exception
    {
        final Server server = start(java.util.Map.of("POD_NAME", "sim-pod-7", "POD_NAMESPACE", "llm-d"),
            "--enable-request-id-headers");
        try
        {
            final HttpResponse<String> answer = client.send(HttpRequest.newBuilder(URI.create(server.url() +
                "/v1/completions")).header("X-Request-Id", "req-42").POST(HttpRequest.BodyPublishers.ofString(
                "{\"prompt\":\"x\",\"max_tokens\":2}")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, answer.statusCode(), answer.body());
            assertEquals("sim-pod-7", answer.headers().firstValue("x-inference-pod").orElse(null));
            assertEquals(server.url().substring(server.url().lastIndexOf(':') + 1),
                answer.headers().firstValue("x-inference-port").orElse(null));
            assertEquals("llm-d", answer.headers().firstValue("x-inference-namespace").orElse(null));
            assertEquals("req-42", answer.headers().firstValue("x-request-id").orElse(null));
        }
        finally
        {
            server.process().destroy();
            server.process().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldDrainInFlightRequestsOnSigterm(@TempDir final Path dir) throws Exception
    {
        final Path trace = dir.resolve("serve.jsonl.gz");
        final Server server = start("--shutdown-timeout", "30s", "--trace-out", trace.toString(), "--record-tokens",
            "--dtype", "bfloat16", "--enforce-eager", "--vllm-version", "0.19.0");
        final CompletableFuture<HttpResponse<String>> inFlight = stream(server, 300);
        awaitRunning(server);
        // SIGTERM; Process.destroy() would also close our end of its output
        server.process().toHandle().destroy();
        final Sse.Stream result = Sse.parse(inFlight.get(30, TimeUnit.SECONDS).body());
        assertTrue(result.done(), "the in-flight stream completed during the drain");
        assertEquals("length", result.finishReason(0));
        assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
        server.pump().join(10_000);
        synchronized (server.log())
        {
            assertTrue(server.log().stream().anyMatch(l -> l.contains("shutting down")), server.log().toString());
        }
        final TraceReader.Trace captured = TraceReader.readAll(trace);
        assertTrue(captured.warnings().isEmpty(), "the gzip trailer is written on shutdown: " + captured.warnings());
        assertEquals(1, captured.records().size());
        assertEquals(300, captured.records().get(0).outputTokens());
        assertEquals(300, captured.records().get(0).outputTokenIds().length);
        assertEquals("tapedeck-serve", captured.meta().source());
        final String engineConfig = captured.meta().extra().get("engine_config").asText();
        assertTrue(engineConfig.contains("dtype=bfloat16") && engineConfig.contains("enforce_eager=true") &&
            engineConfig.contains("max_num_seqs=256"), "the vLLM flags without effect are recorded: " + engineConfig);
        assertEquals(dev.tapedeck.trace.ConfigFingerprint.hash("", "0.19.0", engineConfig),
            captured.meta().configHash(), "and fingerprinted");
    }

    @Test
    void shouldAbortInFlightRequestsWhenTheDrainTimeoutIsZero() throws Exception
    {
        final Server server = start("--shutdown-timeout", "0s");
        final CompletableFuture<HttpResponse<String>> inFlight = stream(server, 8000);
        awaitRunning(server);
        server.process().toHandle().destroy();
        assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
        server.pump().join(10_000);
        final Sse.Stream result = Sse.parse(inFlight.get(30, TimeUnit.SECONDS).body());
        assertEquals("abort", result.finishReason(0), "the client is told its request was aborted");
        synchronized (server.log())
        {
            assertTrue(server.log().stream().anyMatch(l -> l.contains("shutdown aborted 1 request")),
                server.log().toString());
        }
    }
}
