package dev.tapedeck.engine;

import java.util.Arrays;

/**
 * Composes steps with vLLM V1 semantics:
 * <ol>
 *   <li>every running request that is decoding claims one token of the step budget
 *       ({@code --max-num-batched-tokens}), in admission order, plus its {@code K} speculative draft tokens when
 *       speculative decoding is on (fewer when the budget or the context runs out, as vLLM truncates them);</li>
 *   <li>running requests whose prompt is not yet fully computed get the next chunk of it, in admission order, each
 *       chunk capped by what is left of the budget and by {@code --long-prefill-token-threshold};</li>
 *   <li>while budget remains, fewer than {@code --max-num-seqs} requests run and no request was preempted in this
 *       step, waiting requests are admitted in policy order (FCFS, or priority then arrival): the cached prefix of
 *       their prompt is shared ({@link KvCache}) and they get their first chunk of the rest. Without chunked
 *       prefill ({@code --no-enable-chunked-prefill}) a request whose uncached prompt does not fit in what is left of
 *       the budget stops admission for the step.</li>
 * </ol>
 * Every scheduled token needs its KV slot: when the pool cannot give a running request its blocks, the newest
 * running request (FCFS; under PRIORITY the least urgent, latest) is preempted, freeing its blocks, and put back at
 * the front of the waiting queue to be recomputed from scratch later; if the request itself is the newest, it is the
 * one preempted. A waiting request whose blocks do not fit stays waiting and stops admission for the step.
 * A waiting request of a LoRA adapter that is not running while {@code --max-loras} distinct adapters run is skipped
 * for the step (it keeps its place; admission goes on with the requests behind it), as vLLM V1 does; base-model
 * requests are never skipped for this ({@link LoraUsage}).
 * Requests held for their first token (a knob-model delay) count as running but take no budget and are not
 * preempted.
 * <p>
 * A steady batch (every running request decoding one token, nothing waiting, nothing admitted, finished or
 * preempted since) is not composed again: the step is repeated with the same requests, and only those whose last KV
 * block is full ask the cache for a new one, as vLLM's model runner keeps a persistent batch and applies only what
 * changed. The result is the same step a full composition gives ({@code SteadyStepTest} compares the two).
 * <p>
 * The running set is a fixed array in admission order. <b>Not thread safe</b>; owned by the engine.
 */
final class Scheduler
{
    private final Request[] running;
    private final WaitingQueue waiting;
    private final KvCache kv;
    private final LoraUsage loras;
    private final int maxNumBatchedTokens;
    private final int longPrefillTokenThreshold;
    private final boolean chunkedPrefill;
    private final int maxModelLen;
    private final boolean byPriority;
    private int runningCount;
    private int budget;
    private boolean preemptedThisStep;
    private long composeNs;
    /** Waiting requests skipped by the LoRA gate in this step, put back when admission ends. */
    private Request[] deferred = new Request[8];
    private int deferredCount;
    private int deferredLastStep;
    /**
     * True when the step last composed is a steady decode batch: every running request decoding one token, none paced
     * or speculative, no prompt block left to register, nothing waiting. The next step is then the same batch, and is
     * kept instead of composed again ({@link #repeatSteadyStep}), unless a request left the running set since
     * ({@link #removeRunning} clears it).
     */
    private boolean steady;
    private boolean repeatSteadySteps = true;
    /** Per step position of a steady batch: the step sequence at which its request's last block is full. */
    private final long[] blockFullAtStep;
    private long nextBlockFullAtStep;
    private long repeatedSteps;
    private long steadyFallbacks;
    /** The last waiting request refused for want of blocks, and the state it was refused in. */
    private Request refused;
    private long refusedPoolChanges;
    private int refusedBudget;

    Scheduler(final EngineConfig config, final KvCache kv)
    {
        running = new Request[config.maxNumSeqs()];
        blockFullAtStep = new long[config.maxNumSeqs()];
        waiting = new WaitingQueue(config.maxWaitingQueueLength() + config.maxNumSeqs(), config.schedulingPolicy());
        this.kv = kv;
        maxNumBatchedTokens = config.maxNumBatchedTokens();
        longPrefillTokenThreshold = config.longPrefillTokenThreshold();
        chunkedPrefill = config.enableChunkedPrefill();
        maxModelLen = config.maxModelLen();
        byPriority = SchedulingPolicy.PRIORITY == config.schedulingPolicy();
        loras = new LoraUsage(config.maxLoras());
    }

    LoraUsage loras()
    {
        return loras;
    }

    /**
     * @return waiting requests the LoRA gate skipped when the last step was composed.
     */
    int deferredLastStep()
    {
        return deferredLastStep;
    }

    WaitingQueue waiting()
    {
        return waiting;
    }

    int runningCount()
    {
        return runningCount;
    }

