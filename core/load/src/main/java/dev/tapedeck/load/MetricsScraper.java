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
 * Samples a server's Prometheus endpoint once a second during a run ({@code --scrape-metrics URL}) and keeps, per
 * second, the gauges a load test reads next to its own numbers: requests running and waiting, KV-cache usage, and
 * the rates of the prompt, generation and preemption counters. vLLM ({@code vllm:}) and SGLang ({@code sglang:})
 * names are understood; samples of one metric with several label sets (engines, data-parallel ranks) are summed
 * (usage is averaged). A failed scrape leaves that second empty and is counted, never failing the run.
 * <p>
 * An Agrona agent: between {@link #start} and {@link #stop} an {@code AgentRunner} runs it on its own thread
 * ({@code tapedeck-scrape}, sleeping 10 ms when no scrape is due); a test may drive it with an {@code AgentInvoker}
 * and a clock of its own. {@link #series} is read after stop.
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
        COUNTERS.put("sglang:prompt_tokens_total", "prompt_tokens_per_s");
        COUNTERS.put("sglang:generation_tokens_total", "generation_tokens_per_s");
    }

    private final URI url;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Map<String, Double>> series = new ArrayList<>();
    private final NanoClock clock;
    private AgentRunner runner;
    private long failures;
    private Map<String, Double> previousCounters;
    private long startNs;
    private int second;

    /**
     * A scraper on the system's clock.
     *
     * @param url the metrics URL ({@code http://host:port/metrics}).
     */
    public MetricsScraper(final URI url)
    {
        this(url, SystemNanoClock.INSTANCE);
    }

    /**
     * @param url the metrics URL ({@code http://host:port/metrics}).
     * @param clock when each second is due.
     */
    public MetricsScraper(final URI url, final NanoClock clock)
    {
        this.url = url;
        this.clock = clock;
    }

    /**
     * Start sampling on the scraper's own thread; second 0 is now.
     */
    public void start()
    {
        runner = new AgentRunner(new SleepingMillisIdleStrategy(10), Throwable::printStackTrace, null, this);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread thread = new Thread(r);
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Stop sampling and wait for the thread (a scrape under way may take its 2 s timeout).
     */
    public void stop()
    {
        runner.close();
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
            final HttpResponse<String> response = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(2))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
            if (200 != response.statusCode())
            {
                failures++;
                return null;
            }
            return parse(response.body());
        }
        catch (final java.io.IOException | RuntimeException ex)
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
                if ("kv_cache_usage".equals(gauge))
                {
                    usageSamples.merge(gauge, 1, Integer::sum);
                }
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
        return values;
    }
}
