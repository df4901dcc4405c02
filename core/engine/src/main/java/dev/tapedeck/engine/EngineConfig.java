package dev.tapedeck.engine;

import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kv.KvEventSink;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.workload.OutputLengthDistribution;

/**
 * Everything an {@link Engine} is built from, with vLLM's defaults. Fluent setters; {@link #conclude()} validates all
 * values at once and must be called before the engine is built. One instance per engine: do not share a config
 * between engines (each takes its own seed).
 */
public final class EngineConfig
{
    /** vLLM's default {@code --max-num-seqs}. */
    public static final int DEFAULT_MAX_NUM_SEQS = 256;
    /** vLLM's default {@code --max-num-batched-tokens} for online serving on a large GPU. */
    public static final int DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192;
    /** Default context length. */
    public static final int DEFAULT_MAX_MODEL_LEN = 8192;
    /** Default bound of the waiting queue (vLLM has none; a bound turns overload into 429s instead of memory). */
    public static final int DEFAULT_MAX_WAITING_QUEUE_LENGTH = 16384;
    /** vLLM's default KV block size in tokens. */
    public static final int DEFAULT_BLOCK_SIZE = 16;
    /**
     * Default KV capacity in blocks: an 8B model with 128 KiB of KV per token in the 70 GB a 96 GB GPU leaves at 0.9
     * memory utilisation.
     */
    public static final int DEFAULT_KV_CACHE_BLOCKS = 33_600;
    /** vLLM's default {@code --max-loras}: distinct LoRA adapters one batch may hold. */
    public static final int DEFAULT_MAX_LORAS = 1;

