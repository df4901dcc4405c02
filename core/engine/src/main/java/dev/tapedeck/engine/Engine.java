package dev.tapedeck.engine;

import dev.tapedeck.time.DeadlineTimers;
import java.util.concurrent.TimeUnit;

import org.agrona.DeadlineTimerWheel;
import org.agrona.collections.Long2ObjectHashMap;

import dev.tapedeck.kv.BlockPool;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.metrics.EngineMetrics;
import dev.tapedeck.metrics.MetricsSource;

/**
 * A simulated vLLM engine core: a single-threaded state machine that schedules requests into steps, times each step
 * with a {@link LatencyModel}, and emits one token per running request per step to an {@link OutputSink}.
 * <p>
 * Time comes from the caller: every entry point takes {@code nowNs}, and the driver calls {@link #doWork(long)} at
 * or after {@link #nextDeadlineNs()}. The same engine therefore runs on a Netty event loop ({@code serve}), an Agrona
 * agent ({@code play}), or a virtual clock ({@link VirtualTimeDriver}: {@code inspect gen-demo}, tests). Steps are
 * anchored to the end of the previous step, so a late driver catches up without drift.
 * <p>
 * <b>Threading</b>: not thread safe. Every method must be called from the one thread that owns the engine.
 * Nothing is allocated per token; requests are allocated by the faces, one per request.
 */
public final class Engine implements Scheduler.Admission, DeadlineTimerWheel.TimerHandler, MetricsSource
{
    private static final int MAX_ROUNDS_PER_CALL = 8;
    private static final EngineMetrics.FinishLabel[] FINISH_LABELS = {
        EngineMetrics.FinishLabel.STOP, EngineMetrics.FinishLabel.LENGTH,
        EngineMetrics.FinishLabel.ABORT, EngineMetrics.FinishLabel.ERROR,
    };

    private final EngineConfig config;
    final Scheduler scheduler; // package-private: tests reach the scheduler's switches
    private final KvCache kv;
    private final Step step;
    private final DeadlineTimers clock;
    private final LatencyModel latencyModel;
    private final StepTimer stepTimer;
    /** Salts the seed of the frontend delays' draws. */
    private static final long FRONTEND_STREAM = 0x6672_6f6e_7465_6e64L;

    private final SeededRandom random;
    private final EngineMetrics metrics;
    private final RequestObserver observer;
    private final Long2ObjectHashMap<Request> heldByTimerId = new Long2ObjectHashMap<>();
    private final RemoteKvLoads remoteLoads;
    private final SpeculativeDecoding speculative;
    private final Request[] released;
    private final TokenSource tokens;
    private OutputSink sink;
    private boolean batchPerStep;

    private long stepTimerId = -1;
    private boolean stepInFlight;
    private boolean stepDue;
    private int releasedCount;
    private long lastStepEndNs;
    private final ChurnRegime churnRegime = new ChurnRegime();
    private long stepSequence;
    private long arrivalSequence;
    private boolean shuttingDown;
    private int stepPrefillTokens;

    /**
     * @param config concluded configuration.
     * @param sink where outputs go.
     * @param startNs the engine's time at creation.
     */
    public Engine(final EngineConfig config, final OutputSink sink, final long startNs)
    {
        if (!config.isConcluded())
        {
            throw new IllegalStateException("EngineConfig.conclude() must be called first");
        }
        this.config = config;
        this.sink = sink;
        this.batchPerStep = sink.batchPerStep();
        this.metrics = config.newMetrics();
        this.kv = new KvCache(config, metrics);
        this.scheduler = new Scheduler(config, kv);
        this.step = new Step(config.maxNumSeqs());
        this.clock = new DeadlineTimers(startNs);
        this.latencyModel = config.latencyModel();
        this.stepTimer = new StepTimer(latencyModel);
        this.observer = config.requestObserver();
        this.random = new SeededRandom(config.seed());
        this.speculative = config.speculativeDecoding();
        this.released = new Request[config.maxNumSeqs()];
        this.tokens = new TokenSource(config);
        final KvConnector connector = CpuOffloadConnector.connectorOf(config, metrics, kv);
        this.remoteLoads = null == connector ? null :
            new RemoteKvLoads(connector, kv, scheduler.waiting(), clock, metrics, this::finish);
        this.lastStepEndNs = startNs;
    }

