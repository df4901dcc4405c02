package dev.tapedeck.junit;

import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.zeromq.ZContext;

import dev.tapedeck.testing.KvEventSubscriber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fleet as a per-test extension (an instance field), and as the JMH handle: started and closed by hand.
 */
class TapedeckFleetIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    @RegisterExtension
    final TapedeckFleet perTest = TapedeckFleet.builder().instances(2).dataParallelSize(2).model("my/model")
        .fixedLatency(2, 1).kvEvents(true).build();

    @Test
    void shouldRunOneServerPerInstanceWithItsRanksAndKvEndpoints() throws Exception
    {
        assertEquals(2, perTest.baseUrls().size());
        assertNotEquals(perTest.baseUrl(0), perTest.baseUrl(1));
        assertEquals(4, perTest.kvEventEndpoints().size(), "one publisher per engine (2 instances x 2 ranks)");
        assertTrue(perTest.kvEventEndpoints().stream().allMatch(e -> e.matches("tcp://127\\.0\\.0\\.1:\\d+")),
            perTest.kvEventEndpoints().toString());
        assertEquals("kv@127.0.0.1:" + perTest.baseUrl(1).getPort() + "@my/model", perTest.kvEventTopic(2));

        try (ZContext zmq = new ZContext(1))
        {
            final KvEventSubscriber sub = new KvEventSubscriber(zmq, perTest.serve().kvEventPublishers().get(0),
                perTest.kvEventTopic(0));
            final HttpResponse<String> response = completion(perTest.baseUrl(0), "my/model",
                "a prompt long enough to fill at least one whole KV block of sixteen tokens, and then some more", 4,
                "0");
            assertEquals(200, response.statusCode(), response.body());
            assertEquals(0, sub.next().sequence(), "the pinned rank's first KV event batch");
        }
        final MetricsSnapshot metrics = perTest.scrapeMetrics(0);
        assertEquals(1.0, metrics.sum("vllm:request_success_total"));
        assertEquals(1.0, metrics.value("vllm:request_success_total{engine=\"0\",finished_reason=\"length\"," +
            "model_name=\"my/model\"}").orElse(-1), metrics.samples().keySet().toString());
        assertEquals(0.0, perTest.scrapeMetrics(1).sum("vllm:request_success_total"), "the other instance");
    }

    @Test
    void shouldStartAFreshFleetForEachTest()
    {
        assertEquals(0.0, perTest.scrapeMetrics(0).sum("vllm:request_success_total"),
            "no request from the other test is counted here");
    }

    @Test
    void shouldStartAndStopByHandAsInAJmhBenchmark() throws Exception
    {
        final TapedeckFleet fleet = TapedeckFleet.builder().build();
        assertThrows(IllegalStateException.class, fleet::baseUrls, "not started");
        final URI first = fleet.start().baseUrl(0);
        assertEquals(first, fleet.start().baseUrl(0), "a second start while running changes nothing");
        assertEquals(200, completion(first, "Qwen/Qwen3-8B", "hi", 2, null).statusCode());
        assertTrue(fleet.kvEventEndpoints().isEmpty(), "KV events are off by default");
        fleet.close();
        final Exception refused = assertThrows(Exception.class, () -> completion(first, "Qwen/Qwen3-8B", "hi", 2,
            null));
        assertInstanceOf(ConnectException.class, refused, refused.toString());
        final URI again = fleet.start().baseUrl(0);
        assertEquals(200, completion(again, "Qwen/Qwen3-8B", "hi", 2, null).statusCode(), "restarted");
        fleet.close();
        fleet.close();
    }

    @Test
    void shouldRejectAnUnknownStepProfileByName()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> TapedeckFleet.builder().stepProfile("no-such-gpu"));
        assertTrue(ex.getMessage().contains("dense-8b-rtxpro6000"), ex.getMessage());
    }

    private static HttpResponse<String> completion(final URI base, final String model, final String prompt,
        final int maxTokens, final String rank) throws Exception
    {
        final HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve("/v1/completions"))
            .timeout(Duration.ofSeconds(30))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model + "\",\"prompt\":\"" + prompt +
                "\",\"max_tokens\":" + maxTokens + "}"));
        if (null != rank)
        {
            request.header("X-data-parallel-rank", rank);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
