package dev.tapedeck.protocol.enginecore;

import java.util.Arrays;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * Writes one {@code EngineCoreOutputs} message: all outputs of one engine step for one frontend client.
 * <pre>
 *   EngineCoreOutputs = [engine_index, [EngineCoreOutput...], scheduler_stats, timestamp(, utility, finished)]
 *   EngineCoreOutput  = [request_id, new_token_ids, nil, nil, nil, finish_reason, stop_reason, nil,
 *                        kv_transfer_params(, line-specific tail with cached tokens)]
 * </pre>
 * Every output is the shortest positional prefix holding what it carries (decoders fill trailing defaults); the
 * first nine slots are the same on every vLLM line, and cached-token counts go where the line expects them
 * ({@link VllmLine.OutputTail}). Allocation-free; not thread safe.
 * <pre>
 *   encoder.begin(buffer, line, 0).output(id, tokens, 0, 1, NO_FINISH, ...).end(stats, timestamp, null);
 * </pre>
 */
public final class EngineCoreOutputsEncoder
{
    /** No finish reason: the request continues. */
    public static final int NO_FINISH = -1;
    /** No value for an optional int field. */
    public static final int NONE = -1;

    private static final byte[] NUM_PROMPT_TOKENS = "num_prompt_tokens".getBytes();
    private static final byte[] NUM_COMPUTED_TOKENS = "num_computed_tokens".getBytes();
    private static final byte[] NUM_CACHED_TOKENS = "num_cached_tokens".getBytes();
    private static final byte[] NUM_LOCAL_CACHED_TOKENS = "num_local_cached_tokens".getBytes();
    private static final byte[] NUM_EXTERNAL_CACHED_TOKENS = "num_external_cached_tokens".getBytes();
    private static final byte[] NUM_CACHE_CREATION_TOKENS = "num_cache_creation_tokens".getBytes();
    private static final byte[] NUM_RUNNING_REQS = "num_running_reqs".getBytes();
    private static final byte[] NUM_WAITING_REQS = "num_waiting_reqs".getBytes();
    private static final byte[] STEP_COUNTER = "step_counter".getBytes();
    private static final byte[] CURRENT_WAVE = "current_wave".getBytes();
    private static final byte[] KV_CACHE_USAGE = "kv_cache_usage".getBytes();
    private static final byte[] PREFIX_CACHE_STATS = "prefix_cache_stats".getBytes();
    private static final byte[] NUM_SKIPPED_WAITING_REQS = "num_skipped_waiting_reqs".getBytes();
    private static final byte[] WAITING_LORA_ADAPTERS = "waiting_lora_adapters".getBytes();
    private static final byte[] RUNNING_LORA_ADAPTERS = "running_lora_adapters".getBytes();
    private static final byte[] SPEC_DECODING_STATS = "spec_decoding_stats".getBytes();
    private static final byte[] NUM_SPEC_TOKENS = "num_spec_tokens".getBytes();
    private static final byte[] NUM_DRAFTS = "num_drafts".getBytes();
    private static final byte[] NUM_DRAFT_TOKENS = "num_draft_tokens".getBytes();
    private static final byte[] NUM_ACCEPTED_TOKENS = "num_accepted_tokens".getBytes();
    private static final byte[] NUM_ACCEPTED_TOKENS_PER_POS = "num_accepted_tokens_per_pos".getBytes();
    private static final byte[] RESET = "reset".getBytes();
    private static final byte[] REQUESTS = "requests".getBytes();
    private static final byte[] QUERIES = "queries".getBytes();
    private static final byte[] HITS = "hits".getBytes();

    private final MsgPackWriter writer = new MsgPackWriter();
    private VllmLine line;
    private int outerMarker;
    private int outputsMarker;
    private int outputs;

