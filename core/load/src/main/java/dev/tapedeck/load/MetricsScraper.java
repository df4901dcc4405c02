package dev.tapedeck.load;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Samples a server's Prometheus endpoints once a second during a run ({@code --scrape-metrics URL...}; several, as
 * the instances of a fleet, are read as one server: their samples are summed, usage averaged) and keeps, per
 * second, the gauges a load test reads next to its own numbers: requests running and waiting, KV-cache usage, and
 * the rates of the prompt, generation, preemption and prefix-cache counters. vLLM ({@code vllm:}) and SGLang
 * ({@code sglang:}) names are understood (SGLang's token usage as KV usage, running and queued requests, cached tokens
 * and its cache hit rate as prefix hits, retractions as preemptions); samples of one metric with several label sets
 * (engines, data-parallel ranks, cache sources) are summed (usage and hit rate averaged). A failed scrape leaves that
 * second empty and is counted, never failing the run.
 * <p>
 * It also keeps the totals of vLLM's NIXL KV transfer histogram ({@code vllm:nixl_xfer_time_seconds}, recorded by the
 * decode side of a prefill/decode pair) at the first and the last successful scrape; with {@link #bracketRun},
 * {@link #start} and {@link #stop} each scrape once more on the caller's thread, so the difference covers the whole
 * run ({@link #kvTransfer}). The same two scrapes bound the faults a tapedeck server injected during the run
 * ({@code tapedeck:faults_injected_total}, by its {@code fault} label: {@link #faultsInjected}).
 * <p>
 * An Agrona agent: between {@link #start} and {@link #stop} an {@code AgentRunner} runs it on its own thread
 * ({@code tapedeck-scrape}, sleeping 10 ms when no scrape is due); a test may drive it with an {@code AgentInvoker}
 * and a clock of its own. {@link #series} and {@link #kvTransfer} are read after stop.
 */
public final class MetricsScraper implements Agent
{
    private static final Map<String, String> GAUGES = new LinkedHashMap<>();
    private static final Map<String, String> COUNTERS = new LinkedHashMap<>();

    static
    {
        GAUGES.put("vllm:num_requests_running", "running");
        GAUGES.put("vllm:num_requests_waiting", "waiting");
        GAUGES.put("vllm:kv_cache_usage_perc", "kv_cache_usage");
        GAUGES.put("vllm:gpu_cache_usage_perc", "kv_cache_usage");
        GAUGES.put("sglang:num_running_reqs", "running");
        GAUGES.put("sglang:num_queue_reqs", "waiting");
        GAUGES.put("sglang:token_usage", "kv_cache_usage");
        COUNTERS.put("vllm:prompt_tokens_total", "prompt_tokens_per_s");
        COUNTERS.put("vllm:generation_tokens_total", "generation_tokens_per_s");
        COUNTERS.put("vllm:num_preemptions_total", "preemptions_per_s");
        COUNTERS.put("vllm:prefix_cache_queries_total", "prefix_queries_per_s");
        COUNTERS.put("vllm:prefix_cache_hits_total", "prefix_hits_per_s");
        COUNTERS.put("vllm:external_prefix_cache_hits_total", "external_prefix_hits_per_s");
        COUNTERS.put("sglang:prompt_tokens_total", "prompt_tokens_per_s");
        COUNTERS.put("sglang:generation_tokens_total", "generation_tokens_per_s");
        // SGLang: tokens served from its radix cache (any cache_source), and retractions (its preemptions)
        COUNTERS.put("sglang:cached_tokens_total", "prefix_hits_per_s");
        COUNTERS.put("sglang:num_retracted_requests_total", "preemptions_per_s");
        GAUGES.put("sglang:cache_hit_rate", "prefix_hit_rate");
    }

    /** Gauges averaged over label sets (engines, ranks) rather than summed. */
    private static final java.util.Set<String> AVERAGED = java.util.Set.of("kv_cache_usage", "prefix_hit_rate");

    private static final String XFER_SUM = "vllm:nixl_xfer_time_seconds_sum";
    private static final String FAULTS = "tapedeck:faults_injected_total";
    private static final String XFER_COUNT = "vllm:nixl_xfer_time_seconds_count";

    /**
     * What the server's KV transfer histogram grew by over a run.
     *
     * @param seconds transfer time added, in seconds ({@code _sum}).
     * @param transfers transfers added ({@code _count}).
     */
    public record KvTransfer(double seconds, double transfers)
    {
        /**
         * @return the mean transfer time in milliseconds, or NaN when no transfer happened.
         */
        public double meanMs()
        {
            return transfers > 0 ? seconds * 1e3 / transfers : Double.NaN;
        }
    }

    private final List<URI> urls;
    private final HttpClient http;
    private final List<Map<String, Double>> series = new ArrayList<>();
    private final NanoClock clock;
    private AgentRunner runner;
    private long failures;
    private Map<String, Double> previousCounters;
    private long startNs;
    private int second;
    private double[] firstXfer;
    private double[] lastXfer;
    private Map<String, Double> firstFaults;
    private Map<String, Double> firstCounters;
    private Map<String, Double> lastCounters;
    private Map<String, Double> lastFaults;
    private boolean bracketRun;

    /**
     * A scraper on the system's clock.
     *
     * @param url the metrics URL ({@code http://host:port/metrics}).
     */
    public MetricsScraper(final URI url)
    {
        this(List.of(url), false);
    }

    /**
     * A scraper of several endpoints read as one server, on the system's clock.
     *
     * @param urls the metrics URLs.
     * @param insecureTls accept any TLS certificate of an https endpoint.
     */
    public MetricsScraper(final List<URI> urls, final boolean insecureTls)
    {
        this(urls, insecureTls, SystemNanoClock.INSTANCE);
    }

    /**
     * @param url the metrics URL ({@code http://host:port/metrics}).
     * @param clock when each second is due.
     */
    public MetricsScraper(final URI url, final NanoClock clock)
    {
        this(List.of(url), false, clock);
    }

    private MetricsScraper(final List<URI> urls, final boolean insecureTls, final NanoClock clock)
    {
        this.urls = List.copyOf(urls);
        this.http = dev.tapedeck.load.client.Tls.javaClient(insecureTls).connectTimeout(Duration.ofSeconds(2)).build();
        this.clock = clock;
    }

    /**
     * Scrape once more just before and just after the run ({@link #start}, {@link #stop}), so the KV transfer totals
     * cover all of it (before start).
     *
     * @param bracket true when the totals (KV transfer time, faults injected) must cover the whole run; load does.
     * @return this.
     */
    public MetricsScraper bracketRun(final boolean bracket)
    {
        bracketRun = bracket;
        return this;
    }

    /**
     * Start sampling on the scraper's own thread; second 0 is now. With {@link #bracketRun}, first scrape once on the
     * calling thread for the KV transfer baseline.
     */
    public void start()
    {
        if (bracketRun)
        {
            scrape();
            previousCounters = null; // second 0 has no rates, as without the extra scrape
        }

        runner = new AgentRunner(new SleepingMillisIdleStrategy(10), Throwable::printStackTrace, null, this);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread thread = new Thread(r);
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Stop sampling and wait for the thread (a scrape under way may take its 2 s timeout); with {@link #bracketRun},
     * then scrape once more on the calling thread for the KV transfer totals after the run.
     */
    public void stop()
    {
        runner.close();
        if (bracketRun)
        {
            scrape();
        }
    }

    /**
     * @return how much the server's {@code vllm:nixl_xfer_time_seconds} histogram grew between the first and the
     *     last successful scrape (summed over label sets), or null when no scrape showed it (not reported by the
     *     server) or it went backwards (a restart). A histogram missing from the first scrape counts from zero.
     */
    public KvTransfer kvTransfer()
    {
        if (null == lastXfer)
        {
            return null;
        }
        final double seconds = lastXfer[0] - firstXfer[0];
        final double transfers = lastXfer[1] - firstXfer[1];
        return seconds < 0 || transfers < 0 ? null : new KvTransfer(seconds, transfers);
    }

    /**
     * @return how many faults of each kind ({@code fault} label of {@code tapedeck:faults_injected_total}, summed over
     *     other labels) the server injected between the first and the last successful scrape, kinds that did not grow
     *     left out; null when no scrape showed the metric (not a tapedeck server, or fault injection off).
     */
    public Map<String, Long> faultsInjected()
    {
        if (null == lastFaults)
        {
            return null;
        }
        final Map<String, Long> grown = new java.util.TreeMap<>();
        lastFaults.forEach((fault, n) ->
        {
            final long delta = Math.round(n - firstFaults.getOrDefault(fault, 0.0));
            if (delta > 0)
            {
                grown.put(fault, delta);
            }
        });
        return grown;
    }

    /**
     * @return how much each known counter grew between the first and the last successful scrape (by its series
     *     name, e.g. {@code prefix_hits_per_s}: a count, not a rate), counters that went backwards (a restart) or
     *     were missing at first left out; empty before two scrapes.
     */
    public Map<String, Double> counterGrowth()
    {
        final Map<String, Double> grown = new LinkedHashMap<>();
        if (null != firstCounters && null != lastCounters)
        {
            lastCounters.forEach((name, last) ->
            {
                final Double first = firstCounters.get(name);
                if (null != first && last >= first)
                {
                    grown.put(name, last - first);
                }
            });
        }
        return grown;
    }

    @Override
    public String roleName()
    {
        return "tapedeck-scrape";
    }

    @Override
    public void onStart()
    {
        startNs = clock.nanoTime();
    }

    /**
     * Scrape when the next second is due.
     *
     * @return 1 after a scrape, 0 when none was due.
     */
    @Override
    public int doWork()
    {
        if (clock.nanoTime() - (startNs + TimeUnit.SECONDS.toNanos(second)) < 0)
        {
            return 0;
        }
        final Map<String, Double> sample = scrape();
        synchronized (series)
        {
            while (series.size() < second)
            {
                series.add(null);
            }
            series.add(sample);
        }
        second++;
        return 1;
    }

    /**
     * @return per second, the sampled values (null for seconds whose scrape failed).
     */
    public List<Map<String, Double>> series()
    {
        return series;
    }

    /**
     * @return scrapes that failed.
     */
    public long failures()
    {
        return failures;
    }

    private Map<String, Double> scrape()
    {
        try
        {
            // all endpoints at once, so that a fleet's scrape takes one round trip; one failed endpoint leaves the
            // second empty: a partial sum would mislead
            final List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
            for (final URI url : urls)
            {
                answers.add(http.sendAsync(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(2)).GET().build(),
                    HttpResponse.BodyHandlers.ofString()));
            }
            final StringBuilder text = new StringBuilder();
            for (final java.util.concurrent.CompletableFuture<HttpResponse<String>> answer : answers)
            {
                final HttpResponse<String> response = answer.get();
                if (200 != response.statusCode())
                {
                    failures++;
                    return null;
                }
                text.append(response.body()).append('\n');
            }
            return parse(text.toString());
        }
        catch (final java.util.concurrent.ExecutionException | RuntimeException ex)
        {
            failures++; // counted, never failing the run (and never a busy loop of errors)
            return null;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * @param text a Prometheus text exposition.
     * @return the known gauges (summed over label sets; usage averaged) and counter rates since the last sample.
     */
    Map<String, Double> parse(final String text)
    {
        final Map<String, Double> values = new LinkedHashMap<>();
        final Map<String, Integer> usageSamples = new LinkedHashMap<>();
        final Map<String, Double> counters = new LinkedHashMap<>();
        final double[] xfer = {0, 0};
        boolean xferSeen = false;
        Map<String, Double> faults = null;
        for (final String line : text.split("\n"))
        {
            if (line.isEmpty() || '#' == line.charAt(0))
            {
                continue;
            }
            final int brace = line.indexOf('{');
            final int space = line.lastIndexOf(' ');
            if (space < 0)
            {
                continue;
            }
            final String name = line.substring(0, brace > 0 && brace < space ? brace : line.indexOf(' '));
            final double value;
            try
            {
                value = Double.parseDouble(line.substring(space + 1).trim());
            }
            catch (final NumberFormatException ex)
            {
                continue;
            }
            final String gauge = GAUGES.get(name);
            if (null != gauge)
            {
                values.merge(gauge, value, Double::sum);
                if (AVERAGED.contains(gauge))
                {
                    usageSamples.merge(gauge, 1, Integer::sum);
                }
            }
            if (XFER_SUM.equals(name) || XFER_COUNT.equals(name))
            {
                xfer[XFER_SUM.equals(name) ? 0 : 1] += value;
                xferSeen = true;
            }
            if (FAULTS.equals(name))
            {
                faults = null == faults ? new LinkedHashMap<>() : faults;
                faults.merge(label(line, "fault"), value, Double::sum);
            }
            final String counter = COUNTERS.get(name);
            if (null != counter)
            {
                counters.merge(counter, value, Double::sum);
            }
        }
        usageSamples.forEach((k, n) -> values.put(k, values.get(k) / n));
        if (null != previousCounters)
        {
            counters.forEach((k, v) ->
            {
                final Double before = previousCounters.get(k);
                if (null != before && v >= before)
                {
                    values.put(k, v - before);
                }
            });
        }
        previousCounters = counters;
        if (null == firstCounters)
        {
            firstCounters = counters;
        }
        lastCounters = counters;
        if (null == firstXfer)
        {
            firstXfer = xferSeen ? xfer.clone() : new double[2];
        }
        if (xferSeen)
        {
            lastXfer = xfer;
        }
        if (null == firstFaults)
        {
            firstFaults = null == faults ? Map.of() : faults;
        }
        if (null != faults)
        {
            lastFaults = faults;
        }
        return values;
    }

    /** The value of one label of a sample line, or "" when it has none. */
    private static String label(final String line, final String label)
    {
        final int at = line.indexOf(label + "=\"");
        if (at < 0)
        {
            return "";
        }
        final int from = at + label.length() + 2;
        final int to = line.indexOf('"', from);
        return to < 0 ? "" : line.substring(from, to);
    }
}