    /**
     * Replace the sink (a face that is built after its engine).
     *
     * @param value the new sink.
     */
    public void sink(final OutputSink value)
    {
        sink = value;
        batchPerStep = value.batchPerStep();
    }

    /** @return the configuration. */
    public EngineConfig config()
    {
        return config;
    }

    /**
     * @return this engine's metrics (read them on the engine's thread).
     */
    public EngineMetrics metrics()
    {
        return metrics;
    }

    /**
     * Check whether a request fits the context window, without submitting it.
     *
     * @param promptTokens prompt length.
     * @param maxTokens requested output, or {@link Request#UNSET}.
     * @return true when prompt plus output fit {@code max-model-len}.
     */
    public boolean fitsContext(final int promptTokens, final int maxTokens)
    {
        final long requested = Request.UNSET == maxTokens ? 1 : maxTokens;
        return promptTokens + requested <= config.maxModelLen();
    }

    /**
     * @param request a request not yet submitted.
     * @return its prompt tokens this engine's prefix cache holds now, in whole leading blocks; nothing changes.
     */
    public int cachedPromptTokens(final Request request)
    {
        return kv.peekCachedTokens(request);
    }

    /**
     * Queue a request. On {@link SubmitResult#ACCEPTED} the engine owns it and will report its tokens and finish.
     * It is scheduled at the next {@link #doWork(long)} (a face submits all children of a client request first, so
     * they share a step, as in vLLM).
     *
     * @param request a new request.
     * @param nowNs current time.
     * @return the outcome.
     */
    public SubmitResult submit(final Request request, final long nowNs)
    {
        if (shuttingDown)
        {
            return SubmitResult.SHUTTING_DOWN;
        }
        final int promptLength = request.promptLength();
        final int maxTokens = request.maxTokens();
        if (0 == promptLength || (Request.UNSET != maxTokens && maxTokens < 1) || request.minTokens() < 0)
        {
            return SubmitResult.INVALID;
        }
        if (!fitsContext(promptLength, maxTokens))
        {
            return SubmitResult.TOO_LONG;
        }
        if (scheduler.waiting().size() >= config.maxWaitingQueueLength())
        {
            return SubmitResult.QUEUE_FULL;
        }
        request.random.reseed(request.hasSeed() ? request.seed() : SeededRandom.mix(config.seed(), arrivalSequence));
        tokens.plan(request);
        kv.prepare(request);
        request.arrivalSequence = arrivalSequence++;
        final Request first = request.firstSibling();
        request.queuedNs = null != first && Request.State.NEW != first.state ? Math.max(nowNs, first.queuedNs) :
            nowNs + frontendDelayNs(request);
        if (request.queuedNs > nowNs)
        {
            clock.schedule(request.queuedNs, nowNs); // wakes the driver when the request reaches the queue
        }
        request.state = Request.State.WAITING;
        scheduler.waiting().add(request);
        scheduler.loras().queued(request, nowNs);
        if (null != observer)
        {
            observer.onAccepted(request, scheduler.runningCount() + scheduler.waiting().size());
        }
        return SubmitResult.ACCEPTED;
    }

    /**
     * The request's frontend delay: constant, or log-normal around the mean with its normal draw taken from a stream
     * of its own (seed and arrival number), so the request's token and length draws do not depend on it. Drawn once
     * per client request: its other children ({@link Request#firstSibling}) reach the queue with the first.
     */
    private long frontendDelayNs(final Request request)
    {
        final double sigma = config.frontendDelayJitter();
        if (0 == sigma || 0 == config.frontendDelayNs())
        {
            return config.frontendDelayNs();
        }
        final long stream = SeededRandom.mix(config.seed() ^ FRONTEND_STREAM, request.arrivalSequence);
        final double u1 = ((SeededRandom.mix(stream, 1) >>> 11) + 1) * 0x1.0p-53;
        final double u2 = (SeededRandom.mix(stream, 2) >>> 11) * 0x1.0p-53;
        final double z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
        return Math.round(config.frontendDelayNs() * Math.exp(sigma * z - sigma * sigma / 2));
    }

