package dev.tapedeck.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * llm-d-inference-sim's {@code --fake-metrics} on a manual clock: fixed and function-valued gauges (changing only
 * every refresh interval), per-bucket histogram counts, counters, LoRA info, and refusals by name; the exposition
 * reports them in vLLM's format.
 */
class FakeMetricsTest
{
    private static final long MS = 1_000_000L;

    @Test
    void shouldShapeGaugesOverTimeInRefreshSteps()
    {
        final AtomicLong now = new AtomicLong(5_000 * MS);
        final FakeMetrics fake = FakeMetrics.parse("{\"running-requests\":\"ramp:0:10:10s\",\"waiting-requests\":" +
            "\"squarewave:1:5:2s\",\"kv-cache-usage\":\"oscillate:0.2:0.6:4s\"}", 1024, 500 * MS, now::get);
        assertEquals(0, fake.numRunning());
        assertEquals(1, fake.numWaiting());
        assertEquals(0.4, fake.kvCacheUsage(), 1e-9, "a sine starts in the middle");
        now.addAndGet(999 * MS);
        assertEquals(1, fake.numWaiting(), "999 ms is 0.5 s in refresh steps of 500 ms: still the first half");
        now.addAndGet(MS);
        assertEquals(1, fake.numRunning(), "1 s into a 10 s ramp to 10");
        assertEquals(5, fake.numWaiting(), "the second half of the square wave's period");
        assertEquals(0.6, fake.kvCacheUsage(), 1e-9, "a quarter period in: the top");
        now.addAndGet(60_000 * MS);
        assertEquals(10, fake.numRunning(), "a ramp holds its end");
        final FakeMetrics reset = FakeMetrics.parse("{\"running-requests\":\"rampreset:0:10:10s\"}", 1024, MS,
            now::get);
        now.addAndGet(15_000 * MS);
        assertEquals(5, reset.numRunning(), "rampreset starts again every period");
    }

    @Test
    void shouldReportHistogramsCountersAndLorasInVllmsFormat()
    {
        final AtomicLong now = new AtomicLong();
        final FakeMetrics fake = FakeMetrics.parse("{\"running-requests\":4,\"ttft-buckets-values\":[1,2,0,3]," +
            "\"request-prompt-tokens\":[5],\"total-prompt-tokens\":900,\"prefix-cache-hits\":40," +
            "\"prefix-cache-queries\":100,\"request-success-total\":{\"stop\":7,\"length\":2}," +
            "\"loras\":[{\"running\":\"x\",\"waiting\":\"\",\"timestamp\":1},{\"running\":\"a,b\"," +
            "\"waiting\":\"c\",\"timestamp\":2}]}", 1024, 100 * MS, now::get);
        final PrometheusExposition exposition = new PrometheusExposition("m", 0, List.of(fake), List.of(Map.of()));
        exposition.loraRequestsInfo(new LoraRequestsInfo(2, 0, 0));
        final StringBuilder out = new StringBuilder();
        exposition.write(out);
        final String text = out.toString();
        assertTrue(text.contains("vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 4.0"), text);
        assertTrue(text.contains("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.001\"," +
            "model_name=\"m\"} 1.0"), text);
        assertTrue(text.contains("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.02\"," +
            "model_name=\"m\"} 6.0"), "cumulative over buckets: " + text);
        assertTrue(text.contains("vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} 900.0"), text);
        assertTrue(text.contains("vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 40.0"), text);
        assertTrue(text.contains("finished_reason=\"length\",model_name=\"m\"} 2.0"), text);
        assertTrue(text.contains("running_lora_adapters=\"a,b\",waiting_lora_adapters=\"c\""), "the last " +
            "entry: " + text);
        final List<String> names = new ArrayList<>();
        fake.loraAdapters(true, names);
        assertEquals(List.of("a", "b"), names);
    }

    @Test
    void shouldRefuseWhatItCannotReadByName()
    {
        final AtomicLong now = new AtomicLong();
        for (final String[] bad : new String[][] {
            {"{\"runing-requests\":1}", "unknown key 'runing-requests'"},
            {"{\"running-requests\":\"zigzag:1:2:3s\"}", "running-requests"},
            {"{\"ttft-buckets-values\":[1,-2]}", "ttft-buckets-values"},
            {"{\"request-success-total\":{\"done\":1}}", "unknown reason 'done'"},
            {"[1]", "must be a JSON object"},
            {"{", "not JSON"},
        })
        {
            final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> FakeMetrics.parse(bad[0], 1024, MS, now::get));
            assertTrue(error.getMessage().contains(bad[1]), bad[0] + " -> " + error.getMessage());
        }
    }
}
