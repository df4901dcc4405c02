package dev.tapedeck.metrics;

import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.StepShape;

/**
 * vLLM's model-FLOPs-utilisation estimate ({@code --enable-mfu-metrics}): the floating-point operations, bytes read
 * and bytes written per GPU of one engine step, worked out from the model's dimensions and the step's batch, as
 * vLLM's {@code perf} module works them out (bf16 weights and KV cache):
 * <ul>
 *   <li>FLOPs: the Q/K/V and output projections ({@code 2 T D (q + 2 kv) d L + 2 T D q d L}), attention
 *       ({@code 4 q d TC L}, TC the query-key pairs: each decode's context plus the prefill chunks' causal pairs), the
 *       gated MLP ({@code 6 D I T L}, times the routed experts per token for a mixture of experts) and the LM head
 *       ({@code 2 T' D V}, T' the requests that sample); heads, MLP width and vocabulary divided over the
 *       tensor-parallel GPUs;</li>
 *   <li>bytes read: every weight once (of a mixture of experts, the experts the step's tokens reach), the KV the
 *       step's attention reads, and the projections' inputs;</li>
 *   <li>bytes written: the step's new KV, the projections' outputs and the logits.</li>
 * </ul>
 * Immutable; the estimate allocates nothing.
 *
 * @param model the model's dimensions.
 * @param tensorParallel GPUs a layer is split over.
 */
public record MfuEstimate(ModelArchitecture model, int tensorParallel)
{
    private static final int BYTES = 2;

    /**
     * Validates.
     */
    public MfuEstimate
    {
        if (tensorParallel < 1)
        {
            throw new IllegalArgumentException("tensor parallel size must be >= 1");
        }
    }

    /**
     * Add one step's estimate to the counters.
     *
     * @param step the step's batch.
     * @param into the engine's metrics.
     */
    void add(final StepShape step, final EngineMetrics into)
    {
        final double tokens = step.scheduledTokens();
        if (0 == tokens)
        {
            return;
        }
        final double layers = model.layers();
        final double hidden = model.hiddenSize();
        final double headDim = model.headDim();
        final double q = Math.max(1.0, (double)model.heads() / tensorParallel);
        final double kv = Math.max(1.0, (double)model.kvHeads() / tensorParallel);
        final double mlp = (double)model.intermediateSize() / tensorParallel;
        final double vocab = (double)model.vocabSize() / tensorParallel;
        final double routed = model.moe() ? model.expertsPerToken() : 1;
        final double pairs = step.decodeContextTokens() + step.prefillAttentionPairs();
        final double sampling = step.decodeRequests() + step.prefillRequests();
        final double projections = 2 * tokens * hidden * (q + 2 * kv) * headDim * layers +
            2 * tokens * hidden * q * headDim * layers;
        final double attention = 4 * q * headDim * pairs * layers;
        final double mlpFlops = 6 * hidden * mlp * tokens * routed * layers;
        final double head = 2 * sampling * hidden * vocab;
        into.estimatedFlops += projections + attention + mlpFlops + head;

        final double attentionWeights = hidden * headDim * (2 * q + 2 * kv) * layers;
        final double experts = model.moe() ? Math.min(tokens * routed, model.experts()) : 1;
        final double mlpWeights = 3 * hidden * mlp * experts * layers;
        final double headWeights = hidden * vocab;
        final double kvPerToken = 2 * kv * headDim * layers;
        final double kvRead = kvPerToken * (step.decodeContextTokens() + step.prefillTokens());
        into.estimatedReadBytes += BYTES * (attentionWeights + mlpWeights + headWeights + kvRead +
            2 * tokens * hidden * layers);
        into.estimatedWriteBytes += BYTES * (kvPerToken * tokens + 2 * tokens * hidden * layers + sampling * vocab);
    }
}