    /**
     * End a request before it completes: a client disconnect (reason {@link FinishReason#ABORT}) or a stop string
     * the frontend found (reason {@link FinishReason#STOP}). Frees its slot at once; the sink is told through
     * {@link OutputSink#onFinished}. A finished or unknown request is ignored.
     *
     * @param request the request.
     * @param reason the finish reason to record.
     * @param nowNs current time.
     * @return true if the request was running or waiting.
     */
    public boolean abort(final Request request, final FinishReason reason, final long nowNs)
    {
        switch (request.state)
        {
            case WAITING:
                scheduler.waiting().remove(request);
                break;
            case LOADING:
                remoteLoads.cancel(request);
                break;
            case HELD:
                clock.cancel(request.holdTimerId);
                heldByTimerId.remove(request.holdTimerId);
                scheduler.removeRunning(request);
                break;
            case PREFILL:
            case DECODE:
                scheduler.removeRunning(request);
                break;
            default:
                return false;
        }
        finish(request, reason, nowNs);
        return true;
    }

    /**
     * Advance the engine to {@code nowNs}: complete due steps (emitting their tokens), release held first tokens,
     * and start the next step. Emissions of one call form one batch.
     *
     * @param nowNs current time.
     * @return number of steps completed and holds released.
     */
    public int doWork(final long nowNs)
    {
        int work = 0;
        if (null != remoteLoads)
        {
            work += remoteLoads.poll(nowNs);
        }
        if (!stepInFlight)
        {
            startStep(nowNs);
        }
        // bounded: if steps are cheaper in model time than to compute, the engine falls behind the clock; it then
        // returns after a few steps (one batch) and the driver calls again at once, instead of never returning
        int rounds = 0;
        while (rounds++ < MAX_ROUNDS_PER_CALL && (clock.poll(nowNs, this) > 0 || stepDue || releasedCount > 0))
        {
            long anchorNs = Long.MIN_VALUE;
            if (stepDue)
            {
                stepDue = false;
                completeStep();
                anchorNs = lastStepEndNs;
                work++;
            }
            for (int i = 0; i < releasedCount; i++)
            {
                final Request request = released[i];
                released[i] = null;
                final long dueNs = request.firstTokenDueNs;
                anchorNs = Math.max(anchorNs, dueNs);
                if (Request.State.HELD == request.state)
                {
                    request.state = Request.State.DECODE;
                    emit(request, request.firstChunkTokens, dueNs);
                }
                work++;
            }
            releasedCount = 0;
            if (batchPerStep && Long.MIN_VALUE != anchorNs)
            {
                sink.onBatchEnd(anchorNs);
            }
            if (!stepInFlight)
            {
                startStep(Long.MIN_VALUE == anchorNs ? nowNs : anchorNs);
            }
            if (!stepInFlight && Long.MIN_VALUE != anchorNs && anchorNs < nowNs)
            {
                // a catch-up step anchored in the past cannot take requests that arrived after it began
                startStep(nowNs);
            }
        }
        if (work > 0 && !batchPerStep)
        {
            sink.onBatchEnd(nowNs);
        }
        return work;
    }

    /**
     * @return when {@link #doWork(long)} next has something to do, or {@link Long#MAX_VALUE} when idle.
     */
    public long nextDeadlineNs()
    {
        final long engineNs = clock.earliestDeadlineNs();
        return null == remoteLoads ? engineNs : Math.min(engineNs, remoteLoads.nextDeadlineNs());
    }

    /**
     * Stop taking new requests; running and waiting ones continue.
     */
    public void beginShutdown()
    {
        shuttingDown = true;
    }

