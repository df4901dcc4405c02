package dev.tapedeck.metrics;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * vLLM's deprecation timeline for renamed metrics, line by line, and the exposition that follows it.
 */
class DeprecatedMetricsTest
{
    @Test
    void shouldFollowVllmsDeprecationPolicyLineByLine()
    {
        assertEquals(new DeprecatedMetrics(true, true, false), DeprecatedMetrics.of("0.10.1", null));
        assertEquals(new DeprecatedMetrics(true, true, true), DeprecatedMetrics.of("v0.10.2", null));
        assertEquals(new DeprecatedMetrics(false, true, true), DeprecatedMetrics.of("0.11.0", null));
        assertEquals(new DeprecatedMetrics(true, true, true), DeprecatedMetrics.of("0.11.1", "0.10"),
            "0.11 shows the gpu_* names again for =0.10");
        assertEquals(new DeprecatedMetrics(false, false, true), DeprecatedMetrics.of("0.12.0", null));
        assertEquals(new DeprecatedMetrics(false, true, true), DeprecatedMetrics.of("0.12.0", "0.11"));
        assertEquals(new DeprecatedMetrics(false, false, true), DeprecatedMetrics.of("0.12.0", "0.10"),
            "only the previous minor version counts");
        assertEquals(new DeprecatedMetrics(false, false, true), DeprecatedMetrics.of("0.13.0", "0.12"),
            "removed in 0.13");
        assertEquals(DeprecatedMetrics.NONE, DeprecatedMetrics.of("1.0.0", null));
        assertThrows(IllegalArgumentException.class, () -> DeprecatedMetrics.of("latest", null));
    }

    @Test
    void shouldExportTheOldNamesWithTheNewNamesValues()
    {
        final EngineMetrics metrics = new EngineMetrics(1024);
        metrics.onPrefixCacheLookup(64, 32);
        metrics.onNextToken(50_000_000L);
        final MetricsSource source = new MetricsSource()
        {
            @Override
            public EngineMetrics metrics()
            {
                return metrics;
            }

            @Override
            public int numRunning()
            {
                return 0;
            }

            @Override
            public int numWaiting()
            {
                return 0;
            }

            @Override
            public double kvCacheUsage()
            {
                return 0.5;
            }
        };
        final PrometheusExposition old = new PrometheusExposition("m", 0, List.of(source), List.of(Map.of()))
            .deprecatedMetrics(DeprecatedMetrics.of("0.10.2", null));
        final StringBuilder out = new StringBuilder();
        old.write(out);
        final String text = out.toString();
        assertTrue(text.contains("vllm:gpu_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5"), text);
        assertTrue(text.contains("vllm:gpu_prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 32.0"), text);
        assertTrue(text.contains("# HELP vllm:time_per_output_token_seconds Histogram of time per output token in " +
            "seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead."), text);
        assertTrue(text.contains("vllm:time_per_output_token_seconds_count{engine=\"0\",model_name=\"m\"} 1"), text);
        final StringBuilder current = new StringBuilder();
        new PrometheusExposition("m", 0, List.of(source), List.of(Map.of())).write(current);
        assertFalse(current.toString().contains("gpu_cache_usage_perc") ||
            current.toString().contains("vllm:time_per_output_token_seconds"), "the newest lines export none");
    }
}