    /**
     * Start a message.
     *
     * @param buffer where to write (from offset 0).
     * @param vllmLine the frontend's line.
     * @param engineIndex this engine's index.
     * @return this.
     */
    public EngineCoreOutputsEncoder begin(final MutableDirectBuffer buffer, final VllmLine vllmLine,
        final int engineIndex)
    {
        line = vllmLine;
        writer.wrap(buffer, 0);
        outerMarker = writer.beginFixArray(); // 4 or 6 fields: the message never moves
        writer.int64(engineIndex);
        outputsMarker = writer.beginArray();
        outputs = 0;
        return this;
    }

    /**
     * The bytes every output of a running request starts with (a 2-array header and the request id), for
     * {@link #runningOutput}: encoded once per request instead of once per step.
     *
     * @param requestIdUtf8 the request id's UTF-8 bytes.
     * @return the encoded head.
     */
    public static byte[] runningOutputHead(final byte[] requestIdUtf8)
    {
        final ExpandableArrayBuffer head = new ExpandableArrayBuffer(requestIdUtf8.length + 6);
        final int length = new MsgPackWriter().wrap(head, 0).arrayHeader(2).string(requestIdUtf8).length();
        return Arrays.copyOf(head.byteArray(), length);
    }

    /**
     * New tokens of a running request and nothing else: the same bytes as {@link #output} with {@link #NO_FINISH},
     * no stop token, no KV transfer parameters and no cached-token count, written from the request's encoded
     * {@link #runningOutputHead}.
     *
     * @param head the request's {@link #runningOutputHead}.
     * @param tokens new token ids (a window of this array).
     * @param tokenOffset first token.
     * @param tokenCount tokens.
     * @return this.
     */
    public EngineCoreOutputsEncoder runningOutput(final byte[] head, final int[] tokens, final int tokenOffset,
        final int tokenCount)
    {
        writer.raw(head);
        writeTokens(tokens, tokenOffset, tokenCount);
        outputs++;
        return this;
    }

    /**
     * One request's output of this step.
     *
     * @param requestIdUtf8 the request id's UTF-8 bytes.
     * @param tokens new token ids (a window of this array).
     * @param tokenOffset first token.
     * @param tokenCount tokens (may be 0, e.g. an abort).
     * @param finishReason wire FinishReason (0 stop, 1 length, 2 abort, 3 error), or {@link #NO_FINISH}.
     * @param stopTokenId the token that stopped the request (stop_reason), or {@link #NONE}.
     * @param kvTransferParams raw msgpack map to return as kv_transfer_params, or null.
     * @param promptTokens prompt length, for prefill stats (with cachedTokens).
     * @param cachedTokens prompt tokens from the prefix cache, reported on the request's first output only, or
     *     {@link #NONE}.
     * @return this.
     */
    public EngineCoreOutputsEncoder output(
        final byte[] requestIdUtf8,
        final int[] tokens,
        final int tokenOffset,
        final int tokenCount,
        final int finishReason,
        final int stopTokenId,
        final byte[] kvTransferParams,
        final int promptTokens,
        final int cachedTokens)
    {
        return output(requestIdUtf8, tokens, tokenOffset, tokenCount, finishReason, stopTokenId, kvTransferParams,
            promptTokens, cachedTokens, 0);
    }

