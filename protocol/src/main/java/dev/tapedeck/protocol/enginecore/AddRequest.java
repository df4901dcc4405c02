package dev.tapedeck.protocol.enginecore;

/**
 * The fields of an {@code EngineCoreRequest} (ADD) a simulated engine honours, filled by {@link AddRequestDecoder}.
 * Absent fields hold vLLM's defaults. Plain mutable data; one instance per decode, confined to the decoding thread.
 */
public final class AddRequest
{
    /** Marker for "not present". */
    public static final int ABSENT = Integer.MIN_VALUE;

    private static final int[] NO_TOKENS = new int[0];

    /** The frontend's internal request id (aborts and outputs use it). */
    public String requestId;
    /** Prompt token ids; empty when the request came as embeddings. */
    public int[] promptTokenIds = NO_TOKENS;
    /** True when the frontend sent prompt embeddings instead of ids. */
    public boolean hasPromptEmbeds;
    /** True when the request carries multimodal features (skipped). */
    public boolean hasMultimodal;
    /** True when the request is a pooling request, which a generating engine cannot serve. */
    public boolean isPooling;
    /** {@code SamplingParams.max_tokens} (default 16). */
    public int maxTokens = 16;
    /** {@code SamplingParams.min_tokens}. */
    public int minTokens;
    /** {@code SamplingParams.ignore_eos}. */
    public boolean ignoreEos;
    /** {@code SamplingParams.n}. */
    public int n = 1;
    /** {@code SamplingParams.seed}, or {@link #ABSENT}-equivalent when {@link #hasSeed} is false. */
    public long seed;
    /** True when a seed was given. */
    public boolean hasSeed;
    /** {@code SamplingParams.stop_token_ids}, or null. */
    public int[] stopTokenIds;
    /** {@code SamplingParams.logprobs}, or {@link #ABSENT}. */
    public int logprobs = ABSENT;
    /** End-of-sequence token: the request's {@code eos_token_id} (old lines) or {@code _eos_token_id}. */
    public int eosTokenId = ABSENT;
    /** Raw msgpack of {@code extra_args.kv_transfer_params}, or null. */
    public byte[] kvTransferParams;
    /** LoRA adapter name, or null. */
    public String loraName;
    /** LoRA adapter id, or 0. */
    public int loraId;
    /** {@code cache_salt}, or null. */
    public String cacheSalt;
    /** {@code data_parallel_rank}, or {@link #ABSENT}. */
    public int dataParallelRank = ABSENT;
    /** Which of the frontend's output sockets the request's outputs go to. */
    public int clientIndex;
    /** Data-parallel wave. */
    public int currentWave;
    /** Scheduling priority (smaller first). */
    public int priority;
    /** Frontend wall-clock arrival time, seconds. */
    public double arrivalTime;

    /**
     * Reset every field to its default, for reuse.
     *
     * @return this.
     */
    public AddRequest clear()
    {
        requestId = null;
        promptTokenIds = NO_TOKENS;
        hasPromptEmbeds = false;
        hasMultimodal = false;
        isPooling = false;
        maxTokens = 16;
        minTokens = 0;
        ignoreEos = false;
        n = 1;
        seed = 0;
        hasSeed = false;
        stopTokenIds = null;
        logprobs = ABSENT;
        eosTokenId = ABSENT;
        kvTransferParams = null;
        loraName = null;
        loraId = 0;
        cacheSalt = null;
        dataParallelRank = ABSENT;
        clientIndex = 0;
        currentWave = 0;
        priority = 0;
        arrivalTime = 0;
        return this;
    }
}
