package dev.tapedeck.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine;

import dev.tapedeck.engine.SpeculativeDecoding;
import dev.tapedeck.engine.StepReplay;
import dev.tapedeck.engine.TokenReplay;
import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.KnobLatencyModel;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.RooflineProfile;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.latency.StepProfileFile;
import dev.tapedeck.latency.TraceLatencyModel;

/**
 * Latency-model flags shared by every face that runs an engine, through {@link EngineOptions}. The knob flags use
 * llm-d-inference-sim's names and meaning; giving any of them without {@code --latency-model} selects the knob model.
 * Filled by picocli on one thread.
 */
final class LatencyOptions
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
            "physics model when --gpu, --tensor-parallel-size or --model-config is given, else the linear profile " +
            "fitted on --model, else for a known architecture its prediction on as few H100s as leave 128k tokens of " +
            "KV cache, else dense-8b-rtxpro6000. See docs/latency-models.md.")
    String stepProfile;

    @CommandLine.Option(names = "--gpu", paramLabel = "NAME",
        description = "The GPU the physics step model predicts for: H100, H200, B200, A100, A100-40GB, L40S, L4, " +
            "A10G, RTX-4090, RTX-PRO-6000, MI300X (data-sheet FLOP/s, bandwidth, memory and link). Also sizes the " +
            "KV cache unless --kv-cache-size or --gpu-memory-gb is given.")
    String gpu;

    @CommandLine.Option(names = "--tensor-parallel-size", paramLabel = "N",
        description = "GPUs each engine's model is split over (vLLM's flag): the physics model divides the work, " +
            "adds two all-reduces per layer, and the KV cache holds 1/N of the weights and KV heads per GPU " +
            "(default: the measured profile's, else the fewest of 1, 2, 4, 8 that hold the weights on --gpu, or " +
            "without --gpu leave 128k tokens of KV cache on H100s).")
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

    @CommandLine.Option(names = "--speculative-config", paramLabel = "JSON",
        description = "vLLM's speculative decoding config, e.g. '{\"method\":\"ngram\",\"num_speculative_tokens\":4}'" +
            ": every decode step schedules K = num_speculative_tokens draft tokens per request (against " +
            "--max-num-batched-tokens) and emits 1 to K + 1 tokens; other keys are accepted and ignored.")
    String speculativeConfig;

    @CommandLine.Option(names = "--spec-acceptance-rate", paramLabel = "RATE[,RATE...]", split = ",",
        description = "With --speculative-config: per-position acceptance rates as vLLM reports them (share of " +
            "drafts whose position i is accepted; K non-increasing values), or one per-draft probability p " +
            "(rates p, p^2, ...; default " + SpeculativeDecoding.DEFAULT_ACCEPTANCE_RATE + ").")
    double[] specAcceptanceRates;

    @CommandLine.Option(names = "--replay-tokens", paramLabel = "FILE",
        description = "A trace recorded with token ids (record --record-tokens, --trace-out with it, or vllm-vcr): " +
            "a request whose prompt matches a recorded one (same length and full-block fingerprints) gets its " +
            "output_token_ids and finish reason; others use the normal token source.")
    java.nio.file.Path replayTokensFile;

    @CommandLine.Option(names = "--replay-tokens-match", paramLabel = "prefix|index", defaultValue = "prefix",
        description = "How --replay-tokens finds a request's record: prefix (same prompt length and full-block " +
            "fingerprints; default) or index (record i of the trace's arrival order for a request id holding " +
            "replay-i, else ending in -i).")
    StepReplay.Match replayTokensMatch;

    private TokenReplay tokenReplay;

    @CommandLine.Option(names = "--replay-steps", paramLabel = "FILE",
        description = "A trace with itl_ms (vllm-vcr or tapedeck): a matching request gets the recorded first chunk " +
            "and each decode step's recorded gap and tokens verbatim; K = max(itl_tokens) - 1 > 0 turns on " +
            "speculative-decoding accounting. Unmatched requests stay on the latency model.")
    java.nio.file.Path replayStepsFile;

    @CommandLine.Option(names = "--replay-steps-match", paramLabel = "prefix|index", defaultValue = "prefix",
        description = "How --replay-steps finds a request's record: prefix (deepest shared prompt block " +
            "fingerprint; default) or index (record i of the trace's arrival order for a request id holding " +
            "replay-i, else ending in -i).")
    StepReplay.Match replayStepsMatch;

    private StepReplay stepReplay;

    @CommandLine.Option(names = "--expect-config-hash", paramLabel = "HASH",
        description = "Refuse to start unless every trace given to --replay-tokens, --replay-steps and " +
            "--latency-trace was captured for this configuration fingerprint (its meta config_hash; inspect " +
            "fingerprint computes one): a replay never runs on a capture of another setup.")
    String expectConfigHash;

    /**
     * {@code --expect-config-hash}: every trace the replay and latency flags name carries that fingerprint.
     *
     * @throws IllegalArgumentException (one line naming the file) for a trace of another or no fingerprint, or when
     *     no trace is given.
     */
    void checkConfigHash()
    {
        if (null == expectConfigHash)
        {
            return;
        }
        final String expected = expectConfigHash.trim().toLowerCase(java.util.Locale.ROOT);
        if (!expected.matches("[0-9a-f]{64}"))
        {
            throw new IllegalArgumentException("--expect-config-hash takes 64 hex digits, got '" + expectConfigHash +
                "'");
        }
        final java.util.Set<java.nio.file.Path> traces = new java.util.LinkedHashSet<>();
        if (null != replayTokensFile)
        {
            traces.add(replayTokensFile);
        }
        if (null != replayStepsFile)
        {
            traces.add(replayStepsFile);
        }
        if (null != latencyTraceFiles)
        {
            traces.addAll(latencyTraceFiles);
        }
        if (traces.isEmpty())
        {
            throw new IllegalArgumentException("--expect-config-hash checks the traces of --replay-tokens, " +
                "--replay-steps and --latency-trace; none is given");
        }
        for (final java.nio.file.Path trace : traces)
        {
            final String found;
            try (dev.tapedeck.trace.TraceReader reader = dev.tapedeck.trace.TraceReader.open(trace))
            {
                found = null == reader.meta().configHash() ? null :
                    reader.meta().configHash().toLowerCase(java.util.Locale.ROOT);
            }
            catch (final java.io.IOException | IllegalArgumentException ex)
            {
                throw new IllegalArgumentException(trace + ": " + ex.getMessage(), ex);
            }
            if (null == found)
            {
                throw new IllegalArgumentException(trace + ": the trace records no config_hash, so it cannot be " +
                    "checked against --expect-config-hash " + expected);
            }
            if (!expected.equals(found))
            {
                throw new IllegalArgumentException(trace + ": captured for config_hash " + found + ", not " +
                    expected + " (--expect-config-hash)");
            }
        }
    }

    /**
     * @return the recorded steps {@code --replay-steps} names (read once), or null.
     * @throws IllegalArgumentException (naming the file, and the line of a bad record) for a file that cannot be read
     *     or an unusable trace.
     */
    public StepReplay stepReplay()
    {
        if (null == stepReplay && null != replayStepsFile)
        {
            stepReplay = read("--replay-steps", replayStepsFile, f -> StepReplay.read(f, replayStepsMatch));
        }
        return stepReplay;
    }

    /**
     * @return the recorded outputs {@code --replay-tokens} names (read once), or null.
     * @throws IllegalArgumentException (naming the file, and the line of a bad record) for a file that cannot be read
     *     or an unusable trace.
     */
    public TokenReplay tokenReplay()
    {
        if (null == tokenReplay && null != replayTokensFile)
        {
            tokenReplay = read("--replay-tokens", replayTokensFile, f -> TokenReplay.read(f, replayTokensMatch));
        }
        return tokenReplay;
    }

    /** Reads one file a flag names. */
    private interface FileReader<T>
    {
        T read(java.nio.file.Path file) throws java.io.IOException;
    }

    private static <T> T read(final String flag, final java.nio.file.Path file, final FileReader<T> reader)
    {
        try
        {
            return reader.read(file);
        }
        catch (final java.nio.file.NoSuchFileException ex)
        {
            throw new IllegalArgumentException(flag + ": no such file: " + file, ex);
        }
        catch (final java.io.IOException ex)
        {
            throw new IllegalArgumentException(flag + ": cannot read " + file + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * @return the speculative decoding {@code --speculative-config} asks for, or null.
     * @throws IllegalArgumentException (one line) for a config that is not a JSON object with an integer
     *     {@code num_speculative_tokens} >= 1, or bad acceptance rates.
     */
    public SpeculativeDecoding speculativeDecoding()
    {
        if (null == speculativeConfig)
        {
            if (null != specAcceptanceRates)
            {
                throw new IllegalArgumentException("--spec-acceptance-rate needs --speculative-config");
            }
            return null;
        }
        final JsonNode json;
        try
        {
            json = new ObjectMapper().readTree(speculativeConfig);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalArgumentException("--speculative-config is not valid JSON: " +
                ex.getOriginalMessage());
        }
        if (null == json || !json.isObject())
        {
            throw new IllegalArgumentException("--speculative-config must be a JSON object, got: " +
                speculativeConfig);
        }
        final JsonNode k = json.get("num_speculative_tokens");
        if (null == k || !k.canConvertToInt() || !k.isIntegralNumber() || k.intValue() < 1)
        {
            throw new IllegalArgumentException("--speculative-config: num_speculative_tokens must be an integer " +
                ">= 1, got " + (null == k ? "none" : k.toString()));
        }
        try
        {
            return SpeculativeDecoding.of(k.intValue(), specAcceptanceRates);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("--spec-acceptance-rate: " + ex.getMessage(), ex);
        }
    }

    private boolean anyKnobGiven()
    {
        return null != ttftNs || null != ttftStdDevNs || null != itlNs || null != itlStdDevNs ||
            null != prefillOverheadNs || null != prefillPerTokenNs || null != prefillStdDevNs ||
            null != timeFactorUnderLoad || null != calculator;
    }

    @CommandLine.Option(names = "--latency-trace", paramLabel = "FILE[,FILE...]", split = ",",
        description = "Latency learnt from captured traces (vllm-vcr's or tapedeck's record / --trace-out): " +
            "TTFT from a prefill service curve, each request's decode steps (gaps and itl_tokens bursts) drawn " +
            "from recorded requests of similar prompt length and concurrency, prefill chunks from the fitted " +
            "chunk-cost law. Replaces --latency-model.")
    java.util.List<java.nio.file.Path> latencyTraceFiles;

    private LatencyModel traceModel;
    private double kvUtilization = 0.9;
    private int kvBlockSize = 16;

    /**
     * A linear profile measured for one model, with the GPUs it was measured on, which size the KV cache.
     *
     * @param coefficients the profile.
     * @param gpu the GPU it ran on.
     * @param tensorParallel GPUs per engine.
     */
    record LinearDeployment(StepCoefficients coefficients, String gpu, int tensorParallel)
    {
    }

    /**
     * The shipped linear profiles by the model they were fitted on (the default model, Qwen/Qwen3-8B, keeps the
     * default profile and KV cache without being listed), in name order, so that a profile alone names the first of
     * its models (the MoE profile was measured on the 2507 release of Qwen3-30B-A3B, which shares its dimensions).
     */
    private static final java.util.Map<String, LinearDeployment> LINEAR_BY_MODEL = new java.util.TreeMap<>(
        java.util.Map.of(
            "meta-llama/Llama-3.1-8B", new LinearDeployment(StepCoefficients.DENSE_8B_RTXPRO6000, "RTX-PRO-6000", 1),
            "Qwen/Qwen3-32B", new LinearDeployment(StepCoefficients.DENSE_32B_TP2_RTXPRO6000, "RTX-PRO-6000", 2),
            "Qwen/Qwen3-30B-A3B", new LinearDeployment(StepCoefficients.MOE_30B_A3B_RTXPRO6000, "RTX-PRO-6000", 1),
            "Qwen/Qwen3-30B-A3B-Instruct-2507",
            new LinearDeployment(StepCoefficients.MOE_30B_A3B_RTXPRO6000, "RTX-PRO-6000", 1)));
    /** A model with no profile of its own runs predicted on this GPU when none is named. */
    private static final String DEFAULT_PHYSICS_GPU = "H100";
    /** ... at the fewest GPUs (1, 2, 4, 8) whose memory leaves the KV cache at least this many tokens. */
    private static final long MIN_KV_TOKENS = 131_072;

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
            if (null != gpu || null != tensorParallelSize || null != modelConfig)
            {
                throw new IllegalArgumentException("--step-profile names a whole deployment; give it or --gpu, " +
                    "--tensor-parallel-size and --model-config, not both");
            }
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
            final GpuSpec onGpu = null == chosenGpu ? GpuSpec.lookup(DEFAULT_PHYSICS_GPU) : chosenGpu;
            // no size given: as few GPUs as hold the model (named GPU) or leave a sizeable cache (a model alone)
            roofline = RooflineProfile.predicted(architecture, onGpu, null != tensorParallelSize ? tensorParallelSize :
                fewestGpus(architecture, onGpu, null == chosenGpu ? MIN_KV_TOKENS : kvBlockSize));
        }
        else if (null == roofline && !LINEAR_BY_MODEL.containsKey(architecture.name()) && !linearOverridden() &&
            !dev.tapedeck.serve.ServeContext.DEFAULT_MODEL.equals(architecture.name()))
        {
            // a known model without a profile of its own: predicted, not timed as the default 8B model
            final GpuSpec h100 = GpuSpec.lookup(DEFAULT_PHYSICS_GPU);
            roofline = RooflineProfile.predicted(architecture, h100, fewestGpus(architecture, h100, MIN_KV_TOKENS));
        }
        return roofline;
    }

    private boolean linearOverridden()
    {
        return null != stepBaseNs || null != stepPrefillTokenNs || null != stepDecodeRequestNs || null != stepContextNs;
    }

    /**
     * The fewest GPUs (1, 2, 4, 8) whose memory holds the weights and leaves {@code minKvTokens} of KV cache at the
     * engine's {@code --gpu-memory-utilization} and {@code --block-size} (8 when none does).
     */
    private int fewestGpus(final ModelArchitecture model, final GpuSpec gpu, final long minKvTokens)
    {
        for (int gpus = 1; gpus < 8; gpus *= 2)
        {
            try
            {
                if ((long)dev.tapedeck.kv.KvCapacity.blocks(model, gpu, gpus, kvUtilization, kvBlockSize) *
                    kvBlockSize >= minKvTokens)
                {
                    return gpus;
                }
            }
            catch (final IllegalArgumentException ex)
            {
                // the weights do not fit: more GPUs
            }
        }
        return 8;
    }

    /**
     * The engine's KV settings, which decide how many GPUs a predicted deployment needs; set by {@link EngineOptions}
     * before any profile is resolved.
     *
     * @param utilization {@code --gpu-memory-utilization}.
     * @param blockSize {@code --block-size}.
     */
    void kvSettings(final double utilization, final int blockSize)
    {
        kvUtilization = utilization;
        kvBlockSize = blockSize;
    }

    /**
     * @param modelName the served model's name.
     * @return the linear profile measured for that model when it is the step model the flags build (no
     *     {@code --step-profile}, no physics profile), else null.
     */
    LinearDeployment linearDeploymentInUse(final String modelName)
    {
        if (!stepModelChosen() || null != roofline(modelName) || null != profileFile())
        {
            return null;
        }
        final ModelArchitecture architecture = ModelArchitecture.lookup(modelName);
        final LinearDeployment measured = null == architecture ? null : LINEAR_BY_MODEL.get(architecture.name());
        return null != measured && (null == stepProfile || measured.coefficients().name().equals(stepProfile)) ?
            measured : null;
    }

    /**
     * @param defaultModel the face's default model.
     * @return the model {@code --step-profile} was measured on, when it names a measured physics profile or a linear
     *     profile fitted on another model than the default's, so that a profile alone gives a consistent name and KV
     *     cache; else {@code defaultModel}.
     */
    String defaultModel(final String defaultModel)
    {
        if (null == stepProfile)
        {
            return defaultModel;
        }
        if (null != profileFile())
        {
            return null == profileFile().roofline() ? defaultModel : profileFile().roofline().model().name();
        }
        final RooflineProfile measured = RooflineProfile.named(stepProfile);
        if (null != measured)
        {
            return measured.model().name();
        }
        for (final java.util.Map.Entry<String, LinearDeployment> entry : LINEAR_BY_MODEL.entrySet())
        {
            if (entry.getValue().coefficients().name().equals(stepProfile) &&
                StepCoefficients.DENSE_8B_RTXPRO6000 != entry.getValue().coefficients())
            {
                return entry.getKey();
            }
        }
        return defaultModel;
    }

    /**
     * @param modelName the served model's name.
     * @return the modelled frontend delay when {@code --frontend-delay} is not given: the step profile's (a profile
     *     file's or the physics profile's) when the step model is the one built, else 0 (the knob and trace models
     *     time what a client sees, frontend included).
     */
    long frontendDelayNs(final String modelName)
    {
        final RooflineProfile physics = physicsInUse(modelName);
        if (null != physics)
        {
            return physics.frontendDelayNs();
        }
        return null != profileFile() && null == profileFile().roofline() && stepModelChosen() ?
            profileFile().frontendDelayNs() : 0;
    }

    private boolean stepModelChosen()
    {
        final boolean traced = null != latencyTraceFiles && !latencyTraceFiles.isEmpty();
        return !traced && (ModelKind.STEP == kind || (null == kind && !anyKnobGiven()));
    }

    /**
     * @param modelName the served model's name.
     * @return the physics profile when it is the latency model the flags build, else null.
     */
    RooflineProfile physicsInUse(final String modelName)
    {
        return stepModelChosen() ? roofline(modelName) : null;
    }

    /**
     * @param modelName the served model's name.
     * @return the frontend delay's log-normal sigma when {@code --frontend-delay-jitter} is not given: the physics
     *     profile's (a profile file's included), else 0.
     */
    double frontendDelayJitter(final String modelName)
    {
        final RooflineProfile physics = physicsInUse(modelName);
        return null == physics ? 0 : physics.frontendDelayJitter();
    }

    /**
     * @param maxNumSeqs the engine's running-set cap (the knob model's load factor uses it).
     * @param maxNumBatchedTokens the engine's token budget per step (the trace model's chunk law uses it).
     * @param modelName the served model's name, whose measured or physics profile applies by default.
     * @return the configured model.
     * @throws IllegalArgumentException (one line) for conflicting flags or an unusable latency trace.
     */
    public LatencyModel build(final int maxNumSeqs, final int maxNumBatchedTokens, final String modelName)
    {
        if (null != latencyTraceFiles && !latencyTraceFiles.isEmpty())
        {
            if (null != kind || anyKnobGiven())
            {
                throw new IllegalArgumentException("give --latency-trace or --latency-model and its knobs, not both");
            }
            if (null == traceModel)
            {
                traceModel = read("--latency-trace", latencyTraceFiles.get(0),
                    f -> TraceLatencyModel.read(latencyTraceFiles, maxNumBatchedTokens));
            }
            return traceModel;
        }
        if (!stepModelChosen())
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
        final LinearDeployment measuredForModel = linearDeploymentInUse(modelName);
        final StepCoefficients profile = null != profileFile() ? profileFile().coefficients() :
            null != measuredForModel ? measuredForModel.coefficients() :
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