    /**
     * One request's output of this step, with the prompt tokens pulled from a remote engine (P/D).
     *
     * @param requestIdUtf8 the request id's UTF-8 bytes.
     * @param tokens new token ids (a window of this array).
     * @param tokenOffset first token.
     * @param tokenCount tokens (may be 0, e.g. an abort).
     * @param finishReason wire FinishReason (0 stop, 1 length, 2 abort, 3 error), or {@link #NO_FINISH}.
     * @param stopTokenId the token that stopped the request (stop_reason), or {@link #NONE}.
     * @param kvTransferParams raw msgpack map to return as kv_transfer_params, or null.
     * @param promptTokens prompt length, for prefill stats (with cachedTokens).
     * @param cachedTokens prompt tokens not computed here (prefix cache and remote), reported on the request's
     *     first output only, or {@link #NONE}.
     * @param externalTokens of those, the ones pulled from a remote engine ({@code num_external_computed_tokens},
     *     {@code prefill_stats.num_external_cached_tokens}).
     * @return this.
     */
    public EngineCoreOutputsEncoder output(
        final byte[] requestIdUtf8,
        final int[] tokens,
        final int tokenOffset,
        final int tokenCount,
        final int finishReason,
        final int stopTokenId,
        final byte[] kvTransferParams,
        final int promptTokens,
        final int cachedTokens,
        final int externalTokens)
    {
        final int length = cachedTokens >= 0 ? tailLength(externalTokens) : null != kvTransferParams ? 9 :
            NO_FINISH != finishReason ? (NONE != stopTokenId ? 7 : 6) : 2;
        writer.arrayHeader(length);
        writer.string(requestIdUtf8);
        writeTokens(tokens, tokenOffset, tokenCount);
        if (length > 2)
        {
            writer.nil().nil().nil();
            if (NO_FINISH == finishReason)
            {
                writer.nil();
            }
            else
            {
                writer.int64(finishReason);
            }
        }
        if (length > 6)
        {
            if (NONE == stopTokenId)
            {
                writer.nil();
            }
            else
            {
                writer.int64(stopTokenId);
            }
        }
        if (length > 7)
        {
            writer.nil();
            if (null == kvTransferParams)
            {
                writer.nil();
            }
            else
            {
                writer.raw(kvTransferParams);
            }
        }
        if (length > 9)
        {
            writeTail(promptTokens, cachedTokens, externalTokens);
        }
        outputs++;
        return this;
    }

    private int tailLength(final int externalTokens)
    {
        switch (line.outputTail())
        {
            case CACHED_AT_9:
                return 10;
            case CACHED_AT_10:
                return 11;
            case CACHED_AT_11:
                return externalTokens > 0 ? 13 : 12;
            default:
                return 12;
        }
    }

    private void writeTail(final int promptTokens, final int cachedTokens, final int externalTokens)
    {
        switch (line.outputTail())
        {
            case CACHED_AT_9:
                writer.int64(cachedTokens);
                break;
            case CACHED_AT_10:
                writer.nil().int64(cachedTokens);
                break;
            case CACHED_AT_11:
                writer.nil().nil().int64(cachedTokens);
                if (externalTokens > 0)
                {
                    writer.int64(externalTokens); // num_external_computed_tokens
                }
                break;
            default:
                writer.nil().nil().mapHeader(6)
                    .string(NUM_PROMPT_TOKENS).int64(promptTokens)
                    .string(NUM_COMPUTED_TOKENS).int64(promptTokens - cachedTokens)
                    .string(NUM_CACHED_TOKENS).int64(cachedTokens)
                    .string(NUM_LOCAL_CACHED_TOKENS).int64(cachedTokens - externalTokens)
                    .string(NUM_EXTERNAL_CACHED_TOKENS).int64(externalTokens)
                    .string(NUM_CACHE_CREATION_TOKENS).int64(promptTokens - cachedTokens);
        }
    }

    /** {@code new_token_ids}: an array of the ints. */
    private void writeTokens(final int[] tokens, final int tokenOffset, final int tokenCount)
    {
        writer.arrayHeader(tokenCount);
        for (int i = 0; i < tokenCount; i++)
        {
            writer.int64(tokens[tokenOffset + i]);
        }
    }

