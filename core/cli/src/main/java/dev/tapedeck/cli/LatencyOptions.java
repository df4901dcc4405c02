package dev.tapedeck.cli;

import picocli.CommandLine;

import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.KnobLatencyModel;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.RooflineProfile;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.latency.StepProfileFile;

/**
 * Latency-model flags shared by every face that runs an engine. The knob flags use llm-d-inference-sim's names and
 * meaning; giving any of them without {@code --latency-model} selects the knob model. Public so that
 * {@code inspect calibrate} replays through the same flags; filled by picocli on one thread.
 */
public final class LatencyOptions
{
    /** Which latency model. */
    enum ModelKind
    {
        /** Batch-driven step model (default). */
        STEP,
        /** llm-d-inference-sim style knobs. */
        KNOB
    }

    @CommandLine.Option(names = "--latency-model", paramLabel = "step|knob",
        description = "Latency model: step (default; step time from the composed batch, fitted to real vLLM runs) " +
            "or knob (llm-d-inference-sim's TTFT/ITL knobs). Any knob flag selects knob unless this is given.")
    ModelKind kind;

    @CommandLine.Option(names = "--step-profile", paramLabel = "NAME|FILE",
        description = "Step-model profile: dense-8b-rtxpro6000, dense-32b-tp2-rtxpro6000, moe-30b-a3b-rtxpro6000, " +
            "the measured H100 physics profiles llama-2-7b-tp1-h100, llama-2-70b-tp4-h100, mixtral-8x7b-tp2-h100, " +
            "codellama-34b-tp2-h100, or a profile file that inspect fit wrote (its frontend delay applies unless " +
            "--frontend-delay is given). Default: the measured profile of --model when there is one, else the " +
            "physics model when --gpu, --tensor-parallel-size or --model-config is given, else dense-8b-rtxpro6000. " +
            "See docs/latency-models.md.")
    String stepProfile;

    @CommandLine.Option(names = "--gpu", paramLabel = "NAME",
        description = "The GPU the physics step model predicts for: H100, H200, B200, A100, A100-40GB, L40S, L4, " +
            "A10G, RTX-4090, RTX-PRO-6000, MI300X (data-sheet FLOP/s, bandwidth, memory and link). Also sizes the " +
            "KV cache unless --kv-cache-size or --gpu-memory-gb is given.")
    String gpu;

    @CommandLine.Option(names = "--tensor-parallel-size", paramLabel = "N",
        description = "GPUs each engine's model is split over (vLLM's flag): the physics model divides the work, " +
            "adds two all-reduces per layer, and the KV cache holds 1/N of the weights and KV heads per GPU " +
            "(default: the measured profile's, else 1).")
    Integer tensorParallelSize;

    @CommandLine.Option(names = "--model-config", paramLabel = "FILE",
        description = "A Hugging Face config.json giving the model's architecture to the physics step model and " +
            "the KV geometry (default: the built-in architecture of --model).")
    java.nio.file.Path modelConfig;

    private StepProfileFile.Loaded profileFile;
    private RooflineProfile roofline;
    private boolean rooflineResolved;

    @CommandLine.Option(names = "--step-base", paramLabel = "DURATION", converter = Converters.DurationNs.class,
        description = "Override: fixed cost of every step.")
    Long stepBaseNs;

