package dev.tapedeck.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import dev.tapedeck.junit.TapedeckFleet;

/**
 * What our users write: their own client code measured against an embedded fleet, no process and no port to manage.
 * The client here stands in for a router's hot path: it sends a streaming chat completion to the instances in turn
 * (round robin, as the simplest router) and parses the SSE response as it arrives: content deltas, then the usage
 * chunk's completion tokens, which must equal {@code max_tokens}. The
 * fleet's engines answer with no modelled delay ({@code fixedLatency(0, 0)}), so the figure is the client's and the
 * loopback's cost, not the simulated GPU's. Started in {@code @Setup}, closed in {@code @TearDown}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED")
public class RouterClientBenchmark
{
    private static final String CONTENT = "\"content\":\"";
    private static final String COMPLETION_TOKENS = "\"completion_tokens\":";

    /** Output tokens per streamed response. */
    @Param({"64"})
    public int maxTokens;

    private TapedeckFleet fleet;
    private HttpClient http;
    private HttpRequest[] requests;
    private int next;

    /**
     * Start two simulated instances and build one request per instance.
     */
    @Setup(Level.Trial)
    public void startFleet()
    {
        fleet = TapedeckFleet.builder().instances(2).fixedLatency(0, 0).build().start();
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
            .build();
        final String body = "{\"model\":\"Qwen/Qwen3-8B\",\"stream\":true,\"max_tokens\":" + maxTokens +
            ",\"ignore_eos\":true,\"stream_options\":{\"include_usage\":true}," +
            "\"messages\":[{\"role\":\"user\",\"content\":\"route me\"}]}";
        requests = new HttpRequest[fleet.baseUrls().size()];
        for (int i = 0; i < requests.length; i++)
        {
            final URI url = fleet.baseUrl(i).resolve("/v1/chat/completions");
            requests[i] = HttpRequest.newBuilder(url).header("content-type", "application/json")
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
        }
    }

    /**
     * Stop the fleet.
     */
    @TearDown(Level.Trial)
    public void stopFleet()
    {
        fleet.close();
    }

    /**
     * One routed request: send, then parse the event stream line by line until {@code [DONE]}.
     *
     * @return content deltas seen (consumed by JMH).
     * @throws Exception if the request fails.
     */
    @Benchmark
    public int streamAndParse() throws Exception
    {
        final HttpRequest request = requests[next];
        next = (next + 1) % requests.length;
        final HttpResponse<Stream<String>> response = http.send(request, HttpResponse.BodyHandlers.ofLines());
        if (200 != response.statusCode())
        {
            throw new IllegalStateException(request.uri() + " answered " + response.statusCode());
        }
        int deltas = 0;
        int completionTokens = -1;
        try (Stream<String> lines = response.body())
        {
            final Iterator<String> it = lines.iterator();
            while (it.hasNext())
            {
                final String line = it.next();
                if (!line.startsWith("data: "))
                {
                    continue;
                }
                if (line.startsWith("[DONE]", 6))
                {
                    break;
                }
                if (line.indexOf(CONTENT, 6) > 0)
                {
                    deltas++;
                }
                final int usage = line.indexOf(COMPLETION_TOKENS, 6);
                if (usage > 0)
                {
                    completionTokens = leadingInt(line, usage + COMPLETION_TOKENS.length());
                }
            }
        }
        if (completionTokens != maxTokens || 0 == deltas)
        {
            // a slow reader gets several tokens merged into one delta, so deltas may be fewer than tokens
            throw new IllegalStateException(deltas + " content deltas and usage " + completionTokens +
                " completion tokens for max_tokens " + maxTokens);
        }
        return deltas;
    }

    private static int leadingInt(final String text, final int from)
    {
        int value = 0;
        for (int i = from; i < text.length() && Character.isDigit(text.charAt(i)); i++)
        {
            value = value * 10 + text.charAt(i) - '0';
        }
        return value;
    }
}
