package dev.tapedeck.protocol.enginecore;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.agrona.DirectBuffer;

/**
 * The fields of an {@code EngineCoreRequest} (ADD) a simulated engine honours, filled by {@link AddRequestDecoder}.
 * Absent fields hold vLLM's defaults. Reused from decode to decode: the request id, the prompt, the stop token ids
 * and the KV transfer parameters live in arrays owned by this object that grow to the largest request seen, so
 * decoding allocates nothing; the accessors that return a {@code String} or an array copy allocate, for the caller
 * that keeps them. Mutable; confined to the decoding thread.
 */
public final class AddRequest
{
    /** Marker for "not present". */
    public static final int ABSENT = Integer.MIN_VALUE;

    private byte[] requestIdUtf8 = new byte[64];
    private int requestIdLength = -1;
    private int[] promptTokenIds = new int[1024];
    private int promptLength;
    private int[] stopTokenIds = new int[16];
    private int stopTokenIdCount = -1;
    private byte[] kvTransferParams = new byte[256];
    private int kvTransferParamsLength = -1;
    /** True when the frontend sent prompt embeddings instead of ids. */
    public boolean hasPromptEmbeds;
    /** True when the request carries multimodal features. */
    public boolean hasMultimodal;
    private byte[] mediaIdentifiersUtf8 = new byte[0];
    /** Where each identifier ends in {@link #mediaIdentifiersUtf8}. */
    private int[] mediaIdentifierEnds = new int[0];
    private int[] mediaOffsets = new int[0];
    private int[] mediaLengths = new int[0];
    private int mediaCount;
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
    /** {@code SamplingParams.logprobs}, or {@link #ABSENT}. */
    public int logprobs = ABSENT;
    /** End-of-sequence token: the request's {@code eos_token_id} (old lines) or {@code _eos_token_id}. */
    public int eosTokenId = ABSENT;
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
        requestIdLength = -1;
        promptLength = 0;
        hasPromptEmbeds = false;
        hasMultimodal = false;
        mediaCount = 0;
        isPooling = false;
        maxTokens = 16;
        minTokens = 0;
        ignoreEos = false;
        n = 1;
        seed = 0;
        hasSeed = false;
        stopTokenIdCount = -1;
        logprobs = ABSENT;
        eosTokenId = ABSENT;
        kvTransferParamsLength = -1;
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

    /**
     * @return true once a request id was read.
     */
    public boolean hasRequestId()
    {
        return requestIdLength >= 0;
    }

    /**
     * @return the frontend's internal request id (aborts and outputs use it), allocated; null if unread.
     */
    public String requestId()
    {
        return requestIdLength < 0 ? null : new String(requestIdUtf8, 0, requestIdLength, StandardCharsets.UTF_8);
    }

    /**
     * @return prompt length in tokens; 0 when the request came as embeddings.
     */
    public int promptLength()
    {
        return promptLength;
    }

    /**
     * @param index position in the prompt.
     * @return the prompt's token id there.
     */
    public int promptTokenId(final int index)
    {
        if (index < 0 || index >= promptLength)
        {
            throw new IndexOutOfBoundsException(index);
        }
        return promptTokenIds[index];
    }

    /**
     * @return a copy of the prompt's token ids.
     */
    public int[] promptTokenIds()
    {
        return Arrays.copyOf(promptTokenIds, promptLength);
    }

    /**
     * @return a copy of {@code SamplingParams.stop_token_ids}, or null when absent.
     */
    public int[] stopTokenIds()
    {
        return stopTokenIdCount < 0 ? null : Arrays.copyOf(stopTokenIds, stopTokenIdCount);
    }

    /**
     * @return a copy of the raw msgpack of {@code extra_args.kv_transfer_params}, or null when absent.
     */
    public byte[] kvTransferParams()
    {
        return kvTransferParamsLength < 0 ? null : Arrays.copyOf(kvTransferParams, kvTransferParamsLength);
    }

    void requestId(final DirectBuffer source, final int offset, final int length)
    {
        if (length > requestIdUtf8.length)
        {
            requestIdUtf8 = new byte[Math.max(length, requestIdUtf8.length * 2)];
        }
        source.getBytes(offset, requestIdUtf8, 0, length);
        requestIdLength = length;
    }

    void promptCapacity(final int length)
    {
        if (length > promptTokenIds.length)
        {
            promptTokenIds = new int[Math.max(length, promptTokenIds.length * 2)];
        }
        promptLength = 0;
    }

    void addPromptTokenId(final int tokenId)
    {
        promptTokenIds[promptLength++] = tokenId;
    }

    void stopTokenIdCapacity(final int count)
    {
        if (count > stopTokenIds.length)
        {
            stopTokenIds = new int[Math.max(count, stopTokenIds.length * 2)];
        }
        stopTokenIdCount = 0;
    }

    void addStopTokenId(final int tokenId)
    {
        stopTokenIds[stopTokenIdCount++] = tokenId;
    }

    void kvTransferParams(final DirectBuffer source, final int offset, final int length)
    {
        if (length > kvTransferParams.length)
        {
            kvTransferParams = new byte[Math.max(length, kvTransferParams.length * 2)];
        }
        source.getBytes(offset, kvTransferParams, 0, length);
        kvTransferParamsLength = length;
    }

    /**
     * @return how many multimodal features with an identifier and a placeholder range the request carries (the
     *     {@code mm_features} of vLLM 0.11 and later; none for older layouts).
     */
    public int mediaCount()
    {
        return mediaCount;
    }

    /**
     * @param index a feature, below {@link #mediaCount()}.
     * @return its {@code identifier} (the prefix cache's key of the media), or its {@code mm_hash} without one (a new
     *     string).
     */
    public String mediaIdentifier(final int index)
    {
        final int from = 0 == index ? 0 : mediaIdentifierEnds[index - 1];
        return new String(mediaIdentifiersUtf8, from, mediaIdentifierEnds[index] - from, StandardCharsets.UTF_8);
    }

    /**
     * @param index a feature.
     * @return {@code mm_position.offset}: its first placeholder token.
     */
    public int mediaOffset(final int index)
    {
        return mediaOffsets[index];
    }

    /**
     * @param index a feature.
     * @return {@code mm_position.length}: its placeholder tokens.
     */
    public int mediaLength(final int index)
    {
        return mediaLengths[index];
    }

    /** Keep a feature whose identifier is the UTF-8 {@code length} bytes at {@code offset} of {@code source}. */
    void addMedia(final DirectBuffer source, final int identifierAt, final int identifierLength, final int offset,
        final int length)
    {
        if (mediaCount == mediaOffsets.length)
        {
            final int capacity = Math.max(4, mediaCount * 2);
            mediaIdentifierEnds = Arrays.copyOf(mediaIdentifierEnds, capacity);
            mediaOffsets = Arrays.copyOf(mediaOffsets, capacity);
            mediaLengths = Arrays.copyOf(mediaLengths, capacity);
        }
        final int from = 0 == mediaCount ? 0 : mediaIdentifierEnds[mediaCount - 1];
        if (from + identifierLength > mediaIdentifiersUtf8.length)
        {
            mediaIdentifiersUtf8 = Arrays.copyOf(mediaIdentifiersUtf8, Math.max(from + identifierLength,
                mediaIdentifiersUtf8.length * 2));
        }
        source.getBytes(identifierAt, mediaIdentifiersUtf8, from, identifierLength);
        mediaIdentifierEnds[mediaCount] = from + identifierLength;
        mediaOffsets[mediaCount] = offset;
        mediaLengths[mediaCount] = length;
        mediaCount++;
    }
}
