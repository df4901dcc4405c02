package dev.tapedeck.metrics;

/**
 * The counters and histograms vLLM's V1 engine reports, for one engine, with vLLM's bucket boundaries and
 * observation rules (see docs/metrics.md). Gauges (running, waiting, KV usage) are read from the engine at scrape
 * time and are not stored here.
 * <p>
 * <b>Single writer</b>: the engine's thread updates it; read it on the same thread (in {@code serve}, {@code /metrics}
 * runs on the engine's event loop). Updates allocate nothing.
 */
public final class EngineMetrics implements dev.tapedeck.kv.KvResidency.Listener
{
    /** {@code kv_cache_residency} family ({@code --kv-cache-metrics}). */
    static final double[] KV_RESIDENCY_BUCKETS = {
        0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800,
    };
    /** {@code request_latency} family. */
    static final double[] REQUEST_LATENCY_BUCKETS = {
        0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
        1920.0, 7680.0,
    };
    /** {@code time_to_first_token} family. */
    static final double[] TTFT_BUCKETS = {
        0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
        160.0, 640.0, 2560.0,
    };
    /** {@code inter_token_latency} family. */
    static final double[] ITL_BUCKETS = {
        0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
    };
    /** {@code iteration_tokens} family. */
    static final double[] ITERATION_TOKENS_BUCKETS = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    /** {@code request_params_n} family. */
    static final double[] PARAMS_N_BUCKETS = {1, 2, 5, 10, 20};
    /** {@code request_num_preemptions} family. */
    static final double[] PREEMPTIONS_BUCKETS = {1, 2, 3, 4, 5, 10, 20};

    private static final double NS_PER_SECOND = 1e9;

    final long[] requestSuccess = new long[FinishLabel.values().length];
    long promptTokens;
    long promptTokensLocalCompute;
    long promptTokensLocalCacheHit;
    long promptTokensExternal;
    /** vLLM's {@code prompt_tokens_recomputed}: a prompt cached but for its last token counts that token twice. */
    long promptTokensRecomputed;
    long externalPrefixCacheQueries;
    long externalPrefixCacheHits;
    long generationTokens;
    long prefixCacheRequests;
    long prefixCacheQueries;
    long prefixCacheHits;
    long numPreemptions;
    long specDrafts;
    long specDraftTokens;
    long specAcceptedTokens;
    /** Accepted drafts per draft position, or null without speculative decoding. */
    long[] specAcceptedPerPosition;

    /** KV-block residency ({@code --kv-cache-metrics}): lifetime, idle time before eviction, reuse gaps. */
    final Histogram kvBlockLifetime = new Histogram(KV_RESIDENCY_BUCKETS);
    final Histogram kvBlockIdleBeforeEvict = new Histogram(KV_RESIDENCY_BUCKETS);
    final Histogram kvBlockReuseGap = new Histogram(KV_RESIDENCY_BUCKETS);
    boolean kvCacheMetrics;
    /** The host KV tier's transfers ({@code --kv-offloading-size}, an offloading connector), or null. */
    private OffloadMetrics offload;
    /** {@code --enable-mfu-metrics}: the step estimate, or null; and the estimated totals per GPU. */
    private MfuEstimate mfu;
    double estimatedFlops;
    double estimatedReadBytes;
    double estimatedWriteBytes;
    final Histogram requestPromptTokens;
    final Histogram requestGenerationTokens;
    final Histogram iterationTokens = new Histogram(ITERATION_TOKENS_BUCKETS);
    final Histogram requestMaxNumGenerationTokens;
    final Histogram requestParamsN = new Histogram(PARAMS_N_BUCKETS);
    final Histogram requestParamsMaxTokens;
    final Histogram timeToFirstToken = new Histogram(TTFT_BUCKETS);
    final Histogram interTokenLatency = new Histogram(ITL_BUCKETS);
    /** A run of {@link #pendingGaps} equal inter-token gaps of {@link #pendingGapNs}, not yet observed. */
    private long pendingGapNs = -1;
    private long pendingGaps;
    final Histogram requestTimePerOutputToken = new Histogram(ITL_BUCKETS);
    final Histogram e2eRequestLatency = new Histogram(REQUEST_LATENCY_BUCKETS);
    final Histogram requestQueueTime = new Histogram(REQUEST_LATENCY_BUCKETS);
    final Histogram requestInferenceTime = new Histogram(REQUEST_LATENCY_BUCKETS);
    final Histogram requestPrefillTime = new Histogram(REQUEST_LATENCY_BUCKETS);
    final Histogram requestDecodeTime = new Histogram(REQUEST_LATENCY_BUCKETS);
    final Histogram requestPrefillKvComputedTokens;
    final Histogram requestNumPreemptions = new Histogram(PREEMPTIONS_BUCKETS);

