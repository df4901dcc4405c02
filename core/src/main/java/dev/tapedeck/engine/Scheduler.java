package dev.tapedeck.engine;

/**
 * Composes steps with vLLM V1 semantics:
 * <ol>
 *   <li>every running request that is decoding claims one token of the step budget
 *       ({@code --max-num-batched-tokens}), in admission order;</li>
 *   <li>running requests whose prompt is not yet fully computed get the next chunk of it, in admission order, each
 *       chunk capped by what is left of the budget and by {@code --long-prefill-token-threshold};</li>
 *   <li>while budget remains and fewer than {@code --max-num-seqs} requests run, waiting requests are admitted in
 *       policy order (FCFS, or priority then arrival) and get their first chunk.</li>
 * </ol>
 * Requests held for their first token (a knob-model delay) count as running but take no budget.
 * <p>
 * The running set is a fixed array in admission order. <b>Not thread safe</b>; owned by the engine.
 */
final class Scheduler
{
    private final Request[] running;
    private final WaitingQueue waiting;
    private final int maxNumBatchedTokens;
    private final int longPrefillTokenThreshold;
    private int runningCount;

    Scheduler(final EngineConfig config)
    {
        running = new Request[config.maxNumSeqs()];
        waiting = new WaitingQueue(config.maxWaitingQueueLength() + config.maxNumSeqs(), config.schedulingPolicy());
        maxNumBatchedTokens = config.maxNumBatchedTokens();
        longPrefillTokenThreshold = config.longPrefillTokenThreshold();
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
     * Fill {@code step} for a step starting at {@code nowNs}; admitted requests are handed to {@code admission}.
     */
    void compose(final Step step, final long nowNs, final Admission admission)
    {
        int budget = maxNumBatchedTokens;
        for (int i = 0; i < runningCount && budget > 0; i++)
        {
            final Request request = running[i];
            if (Request.State.DECODE == request.state)
            {
                step.addDecode(request);
                request.scheduledTokens = 1;
                budget--;
            }
        }
        for (int i = 0; i < runningCount && budget > 0; i++)
        {
            final Request request = running[i];
            if (Request.State.PREFILL == request.state)
            {
                budget -= schedulePrefill(step, request, budget);
            }
        }
        while (budget > 0 && runningCount < running.length && !waiting.isEmpty())
        {
            final Request request = waiting.poll();
            running[runningCount++] = request;
            request.state = Request.State.PREFILL;
            request.scheduledNs = nowNs;
            admission.onAdmitted(request, runningCount);
            budget -= schedulePrefill(step, request, budget);
        }
        step.runningRequests(runningCount);
    }

    /**
     * Remove a running request (finished or aborted), keeping admission order.
     */
    boolean removeRunning(final Request request)
    {
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

    private int schedulePrefill(final Step step, final Request request, final int budget)
    {
        int chunk = Math.min(request.promptRemaining(), budget);
        if (longPrefillTokenThreshold > 0)
        {
            chunk = Math.min(chunk, longPrefillTokenThreshold);
        }
        request.scheduledTokens = chunk;
        step.addPrefill(request, chunk);
        return chunk;
    }

    /** Told of each request the scheduler admits, before its first chunk is scheduled. */
    interface Admission
    {
        void onAdmitted(Request request, int runningCount);
    }
}
