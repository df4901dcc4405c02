package dev.tapedeck.metrics;

import org.junit.jupiter.api.Test;

import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.StepShape;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MFU estimate against what is known of a dense model: one decoded token costs about twice the weights it
 * multiplies through (all but the input embedding) in FLOPs and reads every weight once; attention adds with the
 * context; tensor parallelism splits the work; the exposition lists the three counters with vLLM's help.
 */
class MfuEstimateTest
{
    private static final ModelArchitecture QWEN3_8B = ModelArchitecture.lookup("Qwen/Qwen3-8B");

    private static StepShape decode(final int requests, final long context)
    {
        return new StepShape()
        {
            @Override
            public int decodeRequests()
            {
                return requests;
            }

            @Override
            public int prefillTokens()
            {
                return 0;
            }

            @Override
            public int prefillRequests()
            {
                return 0;
            }

            @Override
            public long decodeContextTokens()
            {
                return context;
            }

            @Override
            public int runningRequests()
            {
                return requests;
            }
        };
    }

    private static EngineMetrics estimate(final MfuEstimate mfu, final StepShape step)
    {
        final EngineMetrics metrics = new EngineMetrics(1024);
        metrics.enableMfu(mfu);
        metrics.onStep(step.scheduledTokens(), step);
        return metrics;
    }

    @Test
    void shouldCostTwiceTheWeightsPerDecodedTokenAndReadThemOnce()
    {
        final double weights = QWEN3_8B.parameters() - (double)QWEN3_8B.hiddenSize() * QWEN3_8B.vocabSize();
        final EngineMetrics one = estimate(new MfuEstimate(QWEN3_8B, 1), decode(1, 1));
        assertEquals(2 * weights, one.estimatedFlops, 0.02 * 2 * weights, "about 2 FLOPs per weight");
        assertEquals(2 * weights, one.estimatedReadBytes, 0.02 * 2 * weights, "every bf16 weight read once");
        assertTrue(one.estimatedWriteBytes > 0 && one.estimatedWriteBytes < 0.001 * one.estimatedReadBytes,
            "a decode writes little: " + one.estimatedWriteBytes);

        final EngineMetrics deep = estimate(new MfuEstimate(QWEN3_8B, 1), decode(1, 32_000));
        final double attention = 4.0 * QWEN3_8B.heads() * QWEN3_8B.headDim() * (32_000 - 1) * QWEN3_8B.layers();
        assertEquals(one.estimatedFlops + attention, deep.estimatedFlops, 1e-6 * deep.estimatedFlops,
            "attention grows with the context");

        final EngineMetrics split = estimate(new MfuEstimate(QWEN3_8B, 2), decode(1, 1));
        assertEquals(one.estimatedFlops / 2, split.estimatedFlops, 0.02 * one.estimatedFlops,
            "two GPUs share the work");
        final EngineMetrics batch = estimate(new MfuEstimate(QWEN3_8B, 1), decode(64, 64));
        assertEquals(64 * one.estimatedFlops, batch.estimatedFlops, 0.01 * 64 * one.estimatedFlops);
        assertEquals(one.estimatedReadBytes, batch.estimatedReadBytes, 0.05 * one.estimatedReadBytes,
            "a batch reads the weights once");
    }

    @Test
    void shouldListTheCountersAlwaysAndCountOnlyWhenEnabled()
    {
        final EngineMetrics off = new EngineMetrics(1024);
        off.onStep(1, decode(1, 1));
        assertEquals(0.0, off.estimatedFlops);
        final StringBuilder out = new StringBuilder();
        new PrometheusExposition("m", 0, java.util.List.of(new MetricsSource()
        {
            @Override
            public EngineMetrics metrics()
            {
                return off;
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
                return 0;
            }
        }), java.util.List.of(java.util.Map.of())).write(out);
        assertTrue(out.toString().contains("# HELP vllm:estimated_flops_per_gpu_total Estimated number of floating " +
            "point operations per GPU (for Model Flops Utilization calculations).\n# TYPE " +
            "vllm:estimated_flops_per_gpu_total counter\nvllm:estimated_flops_per_gpu_total{engine=\"0\"," +
            "model_name=\"m\"} 0.0"), out.toString());
    }
}
