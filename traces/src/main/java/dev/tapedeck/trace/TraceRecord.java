package dev.tapedeck.trace;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One finished request of a trace: the vllm-vcr record schema, field for field (docs/traces.md).
 * <p>
 * Optional fields are null when absent, so a record read and written again keeps exactly the fields it had; fields
 * this class does not know are kept in {@link #extra()} and written back after the known ones. Accessors follow the
 * house style: {@code ttftMs()} reads, {@code ttftMs(x)} writes and returns this. Mutable; not thread safe.
 */
public final class TraceRecord
{
    private long promptTokens = -1;
    private Long cachedTokens;
    private long outputTokens = -1;
    private double ttftMs = Double.NaN;
    private double[] itlMs;
    private int[] itlTokens;
    private ItlSummary itlSummary;
    private Long concurrency;
    private Double arrivalMs;
    private Double e2eMs;
    private ItlContext itlContext;
    private long[] blockHashes;
    private String[] mmHashes;
    private int[] outputTokenIds;
    private String finishReason;
    private final Map<String, JsonNode> extra = new LinkedHashMap<>();

    /**
     * Mean inter-token latency when per-gap values are unknown (e.g. converted from a guidellm report).
     *
     * @param meanMs mean gap in milliseconds.
     * @param count number of gaps it summarises.
     */
    public record ItlSummary(double meanMs, long count)
    {
    }

    /**
     * The batch around each gap, parallel to {@code itl_ms}: requests running and prefill tokens in the step that
     * closed the gap.
     *
     * @param numRunning running requests per gap.
     * @param prefillTokens prefill tokens per gap.
     */
    public record ItlContext(int[] numRunning, int[] prefillTokens)
    {
    }

    /**
     * @return prompt length in tokens (required; -1 until set).
     */
    public long promptTokens()
    {
        return promptTokens;
    }

    /**
     * @param value prompt length in tokens.
     * @return this.
     */
    public TraceRecord promptTokens(final long value)
    {
        promptTokens = value;
        return this;
    }

    /**
     * @return prefix-cache hit tokens (0 when absent).
     */
    public long cachedTokens()
    {
        return null == cachedTokens ? 0 : cachedTokens;
    }

    /**
     * @return true when {@code cached_tokens} is present.
     */
    public boolean hasCachedTokens()
    {
        return null != cachedTokens;
    }

    /**
     * @param value prefix-cache hit tokens, or null to omit.
     * @return this.
     */
    public TraceRecord cachedTokens(final Long value)
    {
        cachedTokens = value;
        return this;
    }

    /**
     * @return generated tokens (required; -1 until set).
     */
    public long outputTokens()
    {
        return outputTokens;
    }

    /**
     * @param value generated tokens.
     * @return this.
     */
    public TraceRecord outputTokens(final long value)
    {
        outputTokens = value;
        return this;
    }

    /**
     * @return arrival to first token-bearing output, milliseconds (required; NaN until set).
     */
    public double ttftMs()
    {
        return ttftMs;
    }

    /**
     * @param value arrival to first token, milliseconds.
     * @return this.
     */
    public TraceRecord ttftMs(final double value)
    {
        ttftMs = value;
        return this;
    }

    /**
     * @return one gap per output chunk after the first, milliseconds, or null.
     */
    public double[] itlMs()
    {
        return itlMs;
    }

    /**
     * @param value gaps in milliseconds, or null.
     * @return this.
     */
    public TraceRecord itlMs(final double[] value)
    {
        itlMs = value;
        return this;
    }

    /**
     * @return tokens in the chunk closing each gap, or null (all 1).
     */
    public int[] itlTokens()
    {
        return itlTokens;
    }

    /**
     * @param value tokens per gap, or null.
     * @return this.
     */
    public TraceRecord itlTokens(final int[] value)
    {
        itlTokens = value;
        return this;
    }

    /**
     * @return the gap summary, or null.
     */
    public ItlSummary itlSummary()
    {
        return itlSummary;
    }

    /**
     * @param value the gap summary, or null.
     * @return this.
     */
    public TraceRecord itlSummary(final ItlSummary value)
    {
        itlSummary = value;
        return this;
    }

    /**
     * @return requests in flight at arrival, this one included (1 when absent).
     */
    public long concurrency()
    {
        return null == concurrency ? 1 : concurrency;
    }

    /**
     * @return true when {@code concurrency} is present.
     */
    public boolean hasConcurrency()
    {
        return null != concurrency;
    }

    /**
     * @param value requests in flight at arrival, or null to omit.
     * @return this.
     */
    public TraceRecord concurrency(final Long value)
    {
        concurrency = value;
        return this;
    }

    /**
     * @return milliseconds since capture start, or null.
     */
    public Double arrivalMs()
    {
        return arrivalMs;
    }

    /**
     * @param value milliseconds since capture start, or null.
     * @return this.
     */
    public TraceRecord arrivalMs(final Double value)
    {
        arrivalMs = value;
        return this;
    }

    /**
     * @return arrival to the end of the request (its last output, or its abort), milliseconds; null when absent.
     */
    public Double e2eMs()
    {
        return e2eMs;
    }

    /**
     * @param value arrival to the end of the request in milliseconds, or null to omit.
     * @return this.
     */
    public TraceRecord e2eMs(final Double value)
    {
        e2eMs = value;
        return this;
    }

    /**
     * @return the per-gap batch context, or null.
     */
    public ItlContext itlContext()
    {
        return itlContext;
    }

    /**
     * @param value the per-gap batch context, or null.
     * @return this.
     */
    public TraceRecord itlContext(final ItlContext value)
    {
        itlContext = value;
        return this;
    }

    /**
     * @return chained FNV-1a fingerprints of the full prompt blocks (unsigned 64-bit), or null.
     */
    public long[] blockHashes()
    {
        return blockHashes;
    }

    /**
     * @param value block fingerprints, or null.
     * @return this.
     */
    public TraceRecord blockHashes(final long[] value)
    {
        blockHashes = value;
        return this;
    }

    /**
     * @return multimodal input hashes in order, or null.
     */
    public String[] mmHashes()
    {
        return mmHashes;
    }

    /**
     * @param value multimodal input hashes, or null.
     * @return this.
     */
    public TraceRecord mmHashes(final String[] value)
    {
        mmHashes = value;
        return this;
    }

    /**
     * @return the generated token ids (content-bearing), or null.
     */
    public int[] outputTokenIds()
    {
        return outputTokenIds;
    }

    /**
     * @param value generated token ids, or null.
     * @return this.
     */
    public TraceRecord outputTokenIds(final int[] value)
    {
        outputTokenIds = value;
        return this;
    }

    /**
     * @return {@code stop}, {@code length}, {@code abort}, {@code error} or {@code repetition}, or null.
     */
    public String finishReason()
    {
        return finishReason;
    }

    /**
     * @param value the finish reason, or null.
     * @return this.
     */
    public TraceRecord finishReason(final String value)
    {
        finishReason = value;
        return this;
    }

    /**
     * @return fields this schema does not know, in file order; mutable.
     */
    public Map<String, JsonNode> extra()
    {
        return extra;
    }

    /**
     * @return the gaps as the engine saw them: per-gap values when present, else {@code itl_summary.count} gaps of
     *     its mean, else none.
     */
    public double[] gapsOrSummaryMs()
    {
        if (null != itlMs)
        {
            return itlMs;
        }
        if (null != itlSummary)
        {
            final double[] gaps = new double[(int)Math.max(0, Math.min(Integer.MAX_VALUE, itlSummary.count()))];
            java.util.Arrays.fill(gaps, itlSummary.meanMs());
            return gaps;
        }
        return new double[0];
    }
}
