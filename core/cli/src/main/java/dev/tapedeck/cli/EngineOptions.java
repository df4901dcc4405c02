package dev.tapedeck.cli;

import java.nio.file.Path;

import picocli.CommandLine;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.SchedulingPolicy;
import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.kv.KvCapacity;
import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.RooflineProfile;

/**
 * Engine flags shared by every face that runs an engine ({@code serve}, {@code play}, {@code simulate}, and the replay
 * of {@code inspect calibrate TRACE}), with vLLM's names and defaults: one place that chooses the step model and, with
 * it, the KV geometry and the frontend delay. Public for {@code inspect calibrate}; filled by picocli on one thread.
 */
public final class EngineOptions
{
    @CommandLine.Option(names = "--max-num-seqs", paramLabel = "N", defaultValue = "256",
        description = "Most requests running at once (default: ${DEFAULT-VALUE}).")
    int maxNumSeqs;

    @CommandLine.Option(names = "--max-num-batched-tokens", paramLabel = "N", defaultValue = "8192",
        description = "Token budget of one step: decodes first, then prefill chunks (default: ${DEFAULT-VALUE}).")
    int maxNumBatchedTokens;

    @CommandLine.Option(names = "--max-model-len", paramLabel = "N",
        description = "Context length: prompt plus output tokens (default: the model's, as vLLM derives it from " +
            "config.json: a known --model, --model-config or the step profile's model, up to what the KV cache " +
            "holds; else 8192).")
    Integer maxModelLen;

    @CommandLine.Option(names = "--max-waiting-queue-length", paramLabel = "N", defaultValue = "16384",
        description = "Waiting requests beyond which new ones get 429 (default: ${DEFAULT-VALUE}).")
    int maxWaitingQueueLength;

    @CommandLine.Option(names = "--long-prefill-token-threshold", paramLabel = "N", defaultValue = "0",
        description = "Largest prefill chunk one request takes per step; 0 = no cap (default: ${DEFAULT-VALUE}).")
    int longPrefillTokenThreshold;

    @CommandLine.Option(names = "--enable-chunked-prefill", negatable = true, defaultValue = "true",
        fallbackValue = "true",
        description = "Split long prompts into chunks over steps, beside decodes (vLLM's default). " +
            "--no-enable-chunked-prefill admits a request only when its whole uncached prompt fits in the step's " +
            "budget, which is then raised to at least --max-model-len as vLLM raises it (default: on).")
    boolean enableChunkedPrefill;

    @CommandLine.Option(names = "--scheduling-policy", paramLabel = "fcfs|priority", defaultValue = "fcfs",
        description = "Admission order: fcfs, or priority (request 'priority', smaller first; default: " +
            "${DEFAULT-VALUE}).")
    SchedulingPolicy schedulingPolicy;

    @CommandLine.Option(names = "--block-size", paramLabel = "TOKENS", defaultValue = "16",
        description = "KV-cache block size in tokens (default: ${DEFAULT-VALUE}).")
    int blockSize;

    @CommandLine.Option(names = "--kv-cache-size", paramLabel = "BLOCKS",
        description = "KV-cache capacity in blocks of --block-size tokens; running requests are preempted when it " +
            "runs out (default: from --gpu-memory-gb when given, else 33600).")
    Integer kvCacheBlocks;

    @CommandLine.Option(names = "--gpu-memory-gb", paramLabel = "GB",
        description = "Size the KV cache as vLLM does on a GPU of this many GB (10^9 bytes): memory x " +
            "--gpu-memory-utilization, minus the weights and activations, in blocks of the model's KV bytes per " +
            "token (the model's dimensions are built in for common models; else give --kv-bytes-per-token and " +
            "--model-weights-gb).")
    Double gpuMemoryGb;

    @CommandLine.Option(names = "--gpu-memory-utilization", paramLabel = "FRACTION", defaultValue = "0.9",
        description = "Share of --gpu-memory-gb vLLM may use (default: ${DEFAULT-VALUE}).")
    double gpuMemoryUtilization;

    @CommandLine.Mixin
    KvOffloadOptions offload = new KvOffloadOptions();

