package dev.tapedeck.latency;

/**
 * The physics step model: a step lasts what its composed batch costs on a GPU, from the model's architecture, the
 * GPU's data sheet and the tensor-parallel size, with a few corrections fitted to real runs
 * ({@link RooflineCoefficients}). For a step of {@code T} scheduled tokens (speculative drafts included: verifying
 * them runs them through the model), per GPU:
 * <ul>
 *   <li><b>linear layers</b>: a roofline, the longer of their compute ({@code 2 x active weights x T}, the routed
 *       experts only for a mixture of experts, plus the LM head once per scheduled request, as vLLM V1 computes
 *       logits at every scheduled request's last token, a partial prefill's included, over the dense bf16 rate) and
 *       their weights' read time over memory bandwidth (for a mixture of experts, the experts {@code T} tokens are
 *       expected to touch: {@code E x (1 - (1 - k/E)^T)}, with their own factor);</li>
 *   <li><b>prefill attention</b>: {@code 4 x layers x heads x head dim} FLOPs per query-key pair of the prefill
 *       chunks ({@link StepShape#prefillAttentionPairs()});</li>
 *   <li><b>KV reads</b>: the decodes' context bytes over memory bandwidth (KV heads shard over at most their number
 *       of GPUs);</li>
 *   <li><b>communication</b>: with tensor parallelism, two ring all-reduces per layer of {@code T x hidden x 2}
 *       bytes, {@code 2 (TP - 1) / TP} of them over the link, plus a fixed latency each;</li>
 *   <li><b>overheads</b>: per step, per layer and per scheduled request (launches, scheduling, sampling).</li>
 * </ul>
 * Each time is multiplied by its correction and the parts add up ({@link #terms} lists them).
 * <p>
 * Immutable; safe to share; the per-step arithmetic allocates nothing.
 */
public final class RooflineStepModel implements LatencyModel
{
    private static final double BF16_BYTES = 2;
    private static final double US_PER_S = 1e6;

    private final ModelArchitecture model;
    private final GpuSpec gpu;
    private final int tensorParallel;
    private final RooflineCoefficients coefficients;
    private final double linearFlopsPerToken;
    private final double attentionFlopsPerPair;
    private final double lmHeadFlopsPerSample;
    private final double denseWeightBytes;
    private final double expertBytes;
    private final double kvBytesPerToken;
    private final double allReduceBytesPerToken;
    private final int allReducesPerStep;

    /**
     * @param model the model's architecture.
     * @param gpu the GPU.
     * @param tensorParallel GPUs the model is split over.
     * @param coefficients the fitted corrections.
     */
    public RooflineStepModel(final ModelArchitecture model, final GpuSpec gpu, final int tensorParallel,
        final RooflineCoefficients coefficients)
    {
        if (tensorParallel < 1)
        {
            throw new IllegalArgumentException("--tensor-parallel-size must be at least 1, got " + tensorParallel);
        }
        this.model = model;
        this.gpu = gpu;
        this.tensorParallel = tensorParallel;
        this.coefficients = coefficients;
        final double layers = model.layers();
        linearFlopsPerToken = 2.0 * layers * model.activeParametersPerLayer();
        attentionFlopsPerPair = 4.0 * layers * model.heads() * model.headDim();
        lmHeadFlopsPerSample = 2.0 * model.hiddenSize() * model.vocabSize();
        final double lmHead = (double)model.hiddenSize() * model.vocabSize();
        if (model.moe())
        {
            denseWeightBytes = BF16_BYTES * (layers * (model.attentionParametersPerLayer() +
                (double)model.hiddenSize() * model.experts()) + lmHead);
            expertBytes = BF16_BYTES * layers * model.mlpParametersPerExpert();
        }
        else
        {
            denseWeightBytes = BF16_BYTES * (layers * model.activeParametersPerLayer() + lmHead);
            expertBytes = 0;
        }
        kvBytesPerToken = model.kvBytesPerTokenPerGpu(tensorParallel);
        allReduceBytesPerToken = tensorParallel > 1 ?
            2.0 * (tensorParallel - 1) / tensorParallel * model.hiddenSize() * BF16_BYTES : 0;
        allReducesPerStep = tensorParallel > 1 ? 2 * model.layers() : 0;
    }

    /**
     * @return the model's architecture.
     */
    public ModelArchitecture model()
    {
        return model;
    }

    /**
     * @return the GPU.
     */
    public GpuSpec gpu()
    {
        return gpu;
    }

