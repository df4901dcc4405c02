package dev.tapedeck.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;
import org.zeromq.ZContext;

import picocli.CommandLine;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.serve.Serve;
import dev.tapedeck.testing.KvEventSubscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --data-parallel-size 2} from its flags, over real HTTP and ZeroMQ on 127.0.0.1: two engines behind one
 * port, each with its own prefix cache, its own KV event publisher (own endpoint, shared llm-d topic, its rank in every
 * batch), its own {@code engine} label in {@code /metrics}; the {@code X-data-parallel-rank} header pins a request,
 * bad values get a 400, and requests without it spread to the least loaded rank.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DataParallelServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "the quick brown fox jumps over the lazy dog while the cat sleeps ".repeat(8);

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    private static Serve start(final String... extra) throws Exception
    {
        final List<String> args = new ArrayList<>(List.of("serve", "--port", "0", "--model", "my/model",
            "--data-parallel-size", "2", "--latency-model", "knob", "--time-to-first-token", "2ms",
            "--inter-token-latency", "2ms", "--enable-prompt-tokens-details"));
        args.addAll(List.of(extra));
        final CommandLine cli = Main.commandLine();
        cli.parseArgs(args.toArray(new String[0]));
        final ServeCommand serve = cli.getSubcommands().get("serve").getCommand();
        return Serve.start(serve.context());
    }

    private HttpResponse<String> complete(final int port, final String rankHeader, final String prompt,
        final int maxTokens) throws IOException, InterruptedException
    {
        return client.send(request(port, rankHeader, prompt, maxTokens, false), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(final int port, final String rankHeader, final String prompt,
        final int maxTokens, final boolean stream)
    {
        final HttpRequest.Builder builder = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/v1/completions"))
            .timeout(Duration.ofSeconds(30))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"my/model\",\"prompt\":" + quote(prompt) +
                ",\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true,\"stream\":" + stream + "}"));
        if (null != rankHeader)
        {
            builder.header("X-data-parallel-rank", rankHeader);
        }
        return builder.build();
    }

    private static String quote(final String text)
    {
        try
        {
            return JSON.writeValueAsString(text);
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static int cachedTokens(final HttpResponse<String> response) throws IOException
    {
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body()).path("usage").path("prompt_tokens_details").path("cached_tokens")
            .asInt(-1);
    }

    private String get(final int port, final String path) throws IOException, InterruptedException
    {
        final HttpResponse<String> response = client.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + path)).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return response.body();
    }

    @Test
    void shouldKeepOneCacheAndOneEventStreamPerRank() throws Exception
    {
        final Serve started = start("--enable-kv-cache-events", "--kv-events-endpoint",
            "tcp://127.0.0.1:*", "--kv-events-replay-endpoint", "tcp://127.0.0.1:*", "--vllm-version", "0.19.0");
        try (ZContext context = new ZContext())
        {
            final int port = started.httpServer().ports().get(0);
            final List<KvEventPublisher> publishers = started.kvEventPublishers();
            assertEquals(2, publishers.size(), "one publisher per rank");
            assertNotEquals(publishers.get(0).endpoint(), publishers.get(1).endpoint());
            final String topic = "kv@127.0.0.1:" + port + "@my/model";
            final List<KvEventSubscriber> subs = new ArrayList<>();
            for (int rank = 0; rank < 2; rank++)
            {
                assertEquals("kv@127.0.0.1:" + port + "@my/model", publishers.get(rank).settings().topic(),
                    "the ranks share the instance's topic");
                assertEquals(rank, publishers.get(rank).settings().dataParallelRank());
                subs.add(new KvEventSubscriber(context, publishers.get(rank), topic));
            }

            // rank 1 caches the prompt; a repeat on rank 1 hits, the same prompt on rank 0 does not
            assertEquals(0, cachedTokens(complete(port, "1", PROMPT, 2)));
            assertTrue(cachedTokens(complete(port, "1", PROMPT, 2)) >= 16, "a hit on the rank that cached it");
            assertEquals(0, cachedTokens(complete(port, "0", PROMPT, 2)), "rank 0 has its own cache");

            final ArrayValue rank1 = receiveBatch(subs.get(1));
            assertEquals(1, rank1.get(2).asIntegerValue().toInt(), "rank 1 writes its rank in the batch");
            assertEquals("BlockStored", eventType(rank1.get(1).asArrayValue().get(0)));
            final ArrayValue rank0 = receiveBatch(subs.get(0));
            assertEquals(0, rank0.get(2).asIntegerValue().toInt());
            assertEquals("BlockStored", eventType(rank0.get(1).asArrayValue().get(0)));
            // the same prompt hashes to the same blocks on both ranks
            assertEquals(rank1.get(1).asArrayValue().get(0).asArrayValue().get(1),
                rank0.get(1).asArrayValue().get(0).asArrayValue().get(1));

            final String metrics = get(port, "/metrics");
            assertTrue(metrics.contains("vllm:num_requests_running{engine=\"0\",model_name=\"my/model\"}"), metrics);
            assertTrue(metrics.contains("vllm:num_requests_running{engine=\"1\",model_name=\"my/model\"}"), metrics);
            assertTrue(hitsOf(metrics, "1") >= 16, "rank 1's hits are labelled engine=1");
            assertEquals(0, hitsOf(metrics, "0"), "rank 0 had no hit");
        }
        finally
        {
            started.close();
        }
    }

    @Test
    void shouldRejectABadRankHeader() throws Exception
    {
        final Serve started = start();
        try
        {
            final int port = started.httpServer().ports().get(0);
            final HttpResponse<String> notANumber = complete(port, "one", "hello", 2);
            assertEquals(400, notANumber.statusCode());
            final JsonNode error = JSON.readTree(notANumber.body()).path("error");
            assertEquals("BadRequestError", error.path("type").asText());
            assertTrue(error.path("message").asText().contains("X-data-parallel-rank"), notANumber.body());
            final HttpResponse<String> outOfRange = complete(port, "2", "hello", 2);
            assertEquals(400, outOfRange.statusCode());
            assertTrue(JSON.readTree(outOfRange.body()).path("error").path("message").asText()
                .contains("out of range [0, 2)"), outOfRange.body());
            assertEquals(200, complete(port, "1", "hello", 2).statusCode(), "the server keeps serving");
        }
        finally
        {
            started.close();
        }
    }

    @Test
    void shouldSpreadUnpinnedRequestsToTheLeastLoadedRank() throws Exception
    {
        // a slow server: requests stay in flight while the test looks at the ranks
        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--model", "my/model", "--data-parallel-size", "2", "--latency-model",
            "knob", "--time-to-first-token", "1ms", "--inter-token-latency", "100ms");
        final Serve started =
            Serve.start(((ServeCommand)cli.getSubcommands().get("serve").getCommand()).context());
        try
        {
            final int port = started.httpServer().ports().get(0);
            // two pinned to rank 0 first: the next four unpinned requests must all go to rank 1 first, then spread
            final List<CompletableFuture<HttpResponse<Void>>> streams = new ArrayList<>();
            for (int i = 0; i < 2; i++)
            {
                streams.add(client.sendAsync(request(port, "0", "pinned " + i, 1000, true),
                    HttpResponse.BodyHandlers.discarding()));
            }
            awaitInFlight(started, 0, 2);
            for (int i = 0; i < 6; i++)
            {
                streams.add(client.sendAsync(request(port, null, "free " + i, 1000, true),
                    HttpResponse.BodyHandlers.discarding()));
                awaitInFlight(started, -1, 3 + i);
            }
            assertEquals(4, inFlight(started, 0), "2 pinned + 2 of the 6 unpinned");
            assertEquals(4, inFlight(started, 1), "4 of the 6 unpinned");
            assertEquals(8, JSON.readTree(get(port, "/load")).path("server_load").asInt(), "/load counts every rank");
            streams.forEach(s -> s.cancel(true));
        }
        finally
        {
            started.close();
        }
    }

    private static int inFlight(final Serve started, final int rank) throws Exception
    {
        return started.httpServer().onEngine(0, rank, (Engine e) -> e.numRunning() + e.numWaiting());
    }

    private static int running(final Serve started, final int rank) throws Exception
    {
        return started.httpServer().onEngine(0, rank, Engine::numRunning);
    }

    /**
     * Wait until rank (or, with -1, both ranks together) has the given number of requests running (so the next
     * request's routing sees every earlier one as running, not waiting, and its choice is deterministic).
     */
    private static void awaitInFlight(final Serve started, final int rank, final int expected)
        throws Exception
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true)
        {
            final int now = rank >= 0 ? running(started, rank) : running(started, 0) + running(started, 1);
            if (now == expected)
            {
                return;
            }
            assertTrue(System.nanoTime() - deadlineNs < 0, "waited for " + expected + " running, have " + now);
            Thread.sleep(5);
        }
    }

    private static long hitsOf(final String metrics, final String engine)
    {
        for (final String line : metrics.split("\n"))
        {
            if (line.startsWith("vllm:prefix_cache_hits_total{engine=\"" + engine + "\""))
            {
                return (long)Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no vllm:prefix_cache_hits_total for engine " + engine + " in\n" + metrics);
    }

    private static ArrayValue receiveBatch(final KvEventSubscriber sub) throws IOException
    {
        final KvEventSubscriber.Batch next = sub.next();
        assertEquals(0L, next.sequence(), "each rank numbers its batches from 0");
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(next.payload()))
        {
            final ArrayValue batch = unpacker.unpackValue().asArrayValue();
            assertEquals(3, batch.size(), "[ts, events, data_parallel_rank]");
            return batch;
        }
    }

    private static String eventType(final Value event)
    {
        return event.asArrayValue().get(0).asStringValue().asString();
    }
}
