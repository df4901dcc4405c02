package dev.tapedeck.http;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.serve.Serve;
import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.tokens.BuiltinTokenizer;
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

    final Serve serve;
    final HttpServer server;
    /** The instances' ports. */
    public final List<Integer> ports;
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * @param context the server's settings, usually {@link #context()} adjusted.
     * @throws IOException if the server cannot start.
     * @throws InterruptedException if interrupted while starting.
     */
    public TestServer(final ServeContext context) throws IOException, InterruptedException
    {
        serve = Serve.start(context);
        server = serve.httpServer();
        ports = serve.ports();
    }

    /**
     * @param context the server's settings, usually {@link #context()} adjusted.
     * @param engineSettings adjusts the engines' template configuration.
     * @throws IOException if the server cannot start.
     * @throws InterruptedException if interrupted while starting.
     */
    public TestServer(final ServeContext context, final UnaryOperator<EngineConfig> engineSettings)
        throws IOException, InterruptedException
    {
        this(context.engine(engineSettings.apply(context.engine())));
    }

    /**
     * @return the tokenizer the test servers use (built-in o200k), shared by all of them and never closed.
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
     * @return the test servers' settings: one instance on 127.0.0.1 on a free port, the model also served as
     *     "alias", 64 KiB bodies, 2 s shutdown, the shared tokenizer and the fast step model.
     */
    public static ServeContext context()
    {
        return new ServeContext()
            .model(MODEL)
            .servedModelNames(List.of(MODEL, "alias"))
            .maxRequestBodyBytes(64 * 1024)
            .shutdownTimeoutNs(2_000_000_000L)
            .tokenizer(tokenizer())
            .engine(new EngineConfig().latencyModel(FAST));
    }

    /**
     * @return a started server with the fast test model.
     * @throws IOException if the server cannot start.
     * @throws InterruptedException if interrupted while starting.
     */
    public static TestServer start() throws IOException, InterruptedException
    {
        return new TestServer(context());
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
        serve.close();
    }
}
