package dev.tapedeck.engine;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.lora.LoraAdapter;
import dev.tapedeck.metrics.EngineMetrics;

/**
 * One generation request as the engine core sees it: prompt token ids and sampling limits in, token ids and a finish
 * reason out. A face (HTTP, engine-core wire) fills the inputs, {@link Engine#submit(Request, long) submits} it, and
 * is told of every token and of the finish through its {@link OutputSink}.
 * <p>
 * <b>Threading</b>: confined to the engine's thread once submitted; the face reads it from the same thread in its
 * sink callbacks. Inputs must not change after submission.
 */
public final class Request implements EngineMetrics.RequestTiming
{
    /** Marker for "the client did not set max_tokens". */
    public static final int UNSET = -1;

    enum State
    {
        /** LOADING: blocks allocated, KV being pulled from a remote engine (vLLM's WAITING_FOR_REMOTE_KVS). */
        NEW, WAITING, LOADING, PREFILL, HELD, DECODE, FINISHED
    }

    private final String requestId;
    private final int[] promptTokenIds;
    /** {@code promptTokenIds.length}, kept beside the fields every step reads (the array is a cache miss away). */
    private final int promptLength;
    private int maxTokens = UNSET;
    private int minTokens;
    private boolean ignoreEos;
    private int[] stopTokenIds;
    private int priority;
    private long seed;
    private boolean seeded;
    private int[] fixedOutputTokenIds;
    private boolean fixedOutputEndsWithEos;
    private int[] tokenPool;
    private int eosTokenId = -1;
    private long arrivalNs;
    private Object attachment;
    private Object observation;
    private int parallelN = 1;
    private Request firstSibling;
    private String cacheSalt;
    private byte[] cacheSaltUtf8;
    private dev.tapedeck.kv.MediaSpans media;
    private LoraAdapter lora;
    private KvTransferParams kvTransferParams;
    private KvTransferParams kvTransferResult;

    // engine-owned state
    State state = State.NEW;
    long arrivalSequence;
    int outputLimit;
    FinishReason limitFinishReason;
    boolean endsWithEos;
    int numCachedTokens;
    int numComputedTokens;
    int numOutputTokens;
    int lastTokenId = -1;
    int preemptions;
    int[] blockTable;
    int numBlocks;
    int numRegisteredBlocks;
    /** {@code blockHashes.length} (0 without), set when the engine takes the request: read without the array. */
    int numHashedBlocks;
    long[] blockHashes;
    long holdTimerId = -1;
    long firstTokenDelayNs;
    long firstTokenOverheadNs;
    /** When a request held for its first token is due (set when its prefill ends). */
    long firstTokenDueNs;
    long queuedNs;
    long scheduledNs;
    long firstTokenNs;
    long lastTokenNs;
    long finishedNs;
    /** Prompt tokens pulled from a remote engine (P/D), part of {@link #numCachedTokens}. */
    int numExternalTokens;
    /** The KV connector was asked about this request (once, at its first admission, as vLLM asks). */
    boolean kvConnectorAsked;
    /** An asynchronous pull is writing into this request's blocks: they are freed only when it ends. */
    boolean loadInFlight;
    long loadTimerId = -1;
    FinishReason finishReason;
    /** The request's draws (token ids, lengths, jitter), reseeded by {@link Engine#submit}. */
    final SeededRandom random = new SeededRandom(0);
    /** {@code --replay-tokens}: the recorded output of this prompt, or null. */
    int[] recordedTokenIds;
    FinishReason recordedFinish;
    /** {@code --replay-steps}: tokens of the first output, and the recorded decode steps (null when unmatched). */
    int firstChunkTokens = 1;
    long[] stepGapsNs;
    int[] stepTokens;
    int stepCursor;
    /** A pacing latency model's state for this request ({@code --latency-trace}), or null; tokens of its step. */
    dev.tapedeck.latency.DecodePacing pacing;
    int pacedTokens = 1;
    /** Speculative draft tokens scheduled with each decode of this request (0 without speculative decoding). */
    int draftTokens;

    /**
     * @param requestId the id the client or frontend knows the request by.
     * @param promptTokenIds the prompt's token ids (not copied; the caller hands it over).
     */
    public Request(final String requestId, final int[] promptTokenIds)
    {
        this.requestId = requestId;
        this.promptTokenIds = promptTokenIds;
        this.promptLength = promptTokenIds.length;
    }

    /**
     * @return the request id.
     */
    public String requestId()
    {
        return requestId;
    }