    /**
     * @return true once {@link #beginShutdown()} was called.
     */
    public boolean isShuttingDown()
    {
        return shuttingDown;
    }

    /**
     * Abort every running and waiting request.
     *
     * @param nowNs current time.
     */
    public void abortAll(final long nowNs)
    {
        while (null != remoteLoads && remoteLoads.count() > 0)
        {
            abort(remoteLoads.first(), FinishReason.ABORT, nowNs);
        }
        while (scheduler.runningCount() > 0)
        {
            abort(scheduler.running(0), FinishReason.ABORT, nowNs);
        }
        Request waiting;
        while (null != (waiting = scheduler.waiting().peek()))
        {
            abort(waiting, FinishReason.ABORT, nowNs);
        }
        sink.onBatchEnd(nowNs);
    }

    /**
     * @return requests in the running set (including those held for their first token).
     */
    public int numRunning()
    {
        return scheduler.runningCount();
    }

    /**
     * @return requests waiting to be admitted.
     */
    public int numWaiting()
    {
        return scheduler.waiting().size() + (null == remoteLoads ? 0 : remoteLoads.count());
    }

    /**
     * @return waiting requests skipped for the LoRA cap ({@code --max-loras}) when the last step was composed
     *     (vLLM's {@code deferred} waiting reason).
     */
    @Override
    public int numWaitingDeferred()
    {
        return Math.min(scheduler.deferredLastStep(), scheduler.waiting().size());
    }

    /**
     * @return distinct LoRA adapters with running requests.
     */
    public int numRunningLoraAdapters()
    {
        return scheduler.loras().runningAdapters();
    }

    /**
     * @return LoRA adapters whose requests this engine has seen, indexed 0 to this minus one in arrival order.
     */
    public int loraAdapterCount()
    {
        return scheduler.loras().slots();
    }

    /**
     * @param index 0 to {@link #loraAdapterCount()} minus one.
     * @return that adapter.
     */
    public dev.tapedeck.lora.LoraAdapter loraAdapter(final int index)
    {
        return scheduler.loras().adapter(index);
    }

    /**
     * @param index 0 to {@link #loraAdapterCount()} minus one.
     * @param running true for its running requests, false for its waiting ones.
     * @return how many it has.
     */
    public int loraRequests(final int index, final boolean running)
    {
        return running ? scheduler.loras().running(index) : scheduler.loras().waiting(index);
    }

    @Override
    public void loraAdapters(final boolean running, final java.util.Collection<String> names)
    {
        scheduler.loras().adapterNames(running, names);
    }

    @Override
    public long loraAdaptersChangedNs()
    {
        return scheduler.loras().changedNs();
    }

    /**
     * @return the fraction of KV blocks held by running requests, in [0, 1].
     */
    public double kvCacheUsage()
    {
        return kv.usage();
    }

    /**
     * @return the KV block pool (read it on the engine's thread).
     */
    public BlockPool kvBlockPool()
    {
        return kv.pool();
    }

    /**
     * Forget every cached prefix block (vLLM's {@code reset_prefix_cache}); refused while requests run, since they
     * hold blocks.
     *
     * @param nowNs the current time on the engine's clock (the timestamp of the {@code AllBlocksCleared} batch).
     * @return true if the cache was reset.
     */
    public boolean resetPrefixCache(final long nowNs)
    {
        if (scheduler.runningCount() > 0 || (null != remoteLoads && remoteLoads.count() > 0) ||
            scheduler.waiting().anyHoldsBlocks())
        {
            return false; // blocks in use (running, loading, or loaded and waiting): vLLM refuses too
        }
        kv.pool().reset();
        kv.endOfStep(nowNs);
        return true;
    }

    /** @return steps started so far. */
    public long stepCount()
    {
        return stepSequence;
    }

    /**
     * @return the step in flight (valid until it completes); inspect it only when {@link #isStepInFlight()}.
     */
    public Step currentStep()
    {
        return step;
    }

    /** @return true while a step runs. */
    public boolean isStepInFlight()
    {
        return stepInFlight;
    }

