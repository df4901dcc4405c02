package dev.tapedeck.load;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpServer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The scraper as an agent driven by an {@link AgentInvoker} with a clock set by hand, against a real HTTP server whose
 * counters grow by a known amount per scrape: one sample per second of the clock, whatever the wall clock does.
 */
class MetricsScraperTest
{
    @Test
    void shouldScrapeOncePerSecondOfItsClockAndTurnCountersIntoRates() throws Exception
    {
        final AtomicInteger scrapes = new AtomicInteger();
        final HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/metrics", exchange ->
        {
            final int n = scrapes.getAndIncrement();
            final byte[] body = ("# TYPE vllm:num_requests_running gauge\n" +
                "vllm:num_requests_running{engine=\"0\"} " + (3 + n) + "\n" +
                "vllm:num_requests_running{engine=\"1\"} 1\n" +
                "vllm:generation_tokens_total{engine=\"0\"} " + (1000 * n) + "\n").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try
        {
            final CachedNanoClock clock = new CachedNanoClock();
            clock.update(TimeUnit.SECONDS.toNanos(50));
            final MetricsScraper scraper = new MetricsScraper(
                URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics"), clock);
            final AgentInvoker invoker = new AgentInvoker(Throwable::printStackTrace, null, scraper);
            invoker.start();
            assertEquals(1, invoker.invoke(), "second 0 is due at once");
            assertEquals(0, invoker.invoke(), "nothing due until the clock reaches second 1");
            clock.advance(TimeUnit.MILLISECONDS.toNanos(999));
            assertEquals(0, invoker.invoke());
            clock.advance(TimeUnit.MILLISECONDS.toNanos(1));
            assertEquals(1, invoker.invoke(), "second 1");
            clock.advance(TimeUnit.SECONDS.toNanos(1));
            assertEquals(1, invoker.invoke(), "second 2");
            invoker.close();

            final List<Map<String, Double>> series = scraper.series();
            assertEquals(3, series.size());
            assertEquals(3, scrapes.get(), "one HTTP scrape per due second, none in between");
            assertEquals(4.0, series.get(0).get("running"), "engines summed");
            assertEquals(6.0, series.get(2).get("running"));
            assertNull(series.get(0).get("generation_tokens_per_s"), "no rate before the second sample");
            assertEquals(1000.0, series.get(1).get("generation_tokens_per_s"), 1e-9);
            assertEquals(0, scraper.failures());
        }
        finally
        {
            server.stop(0);
        }
    }

    @Test
    void shouldCountAFailedScrapeAndLeaveItsSecondEmpty() throws Exception
    {
        final CachedNanoClock clock = new CachedNanoClock();
        final MetricsScraper scraper = new MetricsScraper(URI.create("http://127.0.0.1:9/metrics"), clock);
        final AgentInvoker invoker = new AgentInvoker(Throwable::printStackTrace, null, scraper);
        invoker.start();
        assertEquals(1, invoker.invoke());
        invoker.close();
        assertEquals(1, scraper.failures());
        assertEquals(1, scraper.series().size());
        assertTrue(null == scraper.series().get(0), "the failed second is empty");
    }

    @Test
    void shouldCountAScrapeThatCannotEvenBeSentAsAFailure()
    {
        // "localhost:8000/metrics" parses as a URI of scheme "localhost": the HTTP client refuses it on every scrape
        final MetricsScraper scraper = new MetricsScraper(URI.create("localhost:8000/metrics"), new CachedNanoClock());
        final AgentInvoker invoker = new AgentInvoker(Throwable::printStackTrace, null, scraper);
        invoker.start();
        assertEquals(1, invoker.invoke());
        invoker.close();
        assertEquals(1, scraper.failures(), "counted, not thrown at the runner (which would call it again at once)");
    }

    @Test
    void shouldReadSglangsNamesOntoTheSameSeriesAndGrowPrefixCountersOverTheRun()
    {
        final MetricsScraper scraper = new MetricsScraper(URI.create("http://127.0.0.1:9/metrics"),
            new CachedNanoClock());
        scraper.parse("sglang:num_running_reqs{tp_rank=\"0\"} 3\nsglang:num_queue_reqs{tp_rank=\"0\"} 2\n" +
            "sglang:token_usage{tp_rank=\"0\"} 0.5\nsglang:cache_hit_rate{tp_rank=\"0\"} 0.25\n" +
            "sglang:prompt_tokens_total 1000\nsglang:cached_tokens_total{cache_source=\"device\"} 100\n" +
            "sglang:num_retracted_requests_total 1\n");
        final Map<String, Double> second = scraper.parse("sglang:num_running_reqs{tp_rank=\"0\"} 4\n" +
            "sglang:num_running_reqs{tp_rank=\"1\"} 1\nsglang:num_queue_reqs 0\n" +
            "sglang:token_usage{tp_rank=\"0\"} 0.5\nsglang:token_usage{tp_rank=\"1\"} 0.7\n" +
            "sglang:cache_hit_rate{tp_rank=\"0\"} 0.4\nsglang:cache_hit_rate{tp_rank=\"1\"} 0.6\n" +
            "sglang:prompt_tokens_total 3000\nsglang:cached_tokens_total{cache_source=\"device\"} 700\n" +
            "sglang:cached_tokens_total{cache_source=\"host\"} 400\nsglang:num_retracted_requests_total 4\n");
        assertEquals(5, second.get("running"), 1e-9, "summed over ranks");
        assertEquals(0.6, second.get("kv_cache_usage"), 1e-9, "token usage, averaged");
        assertEquals(0.5, second.get("prefix_hit_rate"), 1e-9, "cache hit rate, averaged");
        assertEquals(3, second.get("preemptions_per_s"), 1e-9, "retractions as preemptions");
        assertEquals(1000, second.get("prefix_hits_per_s"), 1e-9, "cached tokens of every source");
        final Map<String, Double> grown = scraper.counterGrowth();
        assertEquals(2000, grown.get("prompt_tokens_per_s"), 1e-9);
        assertEquals(1000, grown.get("prefix_hits_per_s"), 1e-9);

        final MetricsScraper vllm = new MetricsScraper(URI.create("http://127.0.0.1:9/metrics"),
            new CachedNanoClock());
        vllm.parse("vllm:prefix_cache_queries_total{engine=\"0\"} 100\nvllm:prefix_cache_hits_total 50\n" +
            "vllm:external_prefix_cache_hits_total 0\n");
        vllm.parse("vllm:prefix_cache_queries_total{engine=\"0\"} 1100\nvllm:prefix_cache_hits_total 250\n" +
            "vllm:external_prefix_cache_hits_total 600\n");
        assertEquals(Map.of("prefix_queries_per_s", 1000.0, "prefix_hits_per_s", 200.0,
            "external_prefix_hits_per_s", 600.0), vllm.counterGrowth());
    }

    @Test
    void shouldTakeTheKvTransferTimeAsTheHistogramsGrowthSummedOverLabelSets()
    {
        final MetricsScraper scraper = new MetricsScraper(URI.create("http://127.0.0.1:9/metrics"),
            new CachedNanoClock());
        scraper.parse("vllm:nixl_xfer_time_seconds_sum{engine=\"0\"} 1.5\n" +
            "vllm:nixl_xfer_time_seconds_count{engine=\"0\"} 100\n");
        scraper.parse("vllm:nixl_xfer_time_seconds_sum{engine=\"0\"} 1.7\n" +
            "vllm:nixl_xfer_time_seconds_count{engine=\"0\"} 110\n" +
            "vllm:nixl_xfer_time_seconds_sum{engine=\"1\"} 0.1\n" +
            "vllm:nixl_xfer_time_seconds_count{engine=\"1\"} 10\n" +
            "vllm:nixl_xfer_time_seconds_bucket{engine=\"1\",le=\"+Inf\"} 10\n");
        final MetricsScraper.KvTransfer grown = scraper.kvTransfer();
        assertEquals(20, grown.transfers(), 1e-9, "the baseline is the first scrape");
        assertEquals(15.0, grown.meanMs(), 1e-9, "0.3 s over 20 transfers");

        final MetricsScraper late = new MetricsScraper(URI.create("http://127.0.0.1:9/metrics"),
            new CachedNanoClock());
        late.parse("vllm:num_requests_running 1\n");
        assertNull(late.kvTransfer(), "not reported by the server");
        late.parse("vllm:nixl_xfer_time_seconds_sum 0.02\nvllm:nixl_xfer_time_seconds_count 4\n");
        assertEquals(5.0, late.kvTransfer().meanMs(), 1e-9, "a histogram that appears later counts from zero");
    }

    @Test
    void shouldCountTheFaultsTheServerInjectedDuringTheRunByKind()
    {
        final MetricsScraper scraper = new MetricsScraper(URI.create("http://127.0.0.1:9/metrics"),
            new CachedNanoClock());
        scraper.parse("vllm:num_requests_running 0\n");
        assertNull(scraper.faultsInjected(), "not reported: no fault injection on the server");
        scraper.parse("tapedeck:faults_injected_total{fault=\"rate_limit\",model_name=\"m\"} 3\n" +
            "tapedeck:faults_injected_total{fault=\"reset\",model_name=\"m\"} 0\n");
        scraper.parse("# TYPE tapedeck:faults_injected_total counter\n" +
            "tapedeck:faults_injected_total{fault=\"rate_limit\",model_name=\"m\"} 7\n" +
            "tapedeck:faults_injected_total{fault=\"reset\",model_name=\"m\"} 2\n" +
            "tapedeck:faults_injected_total{fault=\"down\",model_name=\"m\"} 0\n");
        assertEquals(java.util.Map.of("rate_limit", 7L, "reset", 2L), scraper.faultsInjected(),
            "a metric missing from the first scrape counts from zero; kinds that did not grow are left out");

        final MetricsScraper baseline = new MetricsScraper(URI.create("http://127.0.0.1:9/metrics"),
            new CachedNanoClock());
        baseline.parse("tapedeck:faults_injected_total{fault=\"stall\",model_name=\"m\"} 5\n");
        baseline.parse("tapedeck:faults_injected_total{fault=\"stall\",model_name=\"m\"} 6\n");
        assertEquals(java.util.Map.of("stall", 1L), baseline.faultsInjected(), "the first scrape is the baseline");
    }

    @Test
    void shouldRefuseAScrapeUrlThatIsNotHttp()
    {
        final LoadContext context = new LoadContext().urls(List.of(URI.create("http://127.0.0.1:8000")))
            .rate(1.0).durationNs(1_000_000_000L).scrapeMetrics(List.of(URI.create("localhost:8000/metrics")));
        final IllegalArgumentException ex =
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, context::conclude);
        assertEquals("--scrape-metrics must be an http:// or https:// URL such as http://127.0.0.1:8000/metrics, got " +
            "'localhost:8000/metrics'", ex.getMessage());
    }
}
