package dev.tapedeck.trace;

import java.util.Arrays;

/**
 * Collects what a capture sees of one request (arrival, each token-bearing output, the end) and turns it into a
 * {@link TraceRecord} the way vllm-vcr's tap does: the first output with tokens sets {@code ttft_ms}; each later one
 * adds a gap to {@code itl_ms} with its token count ({@code itl_tokens}, omitted when every chunk had one token) and
 * the batch around it ({@code itl_ctx}: requests running, prefill tokens in that step); the end sets {@code e2e_ms}.
 * <p>
 * Arrays grow by doubling, so a request allocates a handful of times over its life, not per token. Not thread safe:
 * one capturing thread per request.
 */
public final class RequestCapture
{
    private final double arrivalMs;
    private final long promptTokens;
    private final long concurrency;
    private long cachedTokens = -1;
    private long[] blockHashes;
    private String[] mmHashes;
    private double firstChunkMs = Double.NaN;
    private double lastChunkMs;
    private long outputTokens;
    private int gaps;
    private double[] gapMs = new double[16];
    private int[] gapTokens = new int[16];
    private int[] gapRunning = new int[16];
    private int[] gapPrefillTokens = new int[16];
    private boolean multiTokenChunk;
    private int[] tokenIds;
    private int tokenIdCount;

    /**
     * @param arrivalMs arrival, milliseconds since the capture started.
     * @param promptTokens prompt length.
     * @param concurrency requests in flight at arrival, this one included.
     * @param recordTokens true to keep the generated token ids ({@code --record-tokens}).
     */
    public RequestCapture(final double arrivalMs, final long promptTokens, final long concurrency,
        final boolean recordTokens)
    {
        this.arrivalMs = arrivalMs;
        this.promptTokens = promptTokens;
        this.concurrency = concurrency;
        this.tokenIds = recordTokens ? new int[16] : null;
    }

    /**
     * @param hashes the prompt's block fingerprints ({@link PromptBlockHashes}), or null.
     * @return this.
     */
    public RequestCapture blockHashes(final long[] hashes)
    {
        blockHashes = hashes;
        return this;
    }

    /**
     * @param hashes multimodal input hashes, or null.
     * @return this.
     */
    public RequestCapture mmHashes(final String[] hashes)
    {
        mmHashes = hashes;
        return this;
    }

    /**
     * @param tokens prefix-cache hit tokens reported for the request.
     * @return this.
     */
    public RequestCapture cachedTokens(final long tokens)
    {
        cachedTokens = tokens;
        return this;
    }

    /**
     * An output carrying tokens arrived.
     *
     * @param atMs when, milliseconds since the capture started.
     * @param tokenCount tokens in this output (at least 1).
     * @param running requests running in the step that produced it.
     * @param prefillTokens prefill tokens scheduled in that step.
     */
    public void onChunk(final double atMs, final int tokenCount, final int running, final int prefillTokens)
    {
        if (Double.isNaN(firstChunkMs))
        {
            firstChunkMs = atMs;
        }
        else
        {
            if (gaps == gapMs.length)
            {
                final int capacity = gaps * 2;
                gapMs = Arrays.copyOf(gapMs, capacity);
                gapTokens = Arrays.copyOf(gapTokens, capacity);
                gapRunning = Arrays.copyOf(gapRunning, capacity);
                gapPrefillTokens = Arrays.copyOf(gapPrefillTokens, capacity);
            }
            gapMs[gaps] = atMs - lastChunkMs;
            gapTokens[gaps] = tokenCount;
            gapRunning[gaps] = Math.max(running, 1);
            gapPrefillTokens[gaps] = prefillTokens;
            gaps++;
            multiTokenChunk |= tokenCount != 1;
        }
        lastChunkMs = atMs;
        outputTokens += tokenCount;
    }

    /**
     * One more token in the output {@link #onChunk} last reported (a speculative-decoding burst reported token by
     * token).
     */
    public void extendChunk()
    {
        if (gaps > 0)
        {
            gapTokens[gaps - 1]++;
            multiTokenChunk = true;
        }
        outputTokens++;
    }

    /**
     * Keep a generated token id (only when recording tokens).
     *
     * @param tokenId the id.
     */
    public void onTokenId(final int tokenId)
    {
        if (null == tokenIds)
        {
            return;
        }
        if (tokenIdCount == tokenIds.length)
        {
            tokenIds = Arrays.copyOf(tokenIds, tokenIdCount * 2);
        }
        tokenIds[tokenIdCount++] = tokenId;
    }

    /**
     * @return true once an output with tokens was seen.
     */
    public boolean hasFirstToken()
    {
        return !Double.isNaN(firstChunkMs);
    }

    /**
     * @param finishReason {@code stop}, {@code length}, {@code abort}, {@code error} or {@code repetition}.
     * @param finishedAtMs when the request ended (its last output, or its abort), milliseconds since the capture
     *     started: {@code e2e_ms} is this minus the arrival.
     * @return the finished record.
     */
    public TraceRecord toRecord(final String finishReason, final double finishedAtMs)
    {
        final TraceRecord record = new TraceRecord()
            .promptTokens(promptTokens)
            .cachedTokens(Math.max(0, cachedTokens))
            .outputTokens(outputTokens)
            .ttftMs(hasFirstToken() ? firstChunkMs - arrivalMs : 0)
            .concurrency(concurrency)
            .arrivalMs(arrivalMs)
            .e2eMs(Math.max(0, finishedAtMs - arrivalMs))
            .finishReason(finishReason);
        if (outputTokens > 0)
        {
            record.itlMs(Arrays.copyOf(gapMs, gaps));
            record.itlContext(new TraceRecord.ItlContext(Arrays.copyOf(gapRunning, gaps),
                Arrays.copyOf(gapPrefillTokens, gaps)));
            if (multiTokenChunk)
            {
                record.itlTokens(Arrays.copyOf(gapTokens, gaps));
            }
        }
        record.blockHashes(blockHashes);
        record.mmHashes(mmHashes);
        if (null != tokenIds)
        {
            record.outputTokenIds(Arrays.copyOf(tokenIds, tokenIdCount));
        }
        return record;
    }
}