    @Override
    public void onAdmitted(final Request request, final int runningCount)
    {
        request.firstTokenDelayNs = latencyModel.firstTokenDelayNs(
            request.promptLength(), request.numCachedTokens, runningCount, request.random);
        request.firstTokenOverheadNs = latencyModel.firstTokenOverheadNs(
            request.promptLength(), request.numCachedTokens, runningCount, request.random);
        final boolean churn = churnRegime.admit(request.scheduledNs, request.promptLength() - request.numCachedTokens);
        if (null != request.pacing)
        {
            request.pacing.regime(churn);
        }
    }

    @Override
    public void onPrefixLookup(final Request request, final int hitTokens)
    {
        if (kv.prefixCaching())
        {
            metrics.onPrefixCacheLookup(request.numTokens(), hitTokens);
        }
    }

    @Override
    public void onPreempted(final Request request)
    {
        metrics.onPreemption();
    }

    @Override
    public boolean onTimerExpiry(final TimeUnit timeUnit, final long now, final long timerId)
    {
        if (timerId == stepTimerId)
        {
            stepTimerId = -1;
            stepDue = true;
        }
        else
        {
            final Request held = heldByTimerId.remove(timerId);
            if (null != held)
            {
                held.holdTimerId = -1;
                released[releasedCount++] = held;
            }
            else if (null != remoteLoads)
            {
                remoteLoads.onTimer(timerId, now);
            }
        }
        return true;
    }

    @Override
    public int remoteTokens(final Request request, final int localHitTokens)
    {
        return null == remoteLoads ? 0 : remoteLoads.remoteTokens(request, localHitTokens);
    }

    @Override
    public void onLoadStarted(final Request request, final int fromBlock, final int toBlock, final long nowNs)
    {
        remoteLoads.start(request, fromBlock, toBlock, nowNs);
    }

    private void startStep(final long startNs)
    {
        scheduler.compose(step, startNs, stepSequence + 1, this);
        if (step.isEmpty())
        {
            stepInFlight = false;
            kv.endOfStep(startNs); // nothing was stored; publishes nothing unless something else changed blocks
            return;
        }
        stepSequence++;
        final long durationNs = Math.max(0, stepTimer.durationNs(step, random));
        step.endNs(startNs + durationNs);
        stepTimerId = clock.schedule(startNs + durationNs, startNs);
        stepInFlight = true;
    }

    private void completeStep()
    {
        stepInFlight = false;
        final long endNs = step.endNs();
        lastStepEndNs = endNs;
        metrics.onStep(step.totalTokens(), step);
        kv.endOfStep(endNs); // the blocks this step stored or evicted, published when the step is done, as vLLM does
        if (null != observer)
        {
            stepPrefillTokens = countPrefillTokens();
        }
        for (int i = 0, size = step.size(); i < size; i++)
        {
            final Request request = step.request(i);
            if (Request.State.PREFILL == request.state)
            {
                completePrefillChunk(request, step.tokens(i), endNs);
            }
            else if (Request.State.DECODE == request.state)
            {
                generateBurst(request, step.tokens(i) - 1, endNs);
            }
        }
        metrics.flushTokenGaps();
    }

    private int countPrefillTokens()
    {
        int tokens = 0;
        for (int i = 0, size = step.size(); i < size; i++)
        {
            if (Request.State.PREFILL == step.request(i).state)
            {
                tokens += step.tokens(i);
            }
        }
        return tokens;
    }

    private void completePrefillChunk(final Request request, final int chunkTokens, final long endNs)
    {
        request.numComputedTokens += chunkTokens;
        if (request.prefillRemaining() > 0)
        {
            return;
        }
        if (request.numOutputTokens > 0)
        {
            // recomputed after a preemption: the step that completes it samples the next token
            request.state = Request.State.DECODE;
            emit(request, 1, endNs);
            return;
        }
        final long holdUntilNs = Math.max(request.scheduledNs + request.firstTokenDelayNs,
            endNs + request.firstTokenOverheadNs);
        if (holdUntilNs > endNs)
        {
            request.firstTokenDueNs = holdUntilNs;
            request.state = Request.State.HELD;
            request.holdTimerId = clock.schedule(holdUntilNs, endNs);
            heldByTimerId.put(request.holdTimerId, request);
            return;
        }
        request.state = Request.State.DECODE;
        emit(request, request.firstChunkTokens, endNs);
    }

