package dev.tapedeck.metrics;

import java.util.List;
import java.util.Map;

/**
 * Renders engines' metrics in the Prometheus text exposition format (version 0.0.4) exactly as vLLM's Python
 * frontend does: vLLM's family names, HELP texts and order; counters with {@code _total} and a {@code _created}
 * gauge; histograms as cumulative {@code _bucket} lines then {@code _count} and {@code _sum}; labels sorted by name;
 * bounds printed as Python floats ({@code 1.0}, {@code 1e+06}). One family lists every engine (label {@code engine}).
 * <p>
 * Called on the engines' thread at scrape time; allocates only the output text.
 */
public final class PrometheusExposition
{
    /** The Content-Type of the exposition. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final String modelName;
    private DeprecatedMetrics deprecated = DeprecatedMetrics.NONE;
    private final double createdEpochSeconds;
    private final List<? extends MetricsSource> engines;
    private final List<Map<String, String>> cacheConfigLabels;
    private LoraRequestsInfo loraRequestsInfo;
    private List<NixlMetrics> nixlMetrics = List.of();

    /**
     * @param modelName the {@code model_name} label (the served model name).
     * @param createdEpochSeconds the {@code _created} timestamp (engine start, Unix seconds).
     * @param engines the engines, index = the {@code engine} label.
     * @param cacheConfigLabels per engine, the labels of {@code vllm:cache_config_info} (without {@code engine}).
     */
    public PrometheusExposition(
        final String modelName,
        final double createdEpochSeconds,
        final List<? extends MetricsSource> engines,
        final List<Map<String, String>> cacheConfigLabels)
    {
        this.modelName = escape(modelName);
        this.createdEpochSeconds = createdEpochSeconds;
        this.engines = engines;
        this.cacheConfigLabels = cacheConfigLabels;
    }

    /**
     * @param value which renamed metrics the imitated vLLM line still exports under their old names.
     * @return this.
     */
    public PrometheusExposition deprecatedMetrics(final DeprecatedMetrics value)
    {
        deprecated = value;
        return this;
    }

    /**
     * @param value the engine index of the first source (a fleet with one rank per pod: this pod's rank).
     * @return this.
     */
    public PrometheusExposition firstEngineIndex(final int value)
    {
        firstEngine = value;
        return this;
    }

    /**
     * Expose vLLM's NIXL connector metrics ({@code vllm:nixl_*}), one set per engine in engine order.
     *
     * @param value each engine's metrics.
     * @return this.
     */
    public PrometheusExposition nixlMetrics(final List<NixlMetrics> value)
    {
        if (value.size() != engines.size())
        {
            throw new IllegalArgumentException("one NIXL metrics set per engine: " + value.size() + " for " +
                engines.size() + " engines");
        }
        nixlMetrics = List.copyOf(value);
        return this;
    }

    /**
     * Show {@code vllm:lora_requests_info} (LoRA enabled).
     *
     * @param value the gauge.
     * @return this.
     */
    public PrometheusExposition loraRequestsInfo(final LoraRequestsInfo value)
    {
        loraRequestsInfo = value;
        return this;
    }