    /** The {@code finished_reason} label values, in vLLM's order. */
    public enum FinishLabel
    {
        /** EOS, stop token or stop string. */
        STOP,
        /** max_tokens or context length. */
        LENGTH,
        /** Aborted by the client. */
        ABORT,
        /** Engine error. */
        ERROR,
        /** Repetition detector (newer vLLM lines). */
        REPETITION;

        String label()
        {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * @param maxModelLen the engine's context length (token-count histograms use 1-2-5 buckets up to it).
     */
    public EngineMetrics(final int maxModelLen)
    {
        final double[] tokenBuckets = Histogram.oneTwoFive(maxModelLen);
        requestPromptTokens = new Histogram(tokenBuckets);
        requestGenerationTokens = new Histogram(tokenBuckets);
        requestMaxNumGenerationTokens = new Histogram(tokenBuckets);
        requestParamsMaxTokens = new Histogram(tokenBuckets);
        requestPrefillKvComputedTokens = new Histogram(tokenBuckets);
    }

    /**
     * Export the KV-block residency histograms ({@code --kv-cache-metrics}).
     */
    public void enableKvCacheMetrics()
    {
        kvCacheMetrics = true;
    }

    @Override
    public void onBlockEvicted(final long lifetimeNs, final long idleNs)
    {
        kvBlockLifetime.observe(lifetimeNs / NS_PER_SECOND);
        kvBlockIdleBeforeEvict.observe(idleNs / NS_PER_SECOND);
    }

    @Override
    public void onBlockReuseGap(final long gapNs)
    {
        kvBlockReuseGap.observe(gapNs / NS_PER_SECOND);
    }

    /**
     * A request's prompt finished computing and its first token was emitted.
     *
     * @param ttftNs arrival to first token.
     * @param promptTokens prompt length.
     * @param cachedTokens prompt tokens not computed here: from the prefix cache or pulled from a remote engine.
     * @param externalTokens of those, the ones pulled from a remote engine (P/D).
     */
    public void onFirstToken(final long ttftNs, final int promptTokens, final int cachedTokens,
        final int externalTokens)
    {
        timeToFirstToken.observe(ttftNs / NS_PER_SECOND);
        this.promptTokens += promptTokens;
        // vLLM caches at most all but the last prompt token; when that much hit, the last one is computed again and
        // counts both as a hit and as recomputed
        final int recomputed = cachedTokens > 0 && cachedTokens + 1 == promptTokens ? 1 : 0;
        promptTokensRecomputed += recomputed;
        promptTokensLocalCacheHit += cachedTokens - externalTokens + recomputed;
        promptTokensExternal += externalTokens;
        promptTokensLocalCompute += promptTokens - cachedTokens;
        generationTokens++;
    }

    /**
     * The KV connector was asked about a new request (vLLM's external prefix cache).
     *
     * @param queriedTokens the request's tokens.
     * @param hitTokens tokens a remote engine holds for it.
     */
    public void onExternalPrefixLookup(final int queriedTokens, final int hitTokens)
    {
        externalPrefixCacheQueries += queriedTokens;
        externalPrefixCacheHits += hitTokens;
    }

    /**
     * A token other than the first was emitted.
     *
     * @param gapNs time since the request's previous token.
     */
    public void onNextToken(final long gapNs)
    {
        if (gapNs != pendingGapNs)
        {
            flushTokenGaps();
            pendingGapNs = gapNs;
        }
        pendingGaps++;
        generationTokens++;
    }

    /**
     * Observe the run of equal inter-token gaps held since the last call: a step's decodes mostly share one gap, so
     * {@link #onNextToken} counts a run and the histogram takes it at once. The engine calls this at the end of each
     * step (only a step's decodes observe a gap; a released first token does not), so no run is held between steps;
     * {@link #interTokenLatency()} calls it too.
     */
    public void flushTokenGaps()
    {
        if (pendingGaps > 0)
        {
            interTokenLatency.observe(pendingGapNs / NS_PER_SECOND, pendingGaps);
            pendingGaps = 0;
        }
    }

    /**
     * A token after the first of one output (the rest of a speculative-decoding burst): counted, no new gap.
     */
    public void onChunkToken()
    {
        generationTokens++;
    }

    /**
     * Count speculative decoding ({@code vllm:spec_decode_*}) with {@code K} draft positions.
     *
     * @param numSpeculativeTokens {@code K}, at least 1.
     */
    public void enableSpecDecode(final int numSpeculativeTokens)
    {
        specAcceptedPerPosition = new long[numSpeculativeTokens];
    }

    /**
     * One request's drafts were verified in a step (vLLM's {@code SpecDecodingStats.observe_draft}).
     *
     * @param draftTokens drafts scheduled, at least 1.
     * @param acceptedTokens drafts accepted, a leading run.
     */
    public void onSpecDraft(final int draftTokens, final int acceptedTokens)
    {
        specDrafts++;
        specDraftTokens += draftTokens;
        specAcceptedTokens += acceptedTokens;
        for (int i = 0; i < acceptedTokens; i++)
        {
            specAcceptedPerPosition[i]++;
        }
    }

    /**
     * @return {@code K} when speculative decoding is counted, else 0.
     */
    public int numSpeculativeTokens()
    {
        return null == specAcceptedPerPosition ? 0 : specAcceptedPerPosition.length;
    }

    /**
     * @return drafts verified so far ({@code vllm:spec_decode_num_drafts}).
     */
    public long specDrafts()
    {
        return specDrafts;
    }

    /**
     * @return draft tokens verified so far ({@code vllm:spec_decode_num_draft_tokens}).
     */
    public long specDraftTokens()
    {
        return specDraftTokens;
    }

    /**
     * @return draft tokens accepted so far ({@code vllm:spec_decode_num_accepted_tokens}).
     */
    public long specAcceptedTokens()
    {
        return specAcceptedTokens;
    }

    /**
     * @param position 0-based draft position, below {@link #numSpeculativeTokens()}.
     * @return drafts whose token at that position was accepted.
     */
    public long specAcceptedTokensAt(final int position)
    {
        return specAcceptedPerPosition[position];
    }

    /**
     * A step completed.
     *
     * @param computedTokens prompt tokens computed plus tokens generated in the step.
     * @param step the step's batch (for the MFU estimate).
     */
    public void onStep(final int computedTokens, final dev.tapedeck.latency.StepShape step)
    {
        iterationTokens.observe(computedTokens);
        if (null != mfu)
        {
            mfu.add(step, this);
        }
    }

    /**
     * Count vLLM's MFU estimates per step ({@code --enable-mfu-metrics}).
     *
     * @param value the model's estimate.
     */
    public void enableMfu(final MfuEstimate value)
    {
        mfu = value;
    }

    /**
     * Prefix-cache lookup of a new request.
     *
     * @param queriedTokens prompt tokens looked up.
     * @param hitTokens prompt tokens found.
     */
    public void onPrefixCacheLookup(final int queriedTokens, final int hitTokens)
    {
        prefixCacheRequests++;
        prefixCacheQueries += queriedTokens;
        prefixCacheHits += hitTokens;
    }

    /**
     * A running request was preempted.
     */
    public void onPreemption()
    {
        numPreemptions++;
    }

    /**
     * A request finished; observes the per-request histograms. Phases a request never reached (never scheduled, no
     * token) are not observed.
     *
     * @param label finish reason.
     * @param timing the request's lifecycle times.
     */
    public void onFinished(final FinishLabel label, final RequestTiming timing)
    {
        requestSuccess[label.ordinal()]++;
        e2eRequestLatency.observe((timing.finishedNs() - timing.arrivalNs()) / NS_PER_SECOND);
        requestPromptTokens.observe(timing.promptTokens());
        requestGenerationTokens.observe(timing.generationTokens());
        requestPrefillKvComputedTokens.observe(timing.promptTokens() - timing.cachedTokens());
        requestNumPreemptions.observe(timing.preemptions());
        if (timing.parallelN() > 0)
        {
            requestParamsN.observe(timing.parallelN());
            requestMaxNumGenerationTokens.observe(timing.generationTokens());
        }
        if (timing.maxTokens() > 0)
        {
            requestParamsMaxTokens.observe(timing.maxTokens());
        }
        if (0 != timing.scheduledNs())
        {
            requestQueueTime.observe((timing.scheduledNs() - timing.queuedNs()) / NS_PER_SECOND);
            if (0 != timing.firstTokenNs())
            {
                requestPrefillTime.observe((timing.firstTokenNs() - timing.scheduledNs()) / NS_PER_SECOND);
                requestInferenceTime.observe((timing.lastTokenNs() - timing.scheduledNs()) / NS_PER_SECOND);
                final long decodeNs = timing.lastTokenNs() - timing.firstTokenNs();
                requestDecodeTime.observe(decodeNs / NS_PER_SECOND);
                final int generated = timing.generationTokens();
                requestTimePerOutputToken.observe(generated > 1 ? decodeNs / NS_PER_SECOND / (generated - 1) : 0.0);
            }
        }
    }

    /**
     * @param label a finish reason.
     * @return requests finished with it.
     */
    public long requestSuccess(final FinishLabel label)
    {
        return requestSuccess[label.ordinal()];
    }

    /**
     * @return prompt tokens of requests whose prefill completed.
     */
    public long promptTokens()
    {
        return promptTokens;
    }

    /**
     * @return tokens generated.
     */
    public long generationTokens()
    {
        return generationTokens;
    }

    /**
     * @return requests that looked up the prefix cache.
     */
    public long prefixCacheRequests()
    {
        return prefixCacheRequests;
    }

    /**
     * @return prompt tokens looked up in the prefix cache.
     */
    public long prefixCacheQueries()
    {
        return prefixCacheQueries;
    }

    /**
     * @return prompt tokens a KV connector supplied (loaded instead of computed), since start.
     */
    public long externalPrefixCacheHits()
    {
        return externalPrefixCacheHits;
    }

    /**
     * @return prompt tokens looked up in a KV connector, since start.
     */
    public long externalPrefixCacheQueries()
    {
        return externalPrefixCacheQueries;
    }

    /**
     * @return prompt tokens found in the prefix cache.
     */
    public long prefixCacheHits()
    {
        return prefixCacheHits;
    }

    /**
     * @return preemptions.
     */
    public long numPreemptions()
    {
        return numPreemptions;
    }

    /**
     * @return the time-to-first-token histogram.
     */
    public Histogram timeToFirstToken()
    {
        return timeToFirstToken;
    }

    /**
     * @return the inter-token-latency histogram.
     */
    public Histogram interTokenLatency()
    {
        flushTokenGaps();
        return interTokenLatency;
    }

    /**
     * What {@link #onFinished} reads of a request, so metrics need not know the engine's request type.
     */
    public interface RequestTiming
    {
        /** @return arrival at the server. */
        long arrivalNs();

        /** @return entry into the waiting queue. */
        long queuedNs();

        /** @return first scheduling, 0 if never. */
        long scheduledNs();

        /** @return first token, 0 if none. */
        long firstTokenNs();

        /** @return last token, 0 if none. */
        long lastTokenNs();

        /** @return finish. */
        long finishedNs();

        /** @return prompt length. */
        int promptTokens();

        /** @return prompt tokens from the prefix cache. */
        int cachedTokens();

        /** @return tokens generated. */
        int generationTokens();

        /** @return {@code max_tokens} if the client set it, else 0. */
        int maxTokens();

        /** @return the request's {@code n} on the one child that reports it, 0 on the others. */
        int parallelN();

        /** @return times preempted. */
        int preemptions();
    }

    /**
     * Report a host KV tier's transfers ({@code vllm:kv_offload_*}).
     *
     * @param value the tier's metrics.
     */
    public void offload(final OffloadMetrics value)
    {
        offload = value;
    }

    /**
     * @return the host KV tier's metrics, or null without one.
     */
    public OffloadMetrics offload()
    {
        return offload;
    }
}