    private int maxNumSeqs = DEFAULT_MAX_NUM_SEQS;
    private int maxNumBatchedTokens = DEFAULT_MAX_NUM_BATCHED_TOKENS;
    private int maxModelLen = DEFAULT_MAX_MODEL_LEN;
    private int maxWaitingQueueLength = DEFAULT_MAX_WAITING_QUEUE_LENGTH;
    private int longPrefillTokenThreshold;
    private boolean enableChunkedPrefill = true;
    private SchedulingPolicy schedulingPolicy = SchedulingPolicy.FCFS;
    private int blockSize = DEFAULT_BLOCK_SIZE;
    private int kvCacheBlocks = DEFAULT_KV_CACHE_BLOCKS;
    private boolean enablePrefixCaching = true;
    private String prefixCachingHashSeed = BlockHasher.DEFAULT_SEED;
    private BlockHashAlgo prefixCachingHashAlgo = BlockHashAlgo.SHA256_CBOR;
    private int maxLoras = DEFAULT_MAX_LORAS;
    private dev.tapedeck.metrics.MfuEstimate mfu;
    private double kvCacheMetricsSample;
    private long seed;
    private long frontendDelayNs;
    private double frontendDelayJitter;
    private LatencyModel latencyModel = new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000);
    private RequestObserver requestObserver;
    private KvEventSink kvEventSink;
    private KvConnector kvConnector;
    private KvOffloadSettings kvOffload;
    private OutputLengthDistribution outputLengths = OutputLengthDistribution.MOONCAKE_CONVERSATION;
    private int[] randomTokenIds = {0};
    private int eosTokenId;
    private SpeculativeDecoding speculativeDecoding;
    private TokenReplay tokenReplay;
    private StepReplay stepReplay;
    private boolean concluded;

    /**
     * @param value running-set cap.
     * @return this.
     */
    public EngineConfig maxNumSeqs(final int value)
    {
        maxNumSeqs = value;
        return this;
    }

    /**
     * @return running-set cap.
     */
    public int maxNumSeqs()
    {
        return maxNumSeqs;
    }

    /**
     * @param value per-step token budget.
     * @return this.
     */
    public EngineConfig maxNumBatchedTokens(final int value)
    {
        maxNumBatchedTokens = value;
        return this;
    }

    /**
     * vLLM's step budget: {@code --max-num-batched-tokens}, raised to the context length without chunked prefill
     * (vLLM's engine arguments do the same, so that any prompt fits in one step).
     *
     * @param chunkedPrefill {@code --enable-chunked-prefill}.
     * @param maxNumBatchedTokens {@code --max-num-batched-tokens}.
     * @param contextLength {@code --max-model-len}.
     * @return the per-step token budget.
     */
    public static int stepBudget(final boolean chunkedPrefill, final int maxNumBatchedTokens, final int contextLength)
    {
        return chunkedPrefill ? maxNumBatchedTokens : Math.max(maxNumBatchedTokens, contextLength);
    }

    /**
     * @return per-step token budget.
     */
    public int maxNumBatchedTokens()
    {
        return maxNumBatchedTokens;
    }

    /**
     * @param value context length: prompt plus output tokens.
     * @return this.
     */
    public EngineConfig maxModelLen(final int value)
    {
        maxModelLen = value;
        return this;
    }

    /**
     * @return context length.
     */
    public int maxModelLen()
    {
        return maxModelLen;
    }

    /**
     * @param value waiting requests beyond which new ones are refused.
     * @return this.
     */
    public EngineConfig maxWaitingQueueLength(final int value)
    {
        maxWaitingQueueLength = value;
        return this;
    }

    /**
     * @return waiting-queue bound.
     */
    public int maxWaitingQueueLength()
    {
        return maxWaitingQueueLength;
    }

    /**
     * @param value largest prefill chunk one request may take per step; 0 means no cap.
     * @return this.
     */
    public EngineConfig longPrefillTokenThreshold(final int value)
    {
        longPrefillTokenThreshold = value;
        return this;
    }

    /**
     * @return per-request chunk cap, 0 for none.
     */
    public int longPrefillTokenThreshold()
    {
        return longPrefillTokenThreshold;
    }

    /**
     * @param value true (vLLM's default) to split a prompt over steps by what is left of the token budget; false to
     *     admit a waiting request only when its whole uncached prompt fits in what is left of the step's budget
     *     ({@code --no-enable-chunked-prefill}), which then must hold {@code --max-model-len}.
     * @return this.
     */
    public EngineConfig enableChunkedPrefill(final boolean value)
    {
        enableChunkedPrefill = value;
        return this;
    }

    /**
     * @return true when prompts are prefilled in chunks.
     */
    public boolean enableChunkedPrefill()
    {
        return enableChunkedPrefill;
    }

    /**
     * @param value admission order.
     * @return this.
     */
    public EngineConfig schedulingPolicy(final SchedulingPolicy value)
    {
        schedulingPolicy = value;
        return this;
    }

    /**
     * @return admission order.
     */
    public SchedulingPolicy schedulingPolicy()
    {
        return schedulingPolicy;
    }

    /**
     * @param value KV block size in tokens.
     * @return this.
     */
    public EngineConfig blockSize(final int value)
    {
        blockSize = value;
        return this;
    }

    /**
     * @return KV block size in tokens.
     */
    public int blockSize()
    {
        return blockSize;
    }

    /**
     * @param value KV capacity in blocks.
     * @return this.
     */
    public EngineConfig kvCacheBlocks(final int value)
    {
        kvCacheBlocks = value;
        return this;
    }

    /**
     * @return KV capacity in blocks.
     */
    public int kvCacheBlocks()
    {
        return kvCacheBlocks;
    }

    /**
     * @param value whether full prompt blocks are cached and shared by their hash ({@code --enable-prefix-caching}).
     * @return this.
     */
    public EngineConfig enablePrefixCaching(final boolean value)
    {
        enablePrefixCaching = value;
        return this;
    }

    /**
     * @return whether prefix caching is on.
     */
    public boolean enablePrefixCaching()
    {
        return enablePrefixCaching;
    }

    /**
     * @param value the root seed of the block hash chain, the string vLLM takes from {@code PYTHONHASHSEED}.
     * @return this.
     */
    public EngineConfig prefixCachingHashSeed(final String value)
    {
        prefixCachingHashSeed = value;
        return this;
    }

    /**
     * @return the root seed of the block hash chain.
     */
    public String prefixCachingHashSeed()
    {
        return prefixCachingHashSeed;
    }

    /**
     * @param value the block hash function, vLLM's {@code --prefix-caching-hash-algo} (default {@code sha256_cbor}).
     * @return this.
     */
    public EngineConfig prefixCachingHashAlgo(final BlockHashAlgo value)
    {
        prefixCachingHashAlgo = value;
        return this;
    }

    /**
     * @return the block hash function.
     */
    public BlockHashAlgo prefixCachingHashAlgo()
    {
        return prefixCachingHashAlgo;
    }

    /**
     * @param value distinct LoRA adapters the running set may hold ({@code --max-loras}); a waiting request of
     *     another adapter waits while that many run.
     * @return this.
     */
    public EngineConfig maxLoras(final int value)
    {
        maxLoras = value;
        return this;
    }

    /**
     * @return distinct LoRA adapters the running set may hold.
     */
    public int maxLoras()
    {
        return maxLoras;
    }

    /**
     * @param value what the modelled API server takes before the engine queues a request (tokenising, handing it over;
     *     BLIS's arrival-to-queue overhead), in nanoseconds; 0 (the default) for none. It adds to TTFT and E2E, not to
     *     the engine's queue time or the gaps between tokens. Its mean, when {@link #frontendDelayJitter} varies it.
     * @return this.
     */
    public EngineConfig frontendDelayNs(final long value)
    {
        frontendDelayNs = value;
        return this;
    }

    /**
     * @param sigma how much the frontend delay varies from request to request: each request's is the mean times
     *     {@code exp(sigma z - sigma^2 / 2)}, {@code z} a standard normal draw from the request's seeded generator (a
     *     log-normal with that mean: most requests a little under it, a few well over, as a busy API server's event
     *     loop serves them); 0 (the default) for a constant delay. Requests reach the waiting queue in the order of
     *     their delays' ends, as vLLM's engine receives them.
     * @return this.
     */
    public EngineConfig frontendDelayJitter(final double sigma)
    {
        frontendDelayJitter = sigma;
        return this;
    }

    /**
     * @return the log-normal sigma of the frontend delay, 0 for a constant one.
     */
    public double frontendDelayJitter()
    {
        return frontendDelayJitter;
    }

    /**
     * @return the modelled API server's time before the engine queues a request, in nanoseconds.
     */
    public long frontendDelayNs()
    {
        return frontendDelayNs;
    }

    /**
     * @param value the KV connector of prefill/decode disaggregation ({@code --kv-transfer-config}), or null for none.
     *     Called on the engine's thread; one connector per engine, like the KV event sink.
     * @return this.
     */
    public EngineConfig kvConnector(final KvConnector value)
    {
        kvConnector = value;
        return this;
    }

    /**
     * @return the KV connector, or null.
     */
    public KvConnector kvConnector()
    {
        return kvConnector;
    }

    /**
     * @param value a KV tier in host memory behind the GPU's (vLLM's offloading connector), or null for none; each
     *     engine built from this configuration gets a tier of its own.
     * @return this.
     */
    public EngineConfig kvOffload(final KvOffloadSettings value)
    {
        kvOffload = value;
        return this;
    }

    /**
     * @return the host KV tier's settings, or null.
     */
    public KvOffloadSettings kvOffload()
    {
        return kvOffload;
    }

    /**
     * @param value where the engine reports KV-cache events (blocks stored, removed, cleared; one batch per step), or
     *     null for none. Called on the engine's thread; one sink per engine.
     * @return this.
     */
    public EngineConfig kvEventSink(final KvEventSink value)
    {
        kvEventSink = value;
        return this;
    }

    /**
     * @return where KV-cache events go, or null.
     */
    public KvEventSink kvEventSink()
    {
        return kvEventSink;
    }

    /**
     * @param value seed of every draw the engine makes.
     * @return this.
     */
    public EngineConfig seed(final long value)
    {
        seed = value;
        return this;
    }

    /**
     * @return the seed.
     */
    public long seed()
    {
        return seed;
    }

    /**
     * @param value vLLM's {@code --kv-cache-metrics-sample} when {@code --kv-cache-metrics} is on: the share of
     *     allocated KV blocks whose lifetime, idle time and reuse gaps are measured, in (0, 1]; 0 for off.
     * @return this.
     */
    public EngineConfig kvCacheMetricsSample(final double value)
    {
        kvCacheMetricsSample = value;
        return this;
    }

    /**
     * @return the share of KV blocks followed for residency metrics, 0 when off.
     */
    public double kvCacheMetricsSample()
    {
        return kvCacheMetricsSample;
    }

    /**
     * @param value vLLM's {@code --enable-mfu-metrics}: the model's FLOPs and bytes estimate per step, or null for
     *     none.
     * @return this.
     */
    public EngineConfig mfu(final dev.tapedeck.metrics.MfuEstimate value)
    {
        mfu = value;
        return this;
    }

    /**
     * @return the engine's metrics, with what this configuration turns on: speculative decoding's,
     *     {@code --kv-cache-metrics}, {@code --enable-mfu-metrics}.
     */
    dev.tapedeck.metrics.EngineMetrics newMetrics()
    {
        final dev.tapedeck.metrics.EngineMetrics metrics = new dev.tapedeck.metrics.EngineMetrics(maxModelLen);
        if (null != speculativeDecoding)
        {
            metrics.enableSpecDecode(speculativeDecoding.numSpeculativeTokens());
        }
        if (kvCacheMetricsSample > 0)
        {
            metrics.enableKvCacheMetrics();
        }
        if (null != mfu)
        {
            metrics.enableMfu(mfu);
        }
        return metrics;
    }

    /**
     * @param value speculative decoding ({@code --speculative-config}), or null for none.
     * @return this.
     */
    public EngineConfig speculativeDecoding(final SpeculativeDecoding value)
    {
        speculativeDecoding = value;
        return this;
    }

    /**
     * @return speculative decoding, or null when off.
     */
    public SpeculativeDecoding speculativeDecoding()
    {
        return speculativeDecoding;
    }

    /**
     * @return draft tokens per decoding request and step, 0 without speculative decoding.
     */
    public int numSpeculativeTokens()
    {
        return null == speculativeDecoding ? 0 : speculativeDecoding.numSpeculativeTokens();
    }

    /**
     * @param value recorded outputs to serve for matching prompts ({@code --replay-tokens}), or null.
     * @return this.
     */
    public EngineConfig tokenReplay(final TokenReplay value)
    {
        tokenReplay = value;
        return this;
    }

    /**
     * @return recorded outputs served for matching prompts, or null.
     */
    public TokenReplay tokenReplay()
    {
        return tokenReplay;
    }

    /**
     * @param value recorded steps to serve to matching requests ({@code --replay-steps}), or null.
     * @return this.
     */
    public EngineConfig stepReplay(final StepReplay value)
    {
        stepReplay = value;
        return this;
    }

    /**
     * @return recorded steps served to matching requests, or null.
     */
    public StepReplay stepReplay()
    {
        return stepReplay;
    }

    /**
     * @param value the latency model.
     * @return this.
     */
    public EngineConfig latencyModel(final LatencyModel value)
    {
        latencyModel = value;
        return this;
    }

    /**
     * @return the latency model.
     */
    public LatencyModel latencyModel()
    {
        return latencyModel;
    }

    /**
     * @param value who watches requests go through the engine (a trace capture), or null for nobody.
     * @return this.
     */
    public EngineConfig requestObserver(final RequestObserver value)
    {
        requestObserver = value;
        return this;
    }

    /**
     * @return who watches requests go through the engine, or null.
     */
    public RequestObserver requestObserver()
    {
        return requestObserver;
    }

    /**
     * @param value how long unbounded answers are.
     * @return this.
     */
    public EngineConfig outputLengths(final OutputLengthDistribution value)
    {
        outputLengths = value;
        return this;
    }

    /**
     * @return how long unbounded answers are.
     */
    public OutputLengthDistribution outputLengths()
    {
        return outputLengths;
    }

    /**
     * @param ids token ids random output is drawn from (not copied).
     * @param eosId the end-of-sequence token id that ends a naturally stopping answer.
     * @return this.
     */
    public EngineConfig tokenSpace(final int[] ids, final int eosId)
    {
        randomTokenIds = ids;
        eosTokenId = eosId;
        return this;
    }

    /**
     * @return token ids random output is drawn from.
     */
    public int[] randomTokenIds()
    {
        return randomTokenIds;
    }

    /**
     * @return the end-of-sequence token id.
     */
    public int eosTokenId()
    {
        return eosTokenId;
    }

    /**
     * A copy of every setting, not concluded: how one template becomes the configs of many engines. The request
     * observer and the KV event sink are copied as references, so every copy shares them (a recorder is meant to be
     * shared; a KV event sink or connector is not, see {@link #kvEventSink(KvEventSink)}).
     *
     * @return the copy.
     */
    public EngineConfig copy()
    {
        final EngineConfig copy = new EngineConfig();
        copy.maxNumSeqs = maxNumSeqs;
        copy.maxNumBatchedTokens = maxNumBatchedTokens;
        copy.maxModelLen = maxModelLen;
        copy.maxWaitingQueueLength = maxWaitingQueueLength;
        copy.longPrefillTokenThreshold = longPrefillTokenThreshold;
        copy.enableChunkedPrefill = enableChunkedPrefill;
        copy.schedulingPolicy = schedulingPolicy;
        copy.blockSize = blockSize;
        copy.kvCacheBlocks = kvCacheBlocks;
        copy.enablePrefixCaching = enablePrefixCaching;
        copy.prefixCachingHashSeed = prefixCachingHashSeed;
        copy.prefixCachingHashAlgo = prefixCachingHashAlgo;
        copy.kvCacheMetricsSample = kvCacheMetricsSample;
        copy.mfu = mfu;
        copy.maxLoras = maxLoras;
        copy.seed = seed;
        copy.frontendDelayNs = frontendDelayNs;
        copy.frontendDelayJitter = frontendDelayJitter;
        copy.latencyModel = latencyModel;
        copy.outputLengths = outputLengths;
        copy.randomTokenIds = randomTokenIds;
        copy.eosTokenId = eosTokenId;
        copy.requestObserver = requestObserver;
        copy.kvEventSink = kvEventSink;
        copy.kvConnector = kvConnector;
        copy.kvOffload = kvOffload;
        copy.speculativeDecoding = speculativeDecoding;
        copy.tokenReplay = tokenReplay;
        copy.stepReplay = stepReplay;
        return copy;
    }

    /**
     * Validate every value; fails with all problems in one message.
     *
     * @return this.
     * @throws IllegalArgumentException listing every invalid setting.
     */
    public EngineConfig conclude()
    {
        final StringBuilder problems = new StringBuilder();
        check(problems, maxNumSeqs >= 1, "--max-num-seqs must be >= 1");
        check(problems, maxNumBatchedTokens >= 1, "--max-num-batched-tokens must be >= 1");
        check(problems, maxModelLen >= 2, "--max-model-len must be >= 2");
        check(problems, kvCacheMetricsSample >= 0 && kvCacheMetricsSample <= 1,
            "--kv-cache-metrics-sample must be in (0, 1]");
        check(problems, maxWaitingQueueLength >= 0, "--max-waiting-queue-length must be >= 0");
        check(problems, longPrefillTokenThreshold >= 0, "--long-prefill-token-threshold must be >= 0");
        check(problems, enableChunkedPrefill || maxNumBatchedTokens >= maxModelLen, "max_num_batched_tokens (" +
            maxNumBatchedTokens + ") is smaller than max_model_len (" + maxModelLen + "): without chunked prefill a " +
            "step must hold a whole prompt; raise --max-num-batched-tokens or lower --max-model-len");
        check(problems, frontendDelayNs >= 0, "--frontend-delay must not be negative");
        check(problems, frontendDelayJitter >= 0 && frontendDelayJitter <= 2,
            "--frontend-delay-jitter must be within [0, 2], got " + frontendDelayJitter);
        check(problems, blockSize >= 1, "--block-size must be >= 1");
        check(problems, kvCacheBlocks >= 1, "--kv-cache-size must be >= 1");
        check(problems, null != prefixCachingHashSeed, "the prefix-caching hash seed is missing");
        check(problems, null != prefixCachingHashAlgo, "the prefix-caching hash algorithm is missing");
        check(problems, maxLoras >= 1, "--max-loras must be >= 1");
        final long blocksPerSequence = ((long)maxModelLen + Math.max(blockSize, 1) - 1) / Math.max(blockSize, 1);
        check(problems, kvCacheBlocks < 1 || blockSize < 1 || blocksPerSequence <= kvCacheBlocks,
            "--max-model-len " + maxModelLen + " needs " + blocksPerSequence + " KV blocks of " + blockSize +
            " tokens but the KV cache holds " + kvCacheBlocks + " blocks (--kv-cache-size, or what the GPU's memory " +
            "leaves): raise --kv-cache-size or lower --max-model-len (vLLM refuses to start in this case too)");
        check(problems, null != latencyModel, "a latency model is required");
        check(problems, null == kvOffload || null == kvConnector, "one KV connector per engine: the CPU offloading " +
            "tier and prefill/decode disaggregation (vLLM's MultiConnector) are not modelled together");
        if (null != kvOffload && blockSize >= 1)
        {
            try
            {
                kvOffload.capacityBlocks(blockSize);
            }
            catch (final IllegalArgumentException ex)
            {
                check(problems, false, ex.getMessage());
            }
        }
        if (null == speculativeDecoding && null != stepReplay && stepReplay.numSpecTokens() > 0)
        {
            speculativeDecoding = SpeculativeDecoding.recorded(stepReplay.numSpecTokens());
        }
        if (null == speculativeDecoding && null != latencyModel && latencyModel.speculativeTokens() > 0)
        {
            speculativeDecoding = SpeculativeDecoding.recorded(latencyModel.speculativeTokens());
        }
        check(problems, null != randomTokenIds && randomTokenIds.length > 0, "the token space is empty");
        if (problems.length() > 0)
        {
            throw new IllegalArgumentException(problems.toString());
        }
        concluded = true;
        return this;
    }

    boolean isConcluded()
    {
        return concluded;
    }

    private static void check(final StringBuilder problems, final boolean ok, final String message)
    {
        if (!ok)
        {
            problems.append(problems.length() > 0 ? "; " : "").append(message);
        }
    }
}