    @CommandLine.Option(names = "--kv-bytes-per-token", paramLabel = "BYTES",
        description = "KV bytes of one token over all layers, for --gpu-memory-gb and the KV a P/D transfer moves " +
            "(default: the model's 2 x layers x kv_heads x head_dim x 2).")
    Long kvBytesPerToken;

    @CommandLine.Option(names = "--model-weights-gb", paramLabel = "GB",
        description = "Weights in GB, for --gpu-memory-gb (default: the model's parameters x 2 bytes).")
    Double modelWeightsGb;

    @CommandLine.Option(names = "--enable-prefix-caching", negatable = true, defaultValue = "true",
        fallbackValue = "true",
        description = "Share cached full prompt blocks between requests by their vLLM block hash; " +
            "--no-enable-prefix-caching turns it off (default: on).")
    boolean enablePrefixCaching;

    @CommandLine.Option(names = "--enable-mfu-metrics",
        description = "vLLM's flag: count the estimated FLOPs and bytes read and written per GPU of every step " +
            "(vllm:estimated_flops_per_gpu_total and kin), from the model's dimensions: a known --model, " +
            "--model-config, or the physics profile's model.")
    boolean enableMfuMetrics;

    @CommandLine.Option(names = "--kv-cache-metrics",
        description = "vLLM's flag: export KV-block residency histograms (vllm:kv_block_lifetime_seconds, " +
            "vllm:kv_block_idle_before_evict_seconds, vllm:kv_block_reuse_gap_seconds) over a sample of blocks.")
    boolean kvCacheMetrics;

    @CommandLine.Option(names = "--kv-cache-metrics-sample", paramLabel = "RATE", defaultValue = "0.01",
        description = "vLLM's flag: share of allocated KV blocks --kv-cache-metrics follows, in (0, 1] " +
            "(default: ${DEFAULT-VALUE}).")
    double kvCacheMetricsSample;

    @CommandLine.Option(names = {"--prefix-caching-hash-seed", "--hash-seed"}, paramLabel = "STRING",
        defaultValue = "0",
        description = "Root seed of the block hash chain: what PYTHONHASHSEED is for vLLM, so a router that hashes " +
            "with the same seed finds the same blocks (--hash-seed: llm-d-inference-sim's name; default: " +
            "${DEFAULT-VALUE}).")
    String prefixCachingHashSeed;

    @CommandLine.Option(names = "--prefix-caching-hash-algo", paramLabel = "ALGO",
        description = "Block hash function, vLLM's choices: sha256_cbor or xxhash_cbor (sha256 and xxhash hash " +
            "Python's pickle and are refused). Default: sha256_cbor; simulate: xxhash_cbor, which makes the same " +
            "decisions faster.")
    String prefixCachingHashAlgo;

    @CommandLine.Option(names = "--max-loras", paramLabel = "N", defaultValue = "1",
        description = "Distinct LoRA adapters one batch may hold; a request of another adapter waits (default: " +
            "${DEFAULT-VALUE}, as vLLM).")
    int maxLoras;

    @CommandLine.Option(names = "--frontend-delay", paramLabel = "DURATION", converter = Converters.DurationNs.class,
        description = "Modelled API-server time before the engine queues a request (tokenising, hand-over): it adds " +
            "to TTFT and E2E, not to queue time or token gaps (default: a profile file's, else 0).")
    Long frontendDelayNs;

    @CommandLine.Option(names = "--frontend-delay-jitter", paramLabel = "SIGMA",
        description = "How much the frontend delay varies between requests: log-normal with this sigma around " +
            "--frontend-delay's mean (a busy API server serves a few requests late), so the p99 TTFT spreads as a " +
            "real one does; 0 for a constant delay (default: the physics profile's, else 0).")
    Double frontendDelayJitter;

    @CommandLine.Option(names = "--seed", paramLabel = "N", defaultValue = "0",
        description = "Seed of every random draw; instance i uses seed + i (default: ${DEFAULT-VALUE}).")
    long seed;

    @CommandLine.Option(names = "--tokenizer", paramLabel = "FILE",
        description = "A Hugging Face tokenizer.json, so token counts match the served model " +
            "(default: the built-in o200k_base BPE).")
    Path tokenizerFile;