    /**
     * @return the tensor-parallel size.
     */
    public int tensorParallel()
    {
        return tensorParallel;
    }

    /**
     * @return the corrections in use.
     */
    public RooflineCoefficients coefficients()
    {
        return coefficients;
    }

    /** Terms of {@link #terms}, in the order of {@link RooflineCoefficients#values()}. */
    public static final int TERMS = 9;

    @Override
    public long stepDurationNs(final StepShape step, final SeededRandom random)
    {
        final RooflineCoefficients c = coefficients;
        final double requests = step.decodeRequests() + step.prefillRequests();
        final double tokens = step.scheduledTokens();
        double us = c.stepUs() + c.layerUs() * model.layers() + c.requestUs() * requests +
            Math.max(c.compute() * linearComputeUs(requests, tokens),
                c.weights() * denseWeightUs() + c.experts() * expertWeightUs(tokens)) +
            c.compute() * prefillAttentionUs(step) + c.kv() * kvUs(step) +
            allReducesPerStep * (c.allReduceUs() + c.comm() * commUs(tokens));
        if (c.jitter() > 0.0)
        {
            us *= Math.max(1.0 + c.jitter() * random.nextGaussian(), 0.0);
        }
        return (long)(us * 1000.0);
    }

    /**
     * What each coefficient multiplies in a step, so that the step lasts the sum of coefficient x term (what the fit
     * solves for): per step 1, layers, requests; the compute time (the linear layers' when the coefficients make
     * them compute-bound, plus the prefill attention's); the weights' read time when the linear layers are
     * memory-bound; the KV read time; the all-reduces' link time and their count.
     *
     * @param step the composed step.
     * @param terms where to write {@link #TERMS} values, in the order of {@link RooflineCoefficients#values()}.
     */
    public void terms(final StepShape step, final double[] terms)
    {
        final RooflineCoefficients c = coefficients;
        final double requests = step.decodeRequests() + step.prefillRequests();
        final double tokens = step.scheduledTokens();
        final double linearUs = linearComputeUs(requests, tokens);
        final double denseUs = denseWeightUs();
        final double expertUs = expertWeightUs(tokens);
        final boolean computeBound = c.compute() * linearUs > c.weights() * denseUs + c.experts() * expertUs;
        terms[0] = 1;
        terms[1] = model.layers();
        terms[2] = requests;
        terms[3] = (computeBound ? linearUs : 0) + prefillAttentionUs(step);
        terms[4] = computeBound ? 0 : denseUs;
        terms[5] = kvUs(step);
        terms[6] = allReducesPerStep * commUs(tokens);
        terms[7] = allReducesPerStep;
        terms[8] = computeBound ? 0 : expertUs;
    }

    private double linearComputeUs(final double requests, final double tokens)
    {
        return (linearFlopsPerToken * tokens + lmHeadFlopsPerSample * requests) /
            (tensorParallel * gpu.bf16FlopsPerS()) * US_PER_S;
    }

    private double prefillAttentionUs(final StepShape step)
    {
        return attentionFlopsPerPair * step.prefillAttentionPairs() / (tensorParallel * gpu.bf16FlopsPerS()) *
            US_PER_S;
    }

    private double denseWeightUs()
    {
        return denseWeightBytes / (tensorParallel * gpu.memoryBytesPerS()) * US_PER_S;
    }

    /** The routed experts' weights {@code tokens} are expected to touch: {@code E x (1 - (1 - k/E)^T)} of them. */
    private double expertWeightUs(final double tokens)
    {
        if (0 == expertBytes)
        {
            return 0;
        }
        final double untouched = Math.pow(1.0 - (double)model.expertsPerToken() / model.experts(), tokens);
        return expertBytes * model.experts() * (1.0 - untouched) / (tensorParallel * gpu.memoryBytesPerS()) *
            US_PER_S;
    }

    private double kvUs(final StepShape step)
    {
        return kvBytesPerToken * step.decodeContextTokens() / gpu.memoryBytesPerS() * US_PER_S;
    }

    private double commUs(final double tokens)
    {
        return allReduceBytesPerToken * tokens / gpu.linkBytesPerS() * US_PER_S;
    }

    @Override
    public long firstTokenDelayNs(
        final int promptTokens, final int cachedTokens, final int runningRequests, final SeededRandom random)
    {
        return 0;
    }

    @Override
    public String describe()
    {
        return "roofline step model: " + model.name() + " on " + tensorParallel + "x " + gpu.name() + ", " +
            coefficients;
    }
}
