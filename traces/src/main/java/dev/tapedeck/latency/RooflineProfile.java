package dev.tapedeck.latency;

import java.util.List;

/**
 * A physics step model for one deployment: a model's architecture on a GPU at a tensor-parallel size, with its
 * corrections and frontend delay. The measured profiles ({@link #MEASURED}) were fitted by {@code inspect fit
 * --roofline} to one model's real H100 runs; any other model, GPU or size gets the corrections fitted across all the
 * H100 runs ({@link #ACROSS_MODELS_H100}), which is how it predicts deployments nobody measured. A profile also sets
 * the engine's KV geometry (bytes per token, blocks on the GPU).
 * <p>
 * Immutable; thread safe.
 *
 * @param name the name {@code --step-profile} takes.
 * @param model the model's architecture.
 * @param gpu the GPU.
 * @param tensorParallel GPUs per engine.
 * @param coefficients the corrections.
 * @param frontendDelayNs the modelled API-server mean time before the engine queues a request.
 * @param frontendDelayJitter the log-normal sigma of that time ({@code --frontend-delay-jitter}).
 * @param source where the numbers come from.
 */
public record RooflineProfile(String name, ModelArchitecture model, GpuSpec gpu, int tensorParallel,
    RooflineCoefficients coefficients, long frontendDelayNs, double frontendDelayJitter, String source)
{
    private static final String BLIS = "BLIS H100 training runs (inference-sim/training, vLLM, " +
        "max-num-batched-tokens " +
        "2048, max-num-seqs 128), fitted by tapedeck inspect fit --roofline";

    /** Corrections and frontend delay fitted across the four models of the BLIS H100 runs at once. */
    public static final RooflineCoefficients ACROSS_MODELS_H100 = new RooflineCoefficients("h100-across-models",
        776.1, 23.47, 5.12, 1.000, 1.000, 1.135, 0.617, 15.33, 1.111, 0);

    /** The frontend delay fitted with {@link #ACROSS_MODELS_H100}, in nanoseconds. */
    public static final long ACROSS_MODELS_H100_FRONTEND_NS = 15_750_000L;

    /** The frontend delay's log-normal sigma fitted with {@link #ACROSS_MODELS_H100}. */
    public static final double ACROSS_MODELS_H100_FRONTEND_JITTER = 0.4;

    /** Profiles fitted to one model's H100 runs each (pulled towards the across-model fit where its data is silent). */
    public static final List<RooflineProfile> MEASURED = List.of(
        measured("llama-2-7b-tp1-h100", "meta-llama/Llama-2-7b-hf", 1,
            new RooflineCoefficients("llama-2-7b-tp1-h100", 749.3, 22.10, 5.14, 1.000, 1.135, 1.106, 0.617, 15.33,
                1.111, 0), 13_247_000L, 0.3),
        measured("llama-2-70b-tp4-h100", "meta-llama/Llama-2-70b-hf", 4,
            new RooflineCoefficients("llama-2-70b-tp4-h100", 776.1, 23.48, 5.48, 1.000, 1.049, 1.425, 0.0, 15.34,
                1.111, 0), 24_408_000L, 0.45),
        measured("mixtral-8x7b-tp2-h100", "mistralai/Mixtral-8x7B-v0.1", 2,
            new RooflineCoefficients("mixtral-8x7b-tp2-h100", 781.3, 23.74, 5.42, 1.006, 1.011, 1.360, 0.813, 15.64,
                1.111, 0), 33_273_000L, 0.15),
        measured("codellama-34b-tp2-h100", "codellama/CodeLlama-34b-hf", 2,
            new RooflineCoefficients("codellama-34b-tp2-h100", 696.2, 17.34, 4.06, 1.000, 1.034, 1.606, 0.0, 8.43,
                1.111, 0), 17_082_000L, 0.45));

    private static RooflineProfile measured(final String name, final String model, final int tensorParallel,
        final RooflineCoefficients coefficients, final long frontendDelayNs, final double frontendDelayJitter)
    {
        return new RooflineProfile(name, ModelArchitecture.lookup(model), GpuSpec.lookup("H100"), tensorParallel,
            coefficients, frontendDelayNs, frontendDelayJitter, BLIS);
    }

    /**
     * Validates the deployment.
     */
    public RooflineProfile
    {
        if (null == model || null == gpu || null == coefficients)
        {
            throw new IllegalArgumentException("a roofline profile needs a model, a GPU and coefficients");
        }
        if (frontendDelayJitter < 0 || frontendDelayJitter > 2)
        {
            throw new IllegalArgumentException("the frontend delay's jitter must be within [0, 2], got " +
                frontendDelayJitter);
        }
        if (tensorParallel < 1)
        {
            throw new IllegalArgumentException("--tensor-parallel-size must be at least 1, got " + tensorParallel);
        }
    }

    /**
     * @param profileName a name.
     * @return the measured profile of that name, or null.
     */
    public static RooflineProfile named(final String profileName)
    {
        for (final RooflineProfile profile : MEASURED)
        {
            if (profile.name.equals(profileName))
            {
                return profile;
            }
        }
        return null;
    }

    /**
     * @param model the model.
     * @param gpu the GPU, or null for any.
     * @param tensorParallel the tensor-parallel size, or null for any.
     * @return the first measured profile of that model (on that GPU and size when given), or null.
     */
    public static RooflineProfile measured(final ModelArchitecture model, final GpuSpec gpu,
        final Integer tensorParallel)
    {
        for (final RooflineProfile profile : MEASURED)
        {
            if (profile.model.name().equals(model.name()) && (null == gpu || profile.gpu.name().equals(gpu.name())) &&
                (null == tensorParallel || profile.tensorParallel == tensorParallel))
            {
                return profile;
            }
        }
        return null;
    }

    /**
     * @param model the model.
     * @param gpu the GPU.
     * @param tensorParallel the tensor-parallel size.
     * @return the deployment predicted with the corrections fitted across the H100 runs.
     */
    public static RooflineProfile predicted(final ModelArchitecture model, final GpuSpec gpu, final int tensorParallel)
    {
        return new RooflineProfile(model.name() + "-tp" + tensorParallel + "-" + gpu.name() + "-predicted", model, gpu,
            tensorParallel, ACROSS_MODELS_H100, ACROSS_MODELS_H100_FRONTEND_NS, ACROSS_MODELS_H100_FRONTEND_JITTER,
            "predicted from the architecture and the GPU's data sheet with the corrections fitted across the " + BLIS);
    }

    /**
     * @param replacement the corrections to use.
     * @return this deployment with other corrections.
     */
    public RooflineProfile with(final RooflineCoefficients replacement)
    {
        return replacement == coefficients ? this :
            new RooflineProfile(name, model, gpu, tensorParallel, replacement, frontendDelayNs, frontendDelayJitter,
                source);
    }

    /**
     * @return the step model.
     */
    public RooflineStepModel latencyModel()
    {
        return new RooflineStepModel(model, gpu, tensorParallel, coefficients);
    }
}