    @CommandLine.Mixin
    LatencyOptions latency = new LatencyOptions();

    /** Whether a profile's frontend delay applies without --frontend-delay (not behind a real API server). */
    private boolean modelledFrontend = true;

    /**
     * For an engine behind a real API server ({@code play}): no frontend delay unless {@code --frontend-delay} asks.
     *
     * @return this.
     */
    EngineOptions realFrontend()
    {
        modelledFrontend = false;
        return this;
    }

    /** The served model's name: its architecture sizes the KV cache and selects its measured or physics profile. */
    private String capacityModel;
    /** {@code --model-config} as read (once: every caller of the served architecture shares it), and its path. */
    private ModelArchitecture modelConfigArchitecture;
    private java.nio.file.Path modelConfigReadFrom;

    /**
     * @param model the model name whose built-in dimensions --gpu-memory-gb uses.
     * @return this.
     */
    public EngineOptions capacityModel(final String model)
    {
        capacityModel = model;
        latency.kvSettings(gpuMemoryUtilization, blockSize);
        return this;
    }

    /**
     * @return the KV-cache capacity in blocks: --kv-cache-size, or what GPU memory (--gpu-memory-gb, else the physics
     *     profile's GPU) leaves for the model's KV, or the default.
     */
    int kvCacheBlocks()
    {
        final RooflineProfile physics = latency.physicsInUse(capacityModel);
        if (null == gpuMemoryGb)
        {
            if (null != modelWeightsGb)
            {
                throw new IllegalArgumentException("--model-weights-gb needs --gpu-memory-gb");
            }
            if (null != kvCacheBlocks)
            {
                return kvCacheBlocks;
            }
            if (null != physics)
            {
                return KvCapacity.blocks(physics.model(), physics.gpu(), physics.tensorParallel(),
                    gpuMemoryUtilization, blockSize);
            }
            final LatencyOptions.LinearDeployment measured = latency.linearDeploymentInUse(capacityModel);
            return null == measured ? EngineConfig.DEFAULT_KV_CACHE_BLOCKS : KvCapacity.blocks(
                ModelArchitecture.lookup(capacityModel), dev.tapedeck.latency.GpuSpec.lookup(measured.gpu()),
                measured.tensorParallel(), gpuMemoryUtilization, blockSize);
        }
        if (null != kvCacheBlocks)
        {
            throw new IllegalArgumentException("give --kv-cache-size or --gpu-memory-gb, not both");
        }
        final ModelArchitecture model = null != physics ? physics.model() : ModelArchitecture.lookup(capacityModel);
        final LatencyOptions.LinearDeployment measured = latency.linearDeploymentInUse(capacityModel);
        final int tensorParallel = null != physics ? physics.tensorParallel() : null != measured ?
            measured.tensorParallel() : 1;
        if (null == model && (null == kvBytesPerToken || null == modelWeightsGb))
        {
            throw new IllegalArgumentException("--gpu-memory-gb: no built-in dimensions for model '" + capacityModel +
                "' (known: " + ModelArchitecture.knownNames() + "); give --kv-bytes-per-token and --model-weights-gb " +
                "or --model-config");
        }
        final long bytesPerToken = null != kvBytesPerToken ? kvBytesPerToken :
            (long)model.kvBytesPerTokenPerGpu(tensorParallel);
        final long weightsBytes = null != modelWeightsGb ? (long)(modelWeightsGb * 1e9) :
            model.weightBytesPerGpu(tensorParallel);
        return KvCapacity.blocks((long)(gpuMemoryGb * 1e9), gpuMemoryUtilization, weightsBytes,
            KvCapacity.DEFAULT_OVERHEAD_BYTES, bytesPerToken, blockSize);
    }

    /**
     * @return {@code --max-num-batched-tokens} as vLLM's step budget ({@link EngineConfig#stepBudget}).
     */
    int stepBudget(final int contextLength)
    {
        return EngineConfig.stepBudget(enableChunkedPrefill, maxNumBatchedTokens, contextLength);
    }

