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

/**
 * Samples a server's Prometheus endpoint once a second during a run ({@code --scrape-metrics URL}) and keeps, per
 * second, the gauges a load test reads next to its own numbers: requests running and waiting, KV-cache usage, and
 * the rates of the prompt, generation and preemption counters. vLLM ({@code vllm:}) and SGLang ({@code sglang:})
 * names are understood; samples of one metric with several label sets (engines, data-parallel ranks) are summed
 * (usage is averaged). A failed scrape leaves that second empty and is counted, never failing the run.
 * <p>
 * Runs on its own daemon thread between {@link #start} and {@link #stop}; {@link #series} is read after stop.
 */
public final class MetricsScraper
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
    private volatile boolean running;
    private Thread thread;
    private long failures;
    private Map<String, Double> previousCounters;

    /**
     * @param url the metrics URL ({@code http://host:port/metrics}).
     */
    public MetricsScraper(final URI url)
    {
        this.url = url;
    }

    /**
     * Start sampling; second 0 is now.
     */
    public void start()
    {
        running = true;
        thread = new Thread(this::loop, "tapedeck-scrape");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Stop sampling and wait for the thread.
     *
     * @throws InterruptedException if interrupted while waiting.
     */
    public void stop() throws InterruptedException
    {
        running = false;
        thread.interrupt();
        thread.join(5_000);
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

    private void loop()
    {
        final long startNs = System.nanoTime();
        int second = 0;
        while (running)
        {
            final long dueNs = startNs + TimeUnit.SECONDS.toNanos(second);
            final long waitNs = dueNs - System.nanoTime();
            if (waitNs > 0)
            {
                try
                {
                    TimeUnit.NANOSECONDS.sleep(waitNs);
                }
                catch (final InterruptedException ex)
                {
                    return;
                }
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
        }
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
        catch (final java.io.IOException ex)
        {
            failures++;
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
