package dev.tapedeck.http;

/**
 * How the OpenAI/vLLM surface answers beyond the engine's timing: response headers, embedding sizes, tool calls and
 * log-probabilities. Immutable.
 *
 * @param requestIdHeaders {@code --enable-request-id-headers}: every answer carries {@code X-Request-Id}.
 * @param embeddingDimensions the size of {@code /v1/embeddings} vectors when a request names none
 *     ({@code --default-embedding-dimensions}; 0 for 384, llm-d-inference-sim's default).
 * @param autoToolCallRate {@code --auto-tool-call-rate}: the probability that {@code tool_choice: auto} calls a tool
 *     (0 to 1; after a tool's result the model answers in text).
 * @param maxLogprobs vLLM's {@code --max-logprobs}: the most {@code top_logprobs}/{@code logprobs}/
 *     {@code prompt_logprobs} a request may ask for (-1 for the vocabulary's size).
 * @param toolCallParser vLLM's {@code --tool-call-parser}: how an {@code auto} tool call is written in the text
 *     (null for Hermes).
 * @param globalCacheHitThreshold llm-d-inference-sim's {@code --global-cache-hit-threshold}: a request whose
 *     prefix-cache hit rate is below it (0 to 1; 0 for none) finishes at once with {@code cache_threshold}, unless it
 *     names its own {@code cache_hit_threshold}.
 * @param fakeMetrics llm-d-inference-sim's {@code --fake-metrics} JSON: {@code /metrics} reports these values instead
 *     of the engines' ({@link dev.tapedeck.metrics.FakeMetrics}); null for the real ones.
 * @param fakeMetricsRefreshNs {@code --fake-metrics-refresh-interval}: how often function-valued fake gauges change.
 * @param showHiddenMetricsForVersion vLLM's {@code --show-hidden-metrics-for-version}: the metrics the previous minor
 *     version deprecated are exported again ({@link dev.tapedeck.metrics.DeprecatedMetrics}); null for none.
 */
public record ApiSurface(boolean requestIdHeaders, int embeddingDimensions, double autoToolCallRate, int maxLogprobs,
    dev.tapedeck.structured.ToolCalling.Parser toolCallParser, double globalCacheHitThreshold, String fakeMetrics,
    long fakeMetricsRefreshNs, String showHiddenMetricsForVersion)
{
    /** vLLM's and llm-d-inference-sim's defaults. */
    public static final ApiSurface DEFAULT = new ApiSurface(false, 384, 1.0, 20, null, 0, null, 100_000_000L, null);

    /**
     * Validates.
     */
    public ApiSurface
    {
        embeddingDimensions = 0 == embeddingDimensions ? 384 : embeddingDimensions;
        toolCallParser = null == toolCallParser ? dev.tapedeck.structured.ToolCalling.Parser.HERMES : toolCallParser;
        if (embeddingDimensions < 1 || embeddingDimensions > 65_536)
        {
            throw new IllegalArgumentException("--default-embedding-dimensions must be 1 to 65536, got " +
                embeddingDimensions);
        }
        if (!(autoToolCallRate >= 0 && autoToolCallRate <= 1))
        {
            throw new IllegalArgumentException("--auto-tool-call-rate must be between 0 and 1, got " +
                autoToolCallRate);
        }
        if (!(globalCacheHitThreshold >= 0 && globalCacheHitThreshold <= 1))
        {
            throw new IllegalArgumentException("--global-cache-hit-threshold must be between 0 and 1, got " +
                globalCacheHitThreshold);
        }
        if (fakeMetricsRefreshNs <= 0)
        {
            throw new IllegalArgumentException("--fake-metrics-refresh-interval must be positive");
        }
        if (maxLogprobs < -1)
        {
            throw new IllegalArgumentException("--max-logprobs must be -1 (the vocabulary) or more, got " +
                maxLogprobs);
        }
    }
}