    /**
     * @param kvCacheBlocks the KV cache's capacity in blocks.
     * @return {@code --max-model-len}, else the served model's context length (what vLLM derives from its
     *     config.json) capped at what the KV cache holds, as vLLM's {@code --max-model-len auto} fits it (vLLM would
     *     refuse to start instead; a simulator sized by one flag should not), else {@link EngineConfig}'s default.
     */
    int maxModelLen(final int kvCacheBlocks)
    {
        if (null != maxModelLen)
        {
            return maxModelLen;
        }
        final ModelArchitecture model = servedArchitecture();
        if (null == model || 0 == model.contextLength())
        {
            return EngineConfig.DEFAULT_MAX_MODEL_LEN;
        }
        return (int)Math.max(2, Math.min(model.contextLength(), (long)kvCacheBlocks * blockSize));
    }

    /**
     * @return the served model's dimensions: the physics profile's model, else {@code --model-config}'s, else the
     *     built-in ones of {@code --model}; null when none is known.
     * @throws IllegalArgumentException naming the file when {@code --model-config} cannot be read.
     */
    private ModelArchitecture servedArchitecture()
    {
        final RooflineProfile physics = latency.physicsInUse(capacityModel);
        if (null != physics)
        {
            return physics.model();
        }
        if (null != latency.modelConfig)
        {
            if (!latency.modelConfig.equals(modelConfigReadFrom))
            {
                try
                {
                    modelConfigArchitecture = ModelArchitecture.read(latency.modelConfig);
                    modelConfigReadFrom = latency.modelConfig;
                }
                catch (final java.io.IOException ex)
                {
                    throw new IllegalArgumentException("--model-config " + latency.modelConfig + ": " +
                        ex.getMessage(), ex);
                }
            }
            return modelConfigArchitecture;
        }
        return ModelArchitecture.lookup(capacityModel);
    }

    /**
     * @return {@code --seed}.
     */
    public long seed()
    {
        return seed;
    }

    /**
     * The engine of a trace's replay ({@code inspect calibrate TRACE}): {@link #template()}, with the trace's
     * {@code max_num_seqs} and block size where {@code --max-num-seqs} and {@code --block-size} are not given (the
     * block size also sizes the KV cache from GPU memory).
     *
     * @param parsed the command line as parsed, which tells which flags were given.
     * @param traceMaxNumSeqs the trace's {@code max_num_seqs}, or null.
     * @param traceBlockSize the trace's {@code block_size}, or null.
     * @return the template, not concluded.
     * @throws IllegalArgumentException (one line) for flags the replay cannot use or that conflict.
     */
    public EngineConfig replayTemplate(final CommandLine.ParseResult parsed, final Long traceMaxNumSeqs,
        final Long traceBlockSize)
    {
        if (null != tokenizerFile)
        {
            throw new IllegalArgumentException("--tokenizer: a replay's prompts are token ids; it takes no tokenizer");
        }
        if (null != traceMaxNumSeqs && !parsed.hasMatchedOption("--max-num-seqs"))
        {
            maxNumSeqs = (int)Math.min(Integer.MAX_VALUE, traceMaxNumSeqs);
        }
        if (null != traceBlockSize && !parsed.hasMatchedOption("--block-size"))
        {
            blockSize = (int)Math.min(Integer.MAX_VALUE, traceBlockSize);
        }
        return template();
    }

    /**
     * @return the engines' template: every engine setting the flags give, seed {@code --seed}, not concluded (the
     *     product adds each engine's seed offset and token space).
     */
    private static double kvCacheMetricsSample(final boolean enabled, final double sample)
    {
        if (!(sample > 0 && sample <= 1))
        {
            throw new IllegalArgumentException("--kv-cache-metrics-sample must be in (0, 1], got " + sample);
        }
        return enabled ? sample : 0;
    }