    /**
     * A decode step's output: its recorded tokens ({@code --replay-steps}), or one token plus the accepted run of its
     * speculative drafts; it stops early when the request finishes (max_tokens, EOS, a stop token or string).
     */
    private void generateBurst(final Request request, final int drafts, final long endNs)
    {
        int burst = 1;
        if (request.hasRecordedStep())
        {
            burst = request.stepTokens[request.stepCursor++];
            if (drafts > 0)
            {
                metrics.onSpecDraft(drafts, Math.min(burst - 1, drafts));
            }
        }
        else if (null != request.pacing)
        {
            burst = request.pacedTokens;
            if (drafts > 0)
            {
                metrics.onSpecDraft(drafts, Math.min(burst - 1, drafts));
            }
        }
        else if (drafts > 0)
        {
            final int accepted = speculative.accept(drafts, request.random);
            metrics.onSpecDraft(drafts, accepted);
            burst += accepted;
        }
        emit(request, burst, endNs);
    }

    /** One output of {@code tokens} tokens (fewer if the request finishes first). */
    private void emit(final Request request, final int tokens, final long atNs)
    {
        generateToken(request, atNs, false);
        for (int t = 1; t < tokens && Request.State.DECODE == request.state; t++)
        {
            generateToken(request, atNs, true);
        }
    }

    /**
     * @param continuesChunk true for the second and later tokens of one output (a speculative burst): they share
     *     the first one's time and inter-token gap.
     */
    private void generateToken(final Request request, final long nowNs, final boolean continuesChunk)
    {
        final int tokenId = tokens.nextTokenId(request);
        request.numComputedTokens = request.numTokens();
        request.numOutputTokens++;
        request.lastTokenId = tokenId;
        if (1 == request.numOutputTokens)
        {
            request.firstTokenNs = nowNs;
            metrics.onFirstToken(nowNs - request.arrivalNs(), request.promptLength(), request.numCachedTokens,
                request.numExternalTokens);
        }
        else if (continuesChunk)
        {
            metrics.onChunkToken();
        }
        else
        {
            metrics.onNextToken(nowNs - request.lastTokenNs);
        }
        request.lastTokenNs = nowNs;
        if (null != observer)
        {
            observer.onToken(request, tokenId, nowNs, scheduler.runningCount(), stepPrefillTokens, continuesChunk);
        }
        if (sink.onToken(request, tokenId))
        {
            scheduler.removeRunning(request); // the face stops it here (a stop string)
            finish(request, FinishReason.STOP, nowNs);
        }
        else if (request.numOutputTokens >= request.outputLimit)
        {
            scheduler.removeRunning(request);
            finish(request, request.limitFinishReason, nowNs);
        }
        else if (request.numOutputTokens >= request.minTokens() && request.isStopToken(tokenId))
        {
            scheduler.removeRunning(request);
            finish(request, FinishReason.STOP, nowNs);
        }
    }

    private void finish(final Request request, final FinishReason reason, final long nowNs)
    {
        scheduler.loras().finished(request, Request.State.WAITING == request.state, nowNs);
        request.state = Request.State.FINISHED;
        request.finishReason = reason;
        request.finishedNs = nowNs;
        final boolean keepBlocks = null != remoteLoads && remoteLoads.requestFinished(request, nowNs);
        if (!keepBlocks && !request.loadInFlight)
        {
            kv.free(request);
        }
        metrics.onFinished(FINISH_LABELS[reason.ordinal()], request);
        if (null != observer)
        {
            observer.onFinished(request);
        }
        sink.onFinished(request);
    }
}