    /**
     * @param out where the exposition text goes.
     */
    public void write(final StringBuilder out)
    {
        gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.", Gauge.RUNNING);
        gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", Gauge.WAITING);
        waitingByReason(out);
        sleepState(out);
        gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", Gauge.KV_USAGE);
        if (deprecated.gpuCacheNames())
        {
            gauge(out, "vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage." +
                "DEPRECATED: Use vllm:kv_cache_usage_perc instead.", Gauge.KV_USAGE);
            counter(out, "vllm:gpu_prefix_cache_queries", "GPU prefix cache queries, in terms of number of queried" +
                "tokens. DEPRECATED: Use vllm:prefix_cache_queries instead.", Counter.PREFIX_QUERIES);
            counter(out, "vllm:gpu_prefix_cache_hits", "GPU prefix cache hits, in terms of number of cached tokens. " +
                "DEPRECATED: Use vllm:prefix_cache_hits instead.", Counter.PREFIX_HITS);
        }
        counter(out, "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
            Counter.PREFIX_QUERIES);
        counter(out, "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
            Counter.PREFIX_HITS);
        counter(out, "vllm:external_prefix_cache_queries", "External prefix cache queries from KV connector " +
            "cross-instance cache sharing, in terms of number of queried tokens.", Counter.EXTERNAL_QUERIES);
        counter(out, "vllm:external_prefix_cache_hits", "External prefix cache hits from KV connector " +
            "cross-instance cache sharing, in terms of number of cached tokens.", Counter.EXTERNAL_HITS);
        counter(out, "vllm:mm_cache_queries", "Multi-modal cache queries, in terms of number of queried items.",
            Counter.ZERO);
        counter(out, "vllm:mm_cache_hits", "Multi-modal cache hits, in terms of number of cached items.",
            Counter.ZERO);
        counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.", Counter.PREEMPTIONS);
        counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", Counter.PROMPT);
        promptTokensBySource(out);
        counter(out, "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external).",
            Counter.PROMPT_CACHED);
        counter(out, "vllm:prompt_tokens_recomputed", "Number of cached tokens recomputed for forward pass.",
            Counter.PROMPT_RECOMPUTED);
        counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", Counter.GENERATION);
        requestSuccess(out);
        mfu(out);
        specDecode(out);
        histograms(out);
        if (!nixlMetrics.isEmpty())
        {
            nixl(out);
        }
        if (!engines.isEmpty() && null != engines.get(0).metrics().offload())
        {
            offload(out);
        }
        if (null != loraRequestsInfo)
        {
            loraRequestsInfo.write(out, engines);
        }
        cacheConfigInfo(out);
    }

    /** vLLM's MFU counters: always listed, counting only with {@code --enable-mfu-metrics}. */
    private void mfu(final StringBuilder out)
    {
        final String note = " (for Model Flops Utilization calculations).";
        final String[][] families = {
            {"vllm:estimated_flops_per_gpu_total", "Estimated number of floating point operations per GPU"},
            {"vllm:estimated_read_bytes_per_gpu_total", "Estimated number of bytes read from memory per GPU"},
            {"vllm:estimated_write_bytes_per_gpu_total", "Estimated number of bytes written to memory per GPU"},
        };
        for (int f = 0; f < families.length; f++)
        {
            header(out, families[f][0], families[f][1] + note, "counter");
            for (int e = 0; e < engines.size(); e++)
            {
                final EngineMetrics m = engines.get(e).metrics();
                sample(out, families[f][0], e, null, null, 0 == f ? m.estimatedFlops : 1 == f ?
                    m.estimatedReadBytes : m.estimatedWriteBytes);
            }
        }
    }