    /**
     * @return the MFU estimate of the served model: the physics profile's model and tensor-parallel size, else
     *     {@code --model-config}'s or the built-in dimensions of {@code --model}.
     * @throws IllegalArgumentException when the model's dimensions are unknown.
     */
    private dev.tapedeck.metrics.MfuEstimate mfuEstimate()
    {
        final RooflineProfile physics = latency.physicsInUse(capacityModel);
        if (null != physics)
        {
            return new dev.tapedeck.metrics.MfuEstimate(physics.model(), physics.tensorParallel());
        }
        final LatencyOptions.LinearDeployment measured = latency.linearDeploymentInUse(capacityModel);
        final int tensorParallel = null != latency.tensorParallelSize ? latency.tensorParallelSize :
            null != measured ? measured.tensorParallel() : 1;
        final ModelArchitecture model = servedArchitecture();
        if (null == model)
        {
            throw new IllegalArgumentException("--enable-mfu-metrics: no built-in dimensions for model '" +
                capacityModel + "' (known: " + ModelArchitecture.knownNames() + "); give --model-config");
        }
        return new dev.tapedeck.metrics.MfuEstimate(model, tensorParallel);
    }

    EngineConfig template()
    {
        latency.checkConfigHash();
        final int kvBlocks = kvCacheBlocks();
        final int contextLength = maxModelLen(kvBlocks);
        return new EngineConfig()
            .kvOffload(offloadSettings())
            .maxNumSeqs(maxNumSeqs)
            .maxNumBatchedTokens(stepBudget(contextLength))
            .enableChunkedPrefill(enableChunkedPrefill)
            .maxModelLen(contextLength)
            .maxWaitingQueueLength(maxWaitingQueueLength)
            .longPrefillTokenThreshold(longPrefillTokenThreshold)
            .schedulingPolicy(schedulingPolicy)
            .blockSize(blockSize)
            .kvCacheBlocks(kvBlocks)
            .enablePrefixCaching(enablePrefixCaching)
            .kvCacheMetricsSample(kvCacheMetricsSample(kvCacheMetrics, kvCacheMetricsSample))
            .mfu(enableMfuMetrics ? mfuEstimate() : null)
            .prefixCachingHashSeed(prefixCachingHashSeed)
            .prefixCachingHashAlgo(null == prefixCachingHashAlgo ? BlockHashAlgo.SHA256_CBOR :
                BlockHashAlgo.of(prefixCachingHashAlgo))
            .maxLoras(maxLoras)
            .seed(seed)
            .frontendDelayNs(null != frontendDelayNs ? frontendDelayNs :
                modelledFrontend ? latency.frontendDelayNs(capacityModel) : 0)
            .frontendDelayJitter(null != frontendDelayJitter ? frontendDelayJitter :
                modelledFrontend ? latency.frontendDelayJitter(capacityModel) : 0)
            .latencyModel(latency.build(maxNumSeqs, stepBudget(contextLength), capacityModel))
            .speculativeDecoding(latency.speculativeDecoding())
            .tokenReplay(latency.tokenReplay())
            .stepReplay(latency.stepReplay());
    }

    /**
     * @return the GPUs one engine stands for: the physics profile's or the measured profile's tensor-parallel size,
     *     else {@code --tensor-parallel-size}, else 1.
     */
    int gpusPerEngine()
    {
        final RooflineProfile physics = latency.physicsInUse(capacityModel);
        final LatencyOptions.LinearDeployment measured = latency.linearDeploymentInUse(capacityModel);
        return null != physics ? physics.tensorParallel() : null != measured ? measured.tensorParallel() :
            null != latency.tensorParallelSize ? latency.tensorParallelSize : 1;
    }

    /**
     * @return the host KV tier the offloading flags describe, sized in the model's KV bytes on its GPUs, or null.
     */
    private dev.tapedeck.engine.KvOffloadSettings offloadSettings()
    {
        final RooflineProfile physics = latency.physicsInUse(capacityModel);
        final LatencyOptions.LinearDeployment measured = latency.linearDeploymentInUse(capacityModel);
        final ModelArchitecture model = servedArchitecture();
        final int tensorParallel = gpusPerEngine();
        final dev.tapedeck.latency.GpuSpec gpu = null != physics ? physics.gpu() : null != measured ?
            dev.tapedeck.latency.GpuSpec.lookup(measured.gpu()) : null != latency.gpu ?
            dev.tapedeck.latency.GpuSpec.lookup(latency.gpu) : null;
        return offload.settings(model, tensorParallel, kvBytesPerToken, gpu);
    }
}
