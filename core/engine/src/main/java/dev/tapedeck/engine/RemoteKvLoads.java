package dev.tapedeck.engine;

import java.util.Arrays;

import dev.tapedeck.metrics.EngineMetrics;
import dev.tapedeck.time.DeadlineTimers;

import org.agrona.collections.Long2ObjectHashMap;

/**
 * The engine's half of a {@link KvConnector}: the requests whose prompt KV is being loaded from a remote engine
 * (vLLM's {@code WAITING_FOR_REMOTE_KVS}), the timers of modelled loads, and what happens when a load ends. Loaded:
 * the blocks hold the prompt's KV up to its last token (always computed here, as vLLM does) and are cached; the
 * request goes back to the waiting queue to compute the rest. Failed: the tokens are computed locally
 * ({@code recompute}) or the request fails ({@code fail}). The blocks of a request aborted while a pull wrote into
 * them are freed only when the pull ends.
 * <p>
 * <b>Not thread safe</b>: owned by the engine's thread, like the engine.
 */
final class RemoteKvLoads implements KvConnector.Completions
{
    /** Ends a request (the engine's finish). */
    interface Finisher
    {
        void finish(Request request, FinishReason reason, long nowNs);
    }

    private final KvConnector connector;
    private final KvCache kv;
    private final WaitingQueue waiting;
    private final DeadlineTimers clock;
    private final EngineMetrics metrics;
    private final Finisher finisher;
    private final Long2ObjectHashMap<Request> byTimerId = new Long2ObjectHashMap<>();
    private Request[] loading = new Request[16];
    private int loadingCount;
    private long nowNs;
    private int events;
    /** The request the connector was last asked about, and its answer (counted when its load starts). */
    private Request askedFor;
    private int askedTokens;
    private int askedQueried;

    RemoteKvLoads(final KvConnector connector, final KvCache kv, final WaitingQueue waiting,
        final DeadlineTimers clock, final EngineMetrics metrics, final Finisher finisher)
    {
        this.connector = connector;
        this.kv = kv;
        this.waiting = waiting;
        this.clock = clock;
        this.metrics = metrics;
        this.finisher = finisher;
    }

    int count()
    {
        return loadingCount;
    }

    Request first()
    {
        return loading[0];
    }

    /**
     * Ask the connector; a lookup is counted once per request: here when nothing is to be loaded, at
     * {@link #start} otherwise (a request whose blocks do not fit yet is asked again, and its hit is not counted
     * twice).
     */
    int remoteTokens(final Request request, final int localHitTokens)
    {
        final int remoteTokens = connector.remoteTokens(request, localHitTokens);
        // vLLM counts the tokens asked of the connector: those its own prefix cache did not have
        final int queried = Math.max(0, request.numTokens() - localHitTokens);
        if (0 == remoteTokens)
        {
            metrics.onExternalPrefixLookup(queried, 0);
        }
        askedFor = request;
        askedTokens = remoteTokens;
        askedQueried = queried;
        return remoteTokens;
    }

    void start(final Request request, final int fromBlock, final int toBlock, final long startNs)
    {
        if (loadingCount == loading.length)
        {
            loading = Arrays.copyOf(loading, loadingCount * 2);
        }
        loading[loadingCount++] = request;
        metrics.onExternalPrefixLookup(askedFor == request ? askedQueried : request.numTokens(),
            askedFor == request ? askedTokens : 0);
        askedFor = null;
        final long doneNs = connector.startLoad(request, fromBlock, toBlock, startNs);
        if (KvConnector.LOAD_ASYNC == doneNs)
        {
            request.loadInFlight = true;
        }
        else
        {
            request.loadTimerId = clock.schedule(Math.max(doneNs, startNs), startNs);
            byTimerId.put(request.loadTimerId, request);
        }
    }

    /** A loading request is aborted: forget it (its blocks stay with it while an asynchronous pull runs). */
    void cancel(final Request request)
    {
        remove(request);
        if (request.loadTimerId >= 0)
        {
            clock.cancel(request.loadTimerId);
            byTimerId.remove(request.loadTimerId);
            request.loadTimerId = -1;
        }
    }

    /** A timer fired: the end of a modelled load, if it is one of ours. */
    void onTimer(final long timerId, final long firedNs)
    {
        final Request request = byTimerId.remove(timerId);
        if (null != request)
        {
            request.loadTimerId = -1;
            nowNs = firedNs;
            onLoaded(request);
        }
    }

    /** @return loads ended and blocks released (work, so that the driver ends the batch and writes outcomes). */
    int poll(final long pollNs)
    {
        nowNs = pollNs;
        events = 0;
        connector.poll(this, pollNs);
        return events;
    }

    long nextDeadlineNs()
    {
        return connector.nextDeadlineNs();
    }

    boolean requestFinished(final Request request, final long finishedNs)
    {
        return connector.requestFinished(request, finishedNs);
    }

    @Override
    public void onLoaded(final Request request)
    {
        events++;
        if (ended(request))
        {
            return;
        }
        int tokens = Math.min(request.numBlocks * kv.blockSize(), request.numTokens());
        if (tokens == request.numTokens())
        {
            tokens--;
        }
        request.numExternalTokens = Math.max(0, tokens - request.numComputedTokens);
        request.numComputedTokens = tokens;
        request.numCachedTokens = tokens;
        kv.cacheFullBlocks(request, tokens);
        requeue(request);
    }

    @Override
    public void onLoadFailed(final Request request, final boolean recompute)
    {
        events++;
        if (ended(request))
        {
            return;
        }
        if (recompute)
        {
            requeue(request);
        }
        else
        {
            finisher.finish(request, FinishReason.ERROR, nowNs);
        }
    }

    @Override
    public void onReleased(final Request request)
    {
        events++;
        kv.free(request);
    }

    /** @return true for a request that finished while its pull ran (its blocks are freed now). */
    private boolean ended(final Request request)
    {
        request.loadInFlight = false;
        if (Request.State.FINISHED == request.state)
        {
            kv.free(request);
            return true;
        }
        remove(request);
        return false;
    }

    private void requeue(final Request request)
    {
        request.state = Request.State.WAITING;
        waiting.add(request);
    }

    private void remove(final Request request)
    {
        for (int i = 0; i < loadingCount; i++)
        {
            if (loading[i] == request)
            {
                loading[i] = loading[--loadingCount];
                loading[loadingCount] = null;
                return;
            }
        }
    }
}