    /**
     * @return the prompt token ids (do not modify).
     */
    public int[] promptTokenIds()
    {
        return promptTokenIds;
    }

    /**
     * @return prompt length in tokens.
     */
    public int promptLength()
    {
        return promptLength;
    }

    /**
     * @param value {@code max_tokens}, or {@link #UNSET}.
     * @return this.
     */
    public Request maxTokens(final int value)
    {
        maxTokens = value;
        return this;
    }

    /**
     * @return {@code max_tokens} as given, or {@link #UNSET}.
     */
    @Override
    public int maxTokens()
    {
        return maxTokens;
    }

    /**
     * @param value {@code min_tokens}: no end of sequence before this many tokens.
     * @return this.
     */
    public Request minTokens(final int value)
    {
        minTokens = value;
        return this;
    }

    /**
     * @return {@code min_tokens}.
     */
    public int minTokens()
    {
        return minTokens;
    }

    /**
     * @param value {@code ignore_eos}: generate until the length limit.
     * @return this.
     */
    public Request ignoreEos(final boolean value)
    {
        ignoreEos = value;
        return this;
    }

    /**
     * @return {@code ignore_eos}.
     */
    public boolean ignoreEos()
    {
        return ignoreEos;
    }

    /**
     * @param ids {@code stop_token_ids}, or null.
     * @return this.
     */
    public Request stopTokenIds(final int[] ids)
    {
        stopTokenIds = ids;
        return this;
    }

    /**
     * @param value scheduling priority; smaller is more urgent (vLLM semantics).
     * @return this.
     */
    public Request priority(final int value)
    {
        priority = value;
        return this;
    }

    /**
     * @return scheduling priority.
     */
    public int priority()
    {
        return priority;
    }

    /**
     * @param value the request's own sampling seed; without one the engine derives it from its seed.
     * @return this.
     */
    public Request seed(final long value)
    {
        seed = value;
        seeded = true;
        return this;
    }

    /**
     * @param value the request's {@code cache_salt} (mixed into its first block's hash, so only requests with the
     *     same salt share its prefix), or null.
     * @return this.
     */
    public Request cacheSalt(final String value)
    {
        cacheSalt = value;
        cacheSaltUtf8 = null == value ? null : value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return this;
    }

    /**
     * Hand over the prompt's block hashes, computed by the caller so the engine does not hash the prompt again: they
     * must be what the engine's own hasher gives this prompt, {@code new BlockHasher(seed, algo).blockHashes(prompt,
     * blockSize, lora name, cache salt)} with the engine's {@code --prefix-caching-hash-seed},
     * {@code --prefix-caching-hash-algo} and {@code --block-size} ({@code BlockHasher.continueChain} hashes a prompt
     * whose first blocks another prompt shares only once). Ignored without prefix caching.
     *
     * @param hashes the low 64 bits of each full prompt block's digest, in order (not copied).
     * @return this.
     */
    public Request blockHashes(final long[] hashes)
    {
        blockHashes = hashes;
        return this;
    }

    /**
     * @return the request's {@code cache_salt}, or null.
     */
    public String cacheSalt()
    {
        return cacheSalt;
    }

    /**
     * @param value where the prompt's images, audio and videos sit among its tokens (their identifiers are extra keys
     *     of the blocks they touch, in the block hashes and the KV events), or null for a text prompt.
     * @return this.
     */
    public Request media(final dev.tapedeck.kv.MediaSpans value)
    {
        media = value;
        return this;
    }

    /**
     * @return where the prompt's media sit, or null for a text prompt.
     */
    public dev.tapedeck.kv.MediaSpans media()
    {
        return media;
    }

    /**
     * @param value the LoRA adapter the request runs with (its name is an extra key of every block hash, KV events
     *     carry its id and name, and {@code --max-loras} caps the distinct adapters of a batch), or null for the base
     *     model.
     * @return this.
     */
    public Request lora(final LoraAdapter value)
    {
        lora = value;
        return this;
    }

    /**
     * @return the request's LoRA adapter, or null for the base model.
     */
    public LoraAdapter lora()
    {
        return lora;
    }

    /**
     * A fixed output instead of drawn tokens: echo mode's echoed prompt, or the frontend's structured output (a tool
     * call's or a JSON schema's text, tokenized). The request produces these tokens in order, at most
     * {@code max_tokens} of them (then it finishes with {@code length}), and then stops.
     *
     * @param ids the output's token ids (at least one), or null for drawn tokens.
     * @param thenEos true to end with the end-of-sequence token, counted as an output token and carrying no text (as
     *     a model's structured output ends), false to stop after the last id (echo).
     * @return this.
     */
    public Request fixedOutput(final int[] ids, final boolean thenEos)
    {
        fixedOutputTokenIds = ids;
        fixedOutputEndsWithEos = thenEos;
        return this;
    }