    /**
     * Finish the message.
     *
     * @param stats the engine's stats, or null.
     * @param timestamp engine monotonic time in seconds (0.0 lets the frontend stamp it).
     * @param finishedRequests ids (UTF-8) of requests that ended without an output of their own (aborts), or null.
     * @param finishedCount how many of {@code finishedRequests} to write.
     * @return the message length in bytes.
     */
    public int end(final SchedulerStats stats, final double timestamp, final byte[][] finishedRequests,
        final int finishedCount)
    {
        writer.endArray(outputsMarker, outputs);
        if (null == stats)
        {
            writer.nil();
        }
        else
        {
            writeStats(stats);
        }
        writer.float64(timestamp);
        int fields = 4;
        if (null != finishedRequests && finishedCount > 0)
        {
            writer.nil().arrayHeader(finishedCount);
            for (int i = 0; i < finishedCount; i++)
            {
                writer.string(finishedRequests[i]);
            }
            fields = 6;
        }
        writer.endFixArray(outerMarker, fields);
        return writer.length();
    }

    private void writeStats(final SchedulerStats stats)
    {
        final SchedulerStats.LoraCounts lora = stats.loraCounts;
        final int waitingAdapters = null == lora ? 0 : loraEntries(lora, false);
        final int runningAdapters = null == lora ? 0 : loraEntries(lora, true);
        writer.mapHeader(6 + (stats.numSkippedWaitingReqs > 0 ? 1 : 0) + (waitingAdapters > 0 ? 1 : 0) +
            (runningAdapters > 0 ? 1 : 0) + (stats.numSpecTokens > 0 ? 1 : 0))
            .string(NUM_RUNNING_REQS).int64(stats.numRunningReqs)
            .string(NUM_WAITING_REQS).int64(stats.numWaitingReqs)
            .string(STEP_COUNTER).int64(stats.stepCounter)
            .string(CURRENT_WAVE).int64(stats.currentWave)
            .string(KV_CACHE_USAGE).float64(stats.kvCacheUsage)
            .string(PREFIX_CACHE_STATS).mapHeader(4)
            .string(RESET).bool(false)
            .string(REQUESTS).int64(stats.prefixCacheRequests)
            .string(QUERIES).int64(stats.prefixCacheQueries)
            .string(HITS).int64(stats.prefixCacheHits);
        if (stats.numSkippedWaitingReqs > 0)
        {
            writer.string(NUM_SKIPPED_WAITING_REQS).int64(stats.numSkippedWaitingReqs);
        }
        if (waitingAdapters > 0)
        {
            writeLoraMap(WAITING_LORA_ADAPTERS, lora, waitingAdapters, false);
        }
        if (runningAdapters > 0)
        {
            writeLoraMap(RUNNING_LORA_ADAPTERS, lora, runningAdapters, true);
        }
        if (stats.numSpecTokens > 0)
        {
            writer.string(SPEC_DECODING_STATS).mapHeader(5)
                .string(NUM_SPEC_TOKENS).int64(stats.numSpecTokens)
                .string(NUM_DRAFTS).int64(stats.specNumDrafts)
                .string(NUM_DRAFT_TOKENS).int64(stats.specNumDraftTokens)
                .string(NUM_ACCEPTED_TOKENS).int64(stats.specNumAcceptedTokens)
                .string(NUM_ACCEPTED_TOKENS_PER_POS).arrayHeader(stats.numSpecTokens);
            for (int i = 0; i < stats.numSpecTokens; i++)
            {
                writer.int64(stats.specNumAcceptedTokensPerPos[i]);
            }
        }
    }

    private static int loraEntries(final SchedulerStats.LoraCounts lora, final boolean running)
    {
        int entries = 0;
        for (int i = 0, n = lora.adapters(); i < n; i++)
        {
            if ((running ? lora.running(i) : lora.waiting(i)) > 0)
            {
                entries++;
            }
        }
        return entries;
    }

    private void writeLoraMap(final byte[] key, final SchedulerStats.LoraCounts lora, final int entries,
        final boolean running)
    {
        writer.string(key).mapHeader(entries);
        for (int i = 0, n = lora.adapters(); i < n; i++)
        {
            final int count = running ? lora.running(i) : lora.waiting(i);
            if (count > 0)
            {
                writer.string(lora.nameUtf8(i)).int64(count);
            }
        }
    }
}