    private void histograms(final StringBuilder out)
    {
        histogram(out, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", Hist.PROMPT_TOKENS);
        histogram(out, "vllm:request_generation_tokens", "Number of generation tokens processed.",
            Hist.GENERATION_TOKENS);
        histogram(out, "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
            Hist.ITERATION_TOKENS);
        histogram(out, "vllm:request_max_num_generation_tokens",
            "Histogram of maximum number of requested generation tokens.", Hist.MAX_GENERATION_TOKENS);
        histogram(out, "vllm:request_params_n", "Histogram of the n request parameter.", Hist.PARAMS_N);
        histogram(out, "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
            Hist.PARAMS_MAX_TOKENS);
        histogram(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", Hist.TTFT);
        histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", Hist.ITL);
        if (deprecated.timePerOutputToken())
        {
            histogram(out, "vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds." +
                (deprecated.timePerOutputTokenDeprecated() ? "DEPRECATED: Use vllm:inter_token_latency_seconds " +
                "instead." : ""), Hist.ITL);
        }
        histogram(out, "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.", Hist.TPOT);
        histogram(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", Hist.E2E);
        histogram(out, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
            Hist.QUEUE);
        histogram(out, "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.", Hist.INFERENCE);
        histogram(out, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
            Hist.PREFILL);
        histogram(out, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
            Hist.DECODE);
        histogram(out, "vllm:request_prefill_kv_computed_tokens",
            "Histogram of new KV tokens computed during prefill (excluding cached tokens).", Hist.PREFILL_KV_COMPUTED);
        histogram(out, "vllm:request_num_preemptions", "Histogram of the number of times a request was preempted.",
            Hist.NUM_PREEMPTIONS);
        if (engines.get(0).metrics().kvCacheMetrics)
        {
            final String sampled = " Sampled metrics (controlled by --kv-cache-metrics-sample).";
            histogram(out, "vllm:kv_block_lifetime_seconds", "Histogram of KV cache block lifetime from allocation " +
                "to eviction." + sampled, Hist.KV_LIFETIME);
            histogram(out, "vllm:kv_block_idle_before_evict_seconds", "Histogram of idle time before KV cache block " +
                "eviction." + sampled, Hist.KV_IDLE);
            histogram(out, "vllm:kv_block_reuse_gap_seconds", "Histogram of time gaps between consecutive KV cache " +
                "block accesses. Only the most recent accesses are recorded (ring buffer)." + sampled,
                Hist.KV_REUSE_GAP);
        }
    }

    private enum Gauge
    {
        RUNNING, WAITING, KV_USAGE
    }

    private enum Counter
    {
        ZERO, PREFIX_QUERIES, PREFIX_HITS, EXTERNAL_QUERIES, EXTERNAL_HITS, PREEMPTIONS, PROMPT, PROMPT_CACHED,
        PROMPT_RECOMPUTED, GENERATION, SPEC_DRAFTS, SPEC_DRAFT_TOKENS, SPEC_ACCEPTED_TOKENS
    }

    private enum Hist
    {
        PROMPT_TOKENS, GENERATION_TOKENS, ITERATION_TOKENS, MAX_GENERATION_TOKENS, PARAMS_N, PARAMS_MAX_TOKENS, TTFT,
        ITL, TPOT, E2E, QUEUE, INFERENCE, PREFILL, DECODE, PREFILL_KV_COMPUTED, NUM_PREEMPTIONS, KV_LIFETIME, KV_IDLE,
        KV_REUSE_GAP
    }

    private void gauge(final StringBuilder out, final String name, final String help, final Gauge which)
    {
        header(out, name, help, "gauge");
        for (int e = 0; e < engines.size(); e++)
        {
            final MetricsSource engine = engines.get(e);
            final double value;
            switch (which)
            {
                case RUNNING:
                    value = engine.numRunning();
                    break;
                case WAITING:
                    value = engine.numWaiting();
                    break;
                default:
                    value = engine.kvCacheUsage();
            }
            sample(out, name, e, null, null, value);
        }
    }

    private void waitingByReason(final StringBuilder out)
    {
        final String name = "vllm:num_requests_waiting_by_reason";
        header(out, name, "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for " +
            "scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked " +
            "status). Sum of all reasons equals vllm:num_requests_waiting.", "gauge");
        for (int e = 0; e < engines.size(); e++)
        {
            final int deferred = engines.get(e).numWaitingDeferred();
            sample(out, name, e, "reason", "capacity", engines.get(e).numWaiting() - deferred);
            sample(out, name, e, "reason", "deferred", deferred);
        }
    }

    /** {@code vllm:engine_sleep_state}: awake. */
    public static final int SLEEP_AWAKE = 0;
    /** Asleep with the weights in place (level 0: scheduling paused; or a partial wake-up). */
    public static final int SLEEP_PAUSED = 1;
    /** Asleep at level 1: weights offloaded. */
    public static final int SLEEP_WEIGHTS_OFFLOADED = 2;
    /** Asleep at level 2: weights and KV cache discarded. */
    public static final int SLEEP_DISCARD_ALL = 3;
    private java.util.function.IntSupplier sleepState = () -> SLEEP_AWAKE;
    private int firstEngine;

    private void sleepState(final StringBuilder out)
    {
        final String name = "vllm:engine_sleep_state";
        header(out, name, "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is " +
            "awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.", "gauge");
        final int state = sleepState.getAsInt();
        for (int e = 0; e < engines.size(); e++)
        {
            sample(out, name, e, "sleep_state", "awake", SLEEP_AWAKE == state ? 1 : 0);
            sample(out, name, e, "sleep_state", "weights_offloaded", SLEEP_WEIGHTS_OFFLOADED == state ? 1 : 0);
            sample(out, name, e, "sleep_state", "discard_all", SLEEP_DISCARD_ALL == state ? 1 : 0);
        }
    }

    /**
     * @param value the engines' sleep state, read at each scrape on the scraping thread: {@link #SLEEP_AWAKE},
     *     {@link #SLEEP_PAUSED}, {@link #SLEEP_WEIGHTS_OFFLOADED} or {@link #SLEEP_DISCARD_ALL} (default: awake).
     * @return this.
     */
    public PrometheusExposition sleepState(final java.util.function.IntSupplier value)
    {
        sleepState = value;
        return this;
    }

    private void counter(final StringBuilder out, final String name, final String help, final Counter which)
    {
        header(out, name + "_total", help, "counter");
        for (int e = 0; e < engines.size(); e++)
        {
            sample(out, name + "_total", e, null, null, counterValue(engines.get(e).metrics(), which));
        }
        created(out, name, help, null, null);
    }

    private static long counterValue(final EngineMetrics m, final Counter which)
    {
        switch (which)
        {
            case PREFIX_QUERIES:
                return m.prefixCacheQueries;
            case PREFIX_HITS:
                return m.prefixCacheHits;
            case EXTERNAL_QUERIES:
                return m.externalPrefixCacheQueries;
            case EXTERNAL_HITS:
                return m.externalPrefixCacheHits;
            case PREEMPTIONS:
                return m.numPreemptions;
            case PROMPT:
                return m.promptTokens;
            case PROMPT_CACHED:
                return m.promptTokensLocalCacheHit + m.promptTokensExternal - m.promptTokensRecomputed;
            case PROMPT_RECOMPUTED:
                return m.promptTokensRecomputed;
            case GENERATION:
                return m.generationTokens;
            case SPEC_DRAFTS:
                return m.specDrafts;
            case SPEC_DRAFT_TOKENS:
                return m.specDraftTokens;
            case SPEC_ACCEPTED_TOKENS:
                return m.specAcceptedTokens;
            default:
                return 0;
        }
    }

    /** vLLM's {@code SpecDecodingProm}: present only when speculative decoding is configured. */
    private void specDecode(final StringBuilder out)
    {
        int positions = 0;
        for (final MetricsSource engine : engines)
        {
            positions = Math.max(positions, engine.metrics().numSpeculativeTokens());
        }
        if (0 == positions)
        {
            return;
        }
        counter(out, "vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", Counter.SPEC_DRAFTS);
        counter(out, "vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", Counter.SPEC_DRAFT_TOKENS);
        counter(out, "vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
            Counter.SPEC_ACCEPTED_TOKENS);
        final String name = "vllm:spec_decode_num_accepted_tokens_per_pos";
        final String help = "Accepted tokens per draft position.";
        header(out, name + "_total", help, "counter");
        final String[] values = new String[positions];
        for (int e = 0; e < engines.size(); e++)
        {
            final EngineMetrics m = engines.get(e).metrics();
            for (int p = 0; p < m.numSpeculativeTokens(); p++)
            {
                values[p] = Integer.toString(p);
                sample(out, name + "_total", e, "position", values[p], m.specAcceptedTokensAt(p));
            }
        }
        created(out, name, help, "position", values);
    }

    private void promptTokensBySource(final StringBuilder out)
    {
        labelledCounter(out, "vllm:prompt_tokens_by_source", "Number of prompt tokens by source.", "source",
            new String[] {"local_compute", "local_cache_hit", "external_kv_transfer"}, (e, source) ->
            {
                final EngineMetrics m = engines.get(e).metrics();
                return 0 == source ? m.promptTokensLocalCompute : 1 == source ? m.promptTokensLocalCacheHit :
                    m.promptTokensExternal;
            });
    }

    /**
     * A counter family with one label: a sample per engine and label value.
     *
     * @param value the count of engine {@code e} for label value {@code v} (an index into {@code values}).
     */
    private void labelledCounter(final StringBuilder out, final String name, final String help, final String label,
        final String[] values, final CountOf value)
    {
        header(out, name + "_total", help, "counter");
        for (int e = 0; e < engines.size(); e++)
        {
            for (int v = 0; v < values.length; v++)
            {
                sample(out, name + "_total", e, label, values[v], value.of(e, v));
            }
        }
        created(out, name, help, label, values);
    }

    private void requestSuccess(final StringBuilder out)
    {
        final String name = "vllm:request_success";
        final String help = "Count of successfully processed requests.";
        header(out, name + "_total", help, "counter");
        final EngineMetrics.FinishLabel[] labels = EngineMetrics.FinishLabel.values();
        final String[] values = new String[labels.length];
        for (int e = 0; e < engines.size(); e++)
        {
            final EngineMetrics m = engines.get(e).metrics();
            for (int l = 0; l < labels.length; l++)
            {
                values[l] = labels[l].label();
                sample(out, name + "_total", e, "finished_reason", values[l], m.requestSuccess[l]);
            }
        }
        created(out, name, help, "finished_reason", values);
    }

    private void histogram(final StringBuilder out, final String name, final String help, final Hist which)
    {
        histogram(out, name, help, e -> histogramOf(engines.get(e).metrics(), which));
    }

    /** vLLM's offloading connector: bytes, seconds and transfer sizes by {@code transfer_type}. */
    private void offload(final StringBuilder out)
    {
        final String[] types = OffloadMetrics.TRANSFER_TYPES;
        labelledCounter(out, "vllm:kv_offload_total_bytes", "Number of bytes offloaded by KV connector",
            "transfer_type", types, (e, t) -> offloadOf(e).bytes[t]);
        labelledCounter(out, "vllm:kv_offload_total_time", "Total time measured by all KV offloading operations",
            "transfer_type", types, (e, t) -> offloadOf(e).seconds[t]);
        histogram(out, "vllm:kv_offload_size", "Histogram of KV offload transfer size, in bytes.", "transfer_type",
            types, (e, t) -> offloadOf(e).sizes[t]);
    }

    private OffloadMetrics offloadOf(final int engine)
    {
        return engines.get(engine).metrics().offload();
    }

    private void nixl(final StringBuilder out)
    {
        histogram(out, "vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.",
            e -> nixlMetrics.get(e).xferTimeSeconds);
        histogram(out, "vllm:nixl_post_time_seconds", "Histogram of transfer post time for NIXL KV Cache transfers.",
            e -> nixlMetrics.get(e).postTimeSeconds);
        histogram(out, "vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.",
            e -> nixlMetrics.get(e).bytesTransferred);
        histogram(out, "vllm:nixl_num_descriptors", "Histogram of number of descriptors per NIXL  KV Cache " +
            "transfers.", e -> nixlMetrics.get(e).numDescriptors);
        nixlCounter(out, "vllm:nixl_num_failed_transfers", "Number of failed NIXL KV Cache transfers.",
            e -> nixlMetrics.get(e).numFailedTransfers);
        nixlCounter(out, "vllm:nixl_num_failed_notifications", "Number of failed NIXL KV Cache notifications.",
            e -> nixlMetrics.get(e).numFailedNotifications);
        nixlCounter(out, "vllm:nixl_num_kv_expired_reqs", "Number of requests that had their KV expire.",
            e -> nixlMetrics.get(e).numKvExpiredReqs);
    }

    private void nixlCounter(final StringBuilder out, final String name, final String help,
        final java.util.function.IntToLongFunction value)
    {
        header(out, name + "_total", help, "counter");
        for (int e = 0; e < engines.size(); e++)
        {
            sample(out, name + "_total", e, null, null, value.applyAsLong(e));
        }
        created(out, name, help, null, null);
    }

    private void histogram(final StringBuilder out, final String name, final String help,
        final java.util.function.IntFunction<Histogram> perEngine)
    {
        histogram(out, name, help, null, new String[] {null}, (e, v) -> perEngine.apply(e));
    }

    /**
     * A histogram family, with one label or none ({@code label} null, {@code values} one null): buckets, count and
     * sum per engine and label value. A label is written after {@code model_name}, where Prometheus' order puts
     * {@code transfer_type}.
     */
    private void histogram(final StringBuilder out, final String name, final String help, final String label,
        final String[] values, final PerEngineAndLabel<Histogram> perEngine)
    {
        header(out, name, help, "histogram");
        for (int e = 0; e < engines.size(); e++)
        {
            for (int v = 0; v < values.length; v++)
            {
                final Histogram h = perEngine.of(e, v);
                final double[] bounds = h.upperBounds();
                long cumulative = 0;
                for (int b = 0; b <= bounds.length; b++)
                {
                    cumulative += h.bucketCount(b);
                    out.append(name).append("_bucket{engine=\"").append(firstEngine + e).append("\",le=\"")
                        .append(b < bounds.length ? GoFloat.format(bounds[b]) : "+Inf")
                        .append("\",model_name=\"").append(modelName);
                    if (null != label)
                    {
                        out.append("\",").append(label).append("=\"").append(values[v]);
                    }
                    out.append("\"} ").append(GoFloat.format(cumulative)).append('\n');
                }
                sample(out, name + "_count", e, label, values[v], h.count());
                sample(out, name + "_sum", e, label, values[v], h.sum());
            }
        }
        created(out, name, help, label, null == label ? null : values);
    }

    /** The histogram of engine {@code engine} and label value {@code labelValue} (an index). */
    private interface PerEngineAndLabel<T>
    {
        T of(int engine, int labelValue);
    }

    /** The count of engine {@code engine} and label value {@code labelValue} (an index). */
    private interface CountOf
    {
        double of(int engine, int labelValue);
    }

    private static Histogram histogramOf(final EngineMetrics m, final Hist which)
    {
        switch (which)
        {
            case PROMPT_TOKENS:
                return m.requestPromptTokens;
            case GENERATION_TOKENS:
                return m.requestGenerationTokens;
            case ITERATION_TOKENS:
                return m.iterationTokens;
            case MAX_GENERATION_TOKENS:
                return m.requestMaxNumGenerationTokens;
            case PARAMS_N:
                return m.requestParamsN;
            case PARAMS_MAX_TOKENS:
                return m.requestParamsMaxTokens;
            case TTFT:
                return m.timeToFirstToken;
            case KV_LIFETIME:
                return m.kvBlockLifetime;
            case KV_IDLE:
                return m.kvBlockIdleBeforeEvict;
            case KV_REUSE_GAP:
                return m.kvBlockReuseGap;
            case ITL:
                return m.interTokenLatency();
            case TPOT:
                return m.requestTimePerOutputToken;
            case E2E:
                return m.e2eRequestLatency;
            case QUEUE:
                return m.requestQueueTime;
            case INFERENCE:
                return m.requestInferenceTime;
            case PREFILL:
                return m.requestPrefillTime;
            case DECODE:
                return m.requestDecodeTime;
            case PREFILL_KV_COMPUTED:
                return m.requestPrefillKvComputedTokens;
            default:
                return m.requestNumPreemptions;
        }
    }

    private void cacheConfigInfo(final StringBuilder out)
    {
        final String name = "vllm:cache_config_info";
        header(out, name, "Information of the LLMEngine CacheConfig", "gauge");
        for (int e = 0; e < engines.size(); e++)
        {
            final Map<String, String> labels = new java.util.TreeMap<>(cacheConfigLabels.get(e));
            labels.put("engine", Integer.toString(firstEngine + e));
            out.append(name).append('{');
            boolean first = true;
            for (final Map.Entry<String, String> label : labels.entrySet())
            {
                out.append(first ? "" : ",").append(label.getKey()).append("=\"").append(escape(label.getValue()))
                    .append('"');
                first = false;
            }
            out.append("} 1.0\n");
        }
    }

    private void created(final StringBuilder out, final String name, final String help, final String label,
        final String[] values)
    {
        header(out, name + "_created", help, "gauge");
        for (int e = 0; e < engines.size(); e++)
        {
            if (null == label)
            {
                sample(out, name + "_created", e, null, null, createdEpochSeconds);
            }
            else
            {
                for (final String value : values)
                {
                    sample(out, name + "_created", e, label, value, createdEpochSeconds);
                }
            }
        }
    }

    private static void header(final StringBuilder out, final String name, final String help, final String type)
    {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private void sample(
        final StringBuilder out,
        final String name,
        final int engine,
        final String label,
        final String labelValue,
        final double value)
    {
        out.append(name).append("{engine=\"").append(firstEngine + engine).append('"');
        final boolean labelBeforeModel = null != label && label.compareTo("model_name") < 0;
        if (labelBeforeModel)
        {
            out.append(',').append(label).append("=\"").append(labelValue).append('"');
        }
        out.append(",model_name=\"").append(modelName).append('"');
        if (null != label && !labelBeforeModel)
        {
            out.append(',').append(label).append("=\"").append(labelValue).append('"');
        }
        out.append("} ").append(GoFloat.format(value)).append('\n');
    }

    /**
     * @param value a label value.
     * @return it escaped for the Prometheus text format (backslash, double quote, newline).
     */
    public static String escape(final String value)
    {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