    /**
     * @param ids token ids this request's random output is drawn from instead of the engine's (e.g. its own prompt,
     *     when the frontend's tokenizer is unknown), or null.
     * @return this.
     */
    public Request tokenPool(final int[] ids)
    {
        tokenPool = ids;
        return this;
    }

    /**
     * @param id the end-of-sequence token this request ends with when it stops naturally, instead of the engine's.
     * @return this.
     */
    public Request eosTokenId(final int id)
    {
        eosTokenId = id;
        return this;
    }

    /**
     * @param nowNs when the request reached the server, on the engine's clock.
     * @return this.
     */
    public Request arrivalNs(final long nowNs)
    {
        arrivalNs = nowNs;
        return this;
    }

    /**
     * @return when the request reached the server.
     */
    @Override
    public long arrivalNs()
    {
        return arrivalNs;
    }

    /**
     * @param value the face's per-request state (a stream, a client index).
     * @return this.
     */
    public Request attachment(final Object value)
    {
        attachment = value;
        return this;
    }

    /**
     * @return the face's per-request state.
     */
    public Object attachment()
    {
        return attachment;
    }

    /**
     * @param value a {@link RequestObserver}'s per-request state.
     * @return this.
     */
    public Request observation(final Object value)
    {
        observation = value;
        return this;
    }

    /**
     * @return a {@link RequestObserver}'s per-request state.
     */
    public Object observation()
    {
        return observation;
    }

    /**
     * Mark a request that never entered an engine as finished (refused before submission), so a face can report it
     * through the same path as any other finish.
     *
     * @param reason why it ended.
     * @param nowNs when.
     * @throws IllegalStateException if the request was submitted.
     */
    public void refuse(final FinishReason reason, final long nowNs)
    {
        if (State.NEW != state)
        {
            throw new IllegalStateException(requestId + " was already submitted");
        }
        state = State.FINISHED;
        finishReason = reason;
        finishedNs = nowNs;
    }

    /**
     * @return tokens generated so far.
     */
    public int numOutputTokens()
    {
        return numOutputTokens;
    }

    /**
     * @return prompt tokens served from the prefix cache.
     */
    public int numCachedTokens()
    {
        return numCachedTokens;
    }

    /**
     * @return the last generated token id, or -1.
     */
    public int lastTokenId()
    {
        return lastTokenId;
    }

    /**
     * @return the finish reason, or null while the request runs.
     */
    public FinishReason finishReason()
    {
        return finishReason;
    }

    /**
     * @return true once finished (any reason).
     */
    public boolean isFinished()
    {
        return State.FINISHED == state;
    }

    /**
     * @return when the engine first scheduled the request, 0 if never.
     */
    @Override
    public long scheduledNs()
    {
        return scheduledNs;
    }

    /**
     * @return when the request entered the waiting queue.
     */
    @Override
    public long queuedNs()
    {
        return queuedNs;
    }

    /**
     * @return when the first token was emitted, 0 if none yet.
     */
    @Override
    public long firstTokenNs()
    {
        return firstTokenNs;
    }

    /**
     * @return when the last token was emitted, 0 if none yet.
     */
    @Override
    public long lastTokenNs()
    {
        return lastTokenNs;
    }

    /**
     * @return when the request finished, 0 if it has not.
     */
    @Override
    public long finishedNs()
    {
        return finishedNs;
    }

    /**
     * @return true when the last token generated is the emulated end-of-sequence token (it carries no text).
     */
    public boolean lastTokenIsEos()
    {
        return endsWithEos && numOutputTokens == outputLimit && FinishReason.STOP == finishReason;
    }

    /**
     * @param value the client's {@code n} on the one child that reports it in metrics, 0 on its siblings.
     * @return this.
     */
    public Request parallelN(final int value)
    {
        parallelN = value;
        return this;
    }

    @Override
    public int parallelN()
    {
        return parallelN;
    }

    /**
     * Make this request a sibling of another child of the same client request (OpenAI {@code n > 1}). vLLM's
     * frontend (API server, templating, tokenizing) works once per parent request and fans the children out after
     * it, so a sibling reaches the engine's queue when the first child does: it takes the first child's frontend
     * delay instead of drawing its own. Submit the first child first.
     *
     * @param value the first child of the same client request, or null for a request of its own (the default).
     * @return this.
     */
    public Request firstSibling(final Request value)
    {
        firstSibling = value;
        return this;
    }