    Request running(final int index)
    {
        return running[index];
    }

    boolean hasSchedulableWork()
    {
        if (!waiting.isEmpty() && runningCount < running.length)
        {
            return true;
        }
        for (int i = 0; i < runningCount; i++)
        {
            final Request.State state = running[i].state;
            if (Request.State.DECODE == state || Request.State.PREFILL == state)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Fill {@code step} for a step starting at {@code nowNs}; admitted and preempted requests are handed to
     * {@code admission}.
     *
     * @param sequence the new step's sequence number (one more than the last step's).
     */
    void compose(final Step step, final long nowNs, final long sequence, final Admission admission)
    {
        budget = maxNumBatchedTokens;
        preemptedThisStep = false;
        composeNs = nowNs;
        kv.stepStarted(nowNs);
        if (steady && waiting.isEmpty() && repeatSteadySteps &&
            repeatSteadyStep(step, nowNs, sequence))
        {
            return;
        }
        step.reset(nowNs, sequence);
        boolean steadyDecodes = true;
        for (int i = 0; i < runningCount && budget > 0; i++)
        {
            final Request request = running[i];
            if (Request.State.DECODE != request.state)
            {
                steadyDecodes = false;
                continue;
            }
            final int drafts = Math.max(0, Math.min(request.draftTokens,
                Math.min(budget - 1, maxModelLen - 1 - request.numTokens())));
            if (allocateOrPreempt(step, request, 1 + drafts, admission))
            {
                step.addDecode(request, drafts);
                budget -= 1 + drafts;
                steadyDecodes &= 0 == request.draftTokens && null == request.pacing && !request.hasRecordedStep() &&
                    request.numRegisteredBlocks >= request.numHashedBlocks;
            }
        }
        for (int i = 0; i < runningCount && budget > 0; i++)
        {
            final Request request = running[i];
            if (Request.State.PREFILL == request.state)
            {
                final int chunk = chunkOf(request.prefillRemaining());
                if (allocateOrPreempt(step, request, chunk, admission))
                {
                    step.addPrefill(request, chunk);
                    budget -= chunk;
                }
            }
        }
        if (preemptedThisStep)
        {
            dropPreempted();
        }
        int inFrontend = 0;
        boolean onlyLoaded = false;
        while (!preemptedThisStep && budget > 0 && runningCount < running.length && !waiting.isEmpty())
        {
            // a step anchored in the past (a late driver catching up) cannot take a request that arrived after it
            // began
            final Request next = waiting.peek();
            if (next.queuedNs > nowNs)
            {
                if (!byPriority)
                {
                    break; // FCFS: every request behind it reaches the queue later still
                }
                // an urgent request still in its frontend delay holds back no request that has reached the queue
                defer(waiting.poll());
                inFrontend++;
                continue;
            }
            if (!loras.admissible(next) || (onlyLoaded && 0 == next.numBlocks))
            {
                defer(waiting.poll());
            }
            else if (!admit(step, next, nowNs, admission))
            {
                if (0 != runningCount || onlyLoaded || !waiting.anyHoldsBlocks())
                {
                    break;
                }
                // nothing runs and the head cannot start, while requests behind it hold the blocks a connector
                // loaded for them: they start (computing their last tokens) instead of waiting behind it for ever
                defer(waiting.poll());
                onlyLoaded = true;
            }
        }
        deferredLastStep = deferredCount - inFrontend;
        for (int i = 0; i < deferredCount; i++)
        {
            waiting.add(deferred[i]); // same arrival number and priority: the same place in the queue
            deferred[i] = null;
        }
        deferredCount = 0;
        step.runningRequests(runningCount);
        steady = steadyDecodes && !preemptedThisStep && 0 == step.prefillRequests() && step.size() > 0 &&
            step.size() == runningCount && waiting.isEmpty() && 0 == deferredLastStep;
        if (steady)
        {
            markSteady(step, sequence);
        }
    }

    /**
     * Note, for each request of a steady batch, the step at which its last block is full, so that a repeated step
     * asks the KV cache only for the requests that need a block in it.
     */
    private void markSteady(final Step step, final long sequence)
    {
        long next = Long.MAX_VALUE;
        for (int i = 0, size = step.size(); i < size; i++)
        {
            final long fullAt = blockFullAt(step.request(i), sequence);
            blockFullAtStep[i] = fullAt;
            next = Math.min(next, fullAt);
        }
        nextBlockFullAtStep = next;
    }

    /**
     * @return the first step after step {@code sequence} (whose token has its slot) at which the request needs a new
     *     block: after step {@code sequence} it has computed {@code numComputedTokens + 1} tokens, one more a step.
     */
    private long blockFullAt(final Request request, final long sequence)
    {
        return sequence + (long)request.numBlocks * kv.blockSize() - request.numComputedTokens;
    }

    /**
     * The last step was a steady batch and nothing has changed the running set since: every request in it decoded
     * one token and is decoding again, so the step composed from scratch would hold the same requests in the same
     * order. Only the requests whose last block is full need the KV cache (a new block each); if one cannot have
     * it, the step is composed from scratch, which preempts as usual (the blocks given here are kept: asking again
     * finds them).
     *
     * @return true if the step was repeated.
     */
    private boolean repeatSteadyStep(final Step step, final long nowNs, final long sequence)
    {
        if (sequence >= nextBlockFullAtStep)
        {
            long next = Long.MAX_VALUE;
            for (int i = 0, size = step.size(); i < size; i++)
            {
                long fullAt = blockFullAtStep[i];
                if (fullAt <= sequence)
                {
                    final Request request = step.request(i);
                    if (!kv.allocate(request, 0, 1))
                    {
                        steady = false;
                        steadyFallbacks++;
                        return false;
                    }
                    fullAt = blockFullAt(request, sequence);
                    blockFullAtStep[i] = fullAt;
                }
                next = Math.min(next, fullAt);
            }
            nextBlockFullAtStep = next;
        }
        step.repeat(nowNs, sequence);
        repeatedSteps++;
        budget -= step.size();
        deferredLastStep = 0;
        return true;
    }

    /**
     * @return steps that repeated a steady batch instead of being composed.
     */
    long repeatedSteps()
    {
        return repeatedSteps;
    }

    /**
     * @return steady batches that were composed from scratch because a request could not have its new block.
     */
    long steadyFallbacks()
    {
        return steadyFallbacks;
    }

    /**
     * @param value false to compose every step from scratch (tests compare the two).
     */
    void repeatSteadySteps(final boolean value)
    {
        repeatSteadySteps = value;
    }

    /**
     * Remove a running request (finished or aborted), keeping admission order.
     */
    boolean removeRunning(final Request request)
    {
        steady = false;
        for (int i = 0; i < runningCount; i++)
        {
            if (running[i] == request)
            {
                System.arraycopy(running, i + 1, running, i, runningCount - i - 1);
                running[--runningCount] = null;
                return true;
            }
        }
        return false;
    }

    private void defer(final Request request)
    {
        if (deferredCount == deferred.length)
        {
            deferred = Arrays.copyOf(deferred, deferredCount * 2);
        }
        deferred[deferredCount++] = request;
    }

    private boolean admit(final Step step, final Request request, final long nowNs, final Admission admission)
    {
        if (request.numBlocks > 0)
        {
            return admitLoaded(step, request, nowNs, admission);
        }
        if (request == refused && kv.pool().changes() == refusedPoolChanges && budget >= refusedBudget)
        {
            // refused before, and since then no block was taken, freed, cached or evicted, and its chunk can only be
            // as large: it would be refused again (as vLLM refuses it again), so the lookups are skipped
            return false;
        }
        final int hitBlocks = kv.findCachedBlocks(request);
        final int hitTokens = hitBlocks * kv.blockSize();
        if (!request.kvConnectorAsked && 0 == request.preemptions)
        {
            request.kvConnectorAsked = true;
            final int remoteTokens = admission.remoteTokens(request, hitTokens);
            if (remoteTokens > 0)
            {
                return startLoad(request, hitBlocks, remoteTokens, nowNs, admission);
            }
        }
        if (!fitsUnchunked(request.numTokens() - hitTokens))
        {
            return false;
        }
        final int chunk = chunkOf(request.numTokens() - hitTokens);
        if (!kv.allocate(request, hitBlocks, chunk))
        {
            refused = request;
            refusedPoolChanges = kv.pool().changes();
            refusedBudget = budget;
            return false;
        }
        waiting.poll();
        request.numComputedTokens = hitTokens;
        running[runningCount++] = request;
        request.state = Request.State.PREFILL;
        loras.scheduled(request, nowNs);
        if (0 == request.preemptions)
        {
            request.numCachedTokens = hitTokens;
            admission.onPrefixLookup(request, hitTokens);
        }
        if (0 == request.numOutputTokens)
        {
            request.scheduledNs = nowNs;
            admission.onAdmitted(request, runningCount);
        }
        step.addPrefill(request, chunk);
        budget -= chunk;
        return true;
    }

    /**
     * Park a request whose remote tokens are to be loaded: its blocks are allocated (not cached until the load
     * succeeds), and it leaves the waiting queue without a running slot or step budget, as vLLM's
     * {@code WAITING_FOR_REMOTE_KVS}. The connector is asked again if the blocks do not fit yet.
     */
    private boolean startLoad(final Request request, final int hitBlocks, final int remoteTokens, final long nowNs,
        final Admission admission)
    {
        if (!kv.allocateForLoad(request, hitBlocks, remoteTokens))
        {
            request.kvConnectorAsked = false;
            return false;
        }
        waiting.poll();
        final int hitTokens = hitBlocks * kv.blockSize();
        request.numComputedTokens = hitTokens;
        request.numCachedTokens = hitTokens;
        request.state = Request.State.LOADING;
        admission.onPrefixLookup(request, hitTokens);
        admission.onLoadStarted(request, hitBlocks, request.numBlocks, nowNs);
        return true;
    }

    /** A request whose blocks hold tokens loaded from a remote engine (or kept after a failed load) computes the rest.
     */
    private boolean admitLoaded(final Step step, final Request request, final long nowNs, final Admission admission)
    {
        if (!fitsUnchunked(request.numTokens() - request.numComputedTokens))
        {
            return false;
        }
        final int chunk = chunkOf(request.numTokens() - request.numComputedTokens);
        if (!kv.allocate(request, 0, chunk))
        {
            return false;
        }
        waiting.poll();
        running[runningCount++] = request;
        request.state = Request.State.PREFILL;
        loras.scheduled(request, nowNs);
        request.scheduledNs = nowNs;
        admission.onAdmitted(request, runningCount);
        step.addPrefill(request, chunk);
        budget -= chunk;
        return true;
    }

    /**
     * Without chunked prefill a waiting request is admitted only when its new tokens (after the per-request cap) fit
     * in what is left of the budget; otherwise admission stops for this step, as vLLM's scheduler stops.
     */
    private boolean fitsUnchunked(final int remaining)
    {
        final int newTokens = longPrefillTokenThreshold > 0 ? Math.min(remaining, longPrefillTokenThreshold) :
            remaining;
        return chunkedPrefill || newTokens <= budget;
    }

    private int chunkOf(final int remaining)
    {
        int chunk = Math.min(remaining, budget);
        if (longPrefillTokenThreshold > 0)
        {
            chunk = Math.min(chunk, longPrefillTokenThreshold);
        }
        return chunk;
    }

    /**
     * Give a running request the blocks for {@code newTokens}, preempting the newest running requests until they fit.
     *
     * @return false if the request itself had to be preempted.
     */
    private boolean allocateOrPreempt(final Step step, final Request request, final int newTokens,
        final Admission admission)
    {
        while (!kv.allocate(request, 0, newTokens))
        {
            final Request victim = preemptionVictim();
            preempt(step, victim, admission);
            if (victim == request)
            {
                return false;
            }
        }
        return true;
    }

    /** Preempted requests stay in the array (marked WAITING) until the passes are over, so indices hold. */
    private void dropPreempted()
    {
        int kept = 0;
        for (int i = 0; i < runningCount; i++)
        {
            final Request request = running[i];
            if (Request.State.WAITING != request.state)
            {
                running[kept++] = request;
            }
        }
        for (int i = kept; i < runningCount; i++)
        {
            running[i] = null;
        }
        runningCount = kept;
    }

    private Request preemptionVictim()
    {
        Request victim = null;
        for (int i = runningCount - 1; i >= 0; i--)
        {
            final Request candidate = running[i];
            if (Request.State.DECODE != candidate.state && Request.State.PREFILL != candidate.state)
            {
                continue;
            }
            if (!byPriority)
            {
                return candidate;
            }
            if (null == victim || candidate.priority() > victim.priority() ||
                (candidate.priority() == victim.priority() && candidate.arrivalSequence > victim.arrivalSequence))
            {
                victim = candidate;
            }
        }
        return victim;
    }

    private void preempt(final Step step, final Request victim, final Admission admission)
    {
        budget += step.remove(victim);
        kv.free(victim);
        victim.numComputedTokens = 0;
        victim.state = Request.State.WAITING;
        victim.preemptions++;
        waiting.add(victim);
        loras.preempted(victim, composeNs);
        preemptedThisStep = true;
        admission.onPreempted(victim);
    }

    /** Told of each request the scheduler admits or preempts. */
    interface Admission
    {
        /** A request enters the running set for the first time (or again before its first token). */
        void onAdmitted(Request request, int runningCount);

        /** A new request looked up the prefix cache and found {@code hitTokens} of its prompt. */
        void onPrefixLookup(Request request, int hitTokens);

        /** A running request lost its blocks and went back to the waiting queue. */
        void onPreempted(Request request);

        /**
         * A new request is about to be admitted: how many prompt tokens beyond its local prefix hit a remote engine
         * computed ({@link KvConnector#remoteTokens}); 0 for none.
         */
        int remoteTokens(Request request, int localHitTokens);

        /** A request's blocks {@code [fromBlock, toBlock)} were allocated for tokens to load from a remote engine. */
        void onLoadStarted(Request request, int fromBlock, int toBlock, long nowNs);
    }
}