    @CommandLine.Option(names = "--step-prefill-per-token", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Override: cost per prompt token computed in a step.")
    Long stepPrefillTokenNs;

    @CommandLine.Option(names = "--step-decode-per-request", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Override: cost per decoding request in a step.")
    Long stepDecodeRequestNs;

    @CommandLine.Option(names = "--step-context-per-1k-tokens", paramLabel = "DURATION",
        converter = Converters.DurationNs.class,
        description = "Override: cost per 1000 tokens of KV context read by the decodes of a step.")
    Long stepContextNs;

    @CommandLine.Option(names = "--step-jitter", paramLabel = "FRACTION",
        description = "Relative standard deviation of step durations (default: the profile's, 0).")
    Double stepJitter;

    @CommandLine.Option(names = "--latency-calculator", paramLabel = "constant|per-token",
        description = "Knob model: force the constant TTFT or the per-token prefill form (llm-d semantics; " +
            "default: constant when a TTFT is set, per-token otherwise).")
    String calculator;

    @CommandLine.Option(names = "--time-to-first-token", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Knob: mean time to first token (after queueing).")
    Long ttftNs;

    @CommandLine.Option(names = "--time-to-first-token-std-dev", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Knob: TTFT standard deviation (<= 30%% of the mean).")
    Long ttftStdDevNs;

    @CommandLine.Option(names = "--inter-token-latency", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Knob: mean time between tokens (one decode step).")
    Long itlNs;

    @CommandLine.Option(names = "--inter-token-latency-std-dev", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Knob: ITL standard deviation (<= 30%% of the mean).")
    Long itlStdDevNs;

    @CommandLine.Option(names = "--prefill-overhead", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Knob: fixed prefill cost (per-token form).")
    Long prefillOverheadNs;

    @CommandLine.Option(names = "--prefill-time-per-token", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Knob: prefill cost per uncached prompt token.")
    Long prefillPerTokenNs;

    @CommandLine.Option(names = "--prefill-time-std-dev", paramLabel = "DURATION",
        converter = Converters.DurationNs.class, description = "Knob: standard deviation of the prefill time.")
    Long prefillStdDevNs;

    @CommandLine.Option(names = "--time-factor-under-load", paramLabel = "FACTOR",
        description = "Knob: latency multiplier when max-num-seqs requests run (>= 1, linear in between).")
    Double timeFactorUnderLoad;

    private boolean anyKnobGiven()
    {
        return null != ttftNs || null != ttftStdDevNs || null != itlNs || null != itlStdDevNs ||
            null != prefillOverheadNs || null != prefillPerTokenNs || null != prefillStdDevNs ||
            null != timeFactorUnderLoad || null != calculator;
    }

    /**
     * Which physics deployment the flags select, read once: a named measured profile, or for a known architecture
     * ({@code --model-config}, else {@code --model}) its measured profile (on {@code --gpu} and at
     * {@code --tensor-parallel-size} when given), else the prediction when {@code --gpu},
     * {@code --tensor-parallel-size} or {@code --model-config} is given.
     *
     * @param modelName the served model's name ({@code --model}), or null.
     * @return the deployment, or null when the step model keeps a linear profile.
     * @throws IllegalArgumentException (one line) for an unknown GPU, a bad config.json, or physics flags for a model
     *     whose architecture is unknown.
     */
    public RooflineProfile roofline(final String modelName)
    {
        if (rooflineResolved)
        {
            return roofline;
        }
        rooflineResolved = true;
        final GpuSpec chosenGpu = null == gpu ? null : GpuSpec.lookup(gpu);
        if (null != stepProfile)
        {
            roofline = RooflineProfile.named(stepProfile);
            if (null == roofline && null != profileFile())
            {
                roofline = profileFile().roofline();
            }
            return roofline;
        }
        final ModelArchitecture architecture;
        try
        {
            architecture = null != modelConfig ? ModelArchitecture.read(modelConfig) :
                ModelArchitecture.lookup(modelName);
        }
        catch (final java.io.IOException ex)
        {
            throw new IllegalArgumentException("--model-config " + ex.getMessage(), ex);
        }
        final boolean physicsAsked = null != chosenGpu || null != tensorParallelSize || null != modelConfig;
        if (null == architecture)
        {
            if (physicsAsked)
            {
                throw new IllegalArgumentException("no built-in architecture for model '" + modelName + "' (known: " +
                    ModelArchitecture.knownNames() + "); give --model-config config.json");
            }
            return null;
        }
        roofline = RooflineProfile.measured(architecture, chosenGpu, tensorParallelSize);
        if (null == roofline && physicsAsked)
        {
            roofline = RooflineProfile.predicted(architecture, null == chosenGpu ? GpuSpec.lookup("H100") : chosenGpu,
                null == tensorParallelSize ? 1 : tensorParallelSize);
        }
        return roofline;
    }

    /**
     * @param modelName the served model's name.
     * @return the modelled frontend delay when {@code --frontend-delay} is not given: a profile file's, else the
     *     physics profile's, else 0.
     */
    long frontendDelayNs(final String modelName)
    {
        if (null != profileFile())
        {
            return profileFile().frontendDelayNs();
        }
        final RooflineProfile physics = roofline(modelName);
        return null == physics ? 0 : physics.frontendDelayNs();
    }

    /**
     * @param modelName the served model's name.
     * @return the frontend delay's log-normal sigma when {@code --frontend-delay-jitter} is not given: the physics
     *     profile's (a profile file's included), else 0.
     */
    double frontendDelayJitter(final String modelName)
    {
        final RooflineProfile physics = roofline(modelName);
        return null == physics ? 0 : physics.frontendDelayJitter();
    }

    /**
     * @param maxNumSeqs the engine's running-set cap (the knob model's load factor uses it).
     * @return the configured model, for a served model whose architecture is not known.
     */
    public LatencyModel build(final int maxNumSeqs)
    {
        return build(maxNumSeqs, null);
    }

    /**
     * @param maxNumSeqs the engine's running-set cap (the knob model's load factor uses it).
     * @param modelName the served model's name, whose measured or physics profile applies by default.
     * @return the configured model.
     */
    public LatencyModel build(final int maxNumSeqs, final String modelName)
    {
        final ModelKind chosen = null != kind ? kind : anyKnobGiven() ? ModelKind.KNOB : ModelKind.STEP;
        if (ModelKind.KNOB == chosen)
        {
            return new KnobLatencyModel(calculator(), orZero(ttftNs), orZero(ttftStdDevNs), orZero(itlNs),
                orZero(itlStdDevNs), orZero(prefillOverheadNs), orZero(prefillPerTokenNs), orZero(prefillStdDevNs),
                null == timeFactorUnderLoad ? 1.0 : timeFactorUnderLoad, maxNumSeqs);
        }
        final RooflineProfile physics = roofline(modelName);
        if (null != physics)
        {
            if (null != stepBaseNs || null != stepPrefillTokenNs || null != stepDecodeRequestNs ||
                null != stepContextNs)
            {
                throw new IllegalArgumentException("--step-base, --step-prefill-per-token, --step-decode-per-request " +
                    "and --step-context-per-1k-tokens override a linear profile, not the physics profile " +
                    physics.name());
            }
            return physics.with(physics.coefficients().withJitter(null == stepJitter ?
                physics.coefficients().jitter() : stepJitter)).latencyModel();
        }
        final StepCoefficients profile = null != profileFile() ? profileFile().coefficients() :
            StepCoefficients.profile(null == stepProfile ? StepCoefficients.DENSE_8B_RTXPRO6000.name() : stepProfile);
        return new StepLatencyModel(profile.with(
            null == stepBaseNs ? profile.baseUs() : stepBaseNs / 1000.0,
            null == stepPrefillTokenNs ? profile.prefillTokenUs() : stepPrefillTokenNs / 1000.0,
            null == stepDecodeRequestNs ? profile.decodeRequestUs() : stepDecodeRequestNs / 1000.0,
            null == stepContextNs ? profile.contextKiloTokenUs() : stepContextNs / 1000.0,
            null == stepJitter ? profile.jitter() : stepJitter));
    }

    /**
     * @return the profile file {@code --step-profile} names, read once, or null when it names a built-in profile.
     * @throws IllegalArgumentException (one line naming the file) when the file is not a step profile.
     */
    StepProfileFile.Loaded profileFile()
    {
        if (null == profileFile && null != stepProfile && (stepProfile.endsWith(".json") ||
            java.nio.file.Files.isRegularFile(java.nio.file.Path.of(stepProfile))))
        {
            try
            {
                profileFile = StepProfileFile.read(java.nio.file.Path.of(stepProfile));
            }
            catch (final java.io.IOException ex)
            {
                throw new IllegalArgumentException("--step-profile " + ex.getMessage(), ex);
            }
        }
        return profileFile;
    }

    private KnobLatencyModel.Calculator calculator()
    {
        if (null == calculator || calculator.isEmpty())
        {
            return KnobLatencyModel.Calculator.AUTO;
        }
        switch (calculator)
        {
            case "constant":
                return KnobLatencyModel.Calculator.CONSTANT;
            case "per-token":
                return KnobLatencyModel.Calculator.PER_TOKEN;
            default:
                throw new IllegalArgumentException("--latency-calculator must be constant or per-token, got '" +
                    calculator + "'");
        }
    }

    private static long orZero(final Long value)
    {
        return null == value ? 0 : value;
    }
}
