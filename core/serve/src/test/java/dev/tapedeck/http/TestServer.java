package dev.tapedeck.http;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.tokens.BuiltinTokenizer;
import dev.tapedeck.net.Transport;
import dev.tapedeck.tokens.ChatTemplate;
import dev.tapedeck.tokens.Tokenizer;

/**
 * An in-process {@code serve} on 127.0.0.1 with ephemeral ports, plus a real HTTP client (the JDK's) to talk to it.
 */
public final class TestServer implements AutoCloseable
{
    /** The model name the server serves. */
    public static final String MODEL = "Qwen/Qwen3-8B";
    /** A fast step model so tests finish quickly: 1 ms per step plus small batch costs. */
    static final LatencyModel FAST = new StepLatencyModel(
        new StepCoefficients("test-fast", 1000, 0.5, 5, 0, 0, "tests"));

    private static Tokenizer sharedTokenizer;

    final HttpServer server;
    /** The instances' ports. */
    public final List<Integer> ports;
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * @param options face settings.
     * @param engineSettings adjusts each engine's configuration (before it is concluded).
     * @throws InterruptedException if interrupted while starting.
     */
    public TestServer(final ServeOptions options, final UnaryOperator<EngineConfig> engineSettings)
        throws InterruptedException
    {
        final Tokenizer tokenizer = tokenizer();
        final List<EngineConfig> configs = new ArrayList<>();
        for (int i = 0; i < options.instances(); i++)
        {
            configs.add(engineSettings.apply(new EngineConfig().seed(i).latencyModel(FAST))
                .tokenSpace(tokenizer.vocabulary().randomTokenIds(), tokenizer.eosTokenId())
                .conclude());
        }
        server = HttpServer.start(options, configs, tokenizer);
        ports = server.ports();
    }

    /**
     * @return the tokenizer the test servers use (built-in o200k).
     */
    public static synchronized Tokenizer tokenizer()
    {
        if (null == sharedTokenizer)
        {
            sharedTokenizer = new BuiltinTokenizer();
        }
        return sharedTokenizer;
    }

    /**
     * @return options for one instance on an ephemeral port.
     */
    public static ServeOptions options()
    {
        return options(1);
    }

    static ServeOptions options(final int instances)
    {
        return new ServeOptions("127.0.0.1", 0, instances, MODEL, List.of(MODEL, "alias"),
            ServeOptions.Mode.RANDOM, ChatTemplate.CHATML, 64 * 1024, 2_000_000_000L, false,
            "0.19.0", null, 0, Transport.select("auto"));
    }

    /**
     * @return a started server with the fast test model.
     * @throws InterruptedException if interrupted while starting.
     */
    public static TestServer start() throws InterruptedException
    {
        return new TestServer(options(), c -> c);
    }

    URI uri(final String path)
    {
        return uri(0, path);
    }

    URI uri(final int instance, final String path)
    {
        return URI.create("http://127.0.0.1:" + ports.get(instance) + path);
    }

    HttpResponse<String> post(final String path, final String json) throws IOException, InterruptedException
    {
        return post(0, path, json);
    }

    HttpResponse<String> post(final int instance, final String path, final String json)
        throws IOException, InterruptedException
    {
        return client.send(HttpRequest.newBuilder(uri(instance, path))
            .timeout(Duration.ofSeconds(30))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(final String path) throws IOException, InterruptedException
    {
        return client.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    }

    /**
     * @param name a sample name with its labels as printed, e.g. {@code vllm:num_requests_running{engine="0",...}}.
     * @return its value in the current /metrics, or NaN when absent.
     * @throws IOException if the scrape fails.
     * @throws InterruptedException if interrupted.
     */
    public double metric(final String name) throws IOException, InterruptedException
    {
        for (final String line : get("/metrics").body().split("\n"))
        {
            if (line.startsWith(name + " "))
            {
                return Double.parseDouble(line.substring(name.length() + 1));
            }
        }
        return Double.NaN;
    }

    @Override
    public void close()
    {
        server.shutdown(0);
    }
}