    /**
     * @return the first child of the same client request whose frontend delay this one shares, or null.
     */
    public Request firstSibling()
    {
        return firstSibling;
    }

    @Override
    public int promptTokens()
    {
        return promptLength;
    }

    @Override
    public int cachedTokens()
    {
        return numCachedTokens;
    }

    @Override
    public int generationTokens()
    {
        return numOutputTokens;
    }

    @Override
    public int preemptions()
    {
        return preemptions;
    }

    /**
     * @param tokenId a token id.
     * @return true if it is one of the request's {@code stop_token_ids}.
     */
    public boolean isStopToken(final int tokenId)
    {
        final int[] ids = stopTokenIds;
        if (null == ids)
        {
            return false;
        }
        for (final int id : ids)
        {
            if (id == tokenId)
            {
                return true;
            }
        }
        return false;
    }

    boolean hasSeed()
    {
        return seeded;
    }

    long seed()
    {
        return seed;
    }

    int[] fixedOutputTokenIds()
    {
        return fixedOutputTokenIds;
    }

    boolean fixedOutputEndsWithEos()
    {
        return fixedOutputEndsWithEos;
    }

    /** The cache salt in UTF-8 (KV events' {@code extra_keys}), or null. */
    byte[] cacheSaltUtf8()
    {
        return cacheSaltUtf8;
    }

    int[] tokenPool()
    {
        return tokenPool;
    }

    int eosTokenIdOr(final int fallback)
    {
        return eosTokenId >= 0 ? eosTokenId : fallback;
    }

    /**
     * @return tokens still to compute before the next token can be sampled: the rest of the prompt, or after a
     *     preemption the rest of prompt plus the tokens generated so far (vLLM recomputes them).
     */
    int prefillRemaining()
    {
        return numTokens() - numComputedTokens;
    }

    /**
     * @return prompt plus generated tokens (vLLM's {@code num_tokens}).
     */
    int numTokens()
    {
        return promptLength + numOutputTokens;
    }

    /**
     * @return true while the request has recorded decode steps left ({@code --replay-steps}).
     */
    boolean hasRecordedStep()
    {
        return null != stepGapsNs && stepCursor < stepGapsNs.length;
    }

    /**
     * @return the context a decode step attends over: prompt plus generated tokens.
     */
    int contextLength()
    {
        return promptLength + numOutputTokens;
    }

    @Override
    public String toString()
    {
        return "Request{" + requestId + ", prompt=" + promptTokenIds.length + ", state=" + state +
            ", out=" + numOutputTokens + "/" + outputLimit + "}";
    }

    /**
     * Set the request's {@code kv_transfer_params} (P/D disaggregation), before it is submitted.
     *
     * @param value the params, or null.
     * @return this.
     */
    public Request kvTransferParams(final KvTransferParams value)
    {
        kvTransferParams = value;
        return this;
    }

    /**
     * @return the request's {@code kv_transfer_params}, or null.
     */
    public KvTransferParams kvTransferParams()
    {
        return kvTransferParams;
    }

    /**
     * Set what the request returns as {@code kv_transfer_params} when it finishes (the KV connector does, on the
     * engine's thread, before the sink hears of the finish).
     *
     * @param value the params, or null.
     */
    public void kvTransferResult(final KvTransferParams value)
    {
        kvTransferResult = value;
    }

    /**
     * @return the {@code kv_transfer_params} the finished request returns (a prefill's answer for its decode), or
     *     null.
     */
    public KvTransferParams kvTransferResult()
    {
        return kvTransferResult;
    }

    /**
     * @return prompt tokens whose KV was pulled from a remote engine instead of computed (vLLM's
     *     {@code num_external_computed_tokens}); included in {@link #numCachedTokens()}.
     */
    public int numExternalTokens()
    {
        return numExternalTokens;
    }

    /**
     * @return blocks in the request's block table.
     */
    public int numBlocks()
    {
        return numBlocks;
    }

    /**
     * @param index 0 to {@link #numBlocks()} minus one.
     * @return the KV block at that position of the request's block table.
     */
    public int blockId(final int index)
    {
        if (index < 0 || index >= numBlocks)
        {
            throw new IndexOutOfBoundsException("block " + index + " of " + numBlocks);
        }
        return blockTable[index];
    }
}
