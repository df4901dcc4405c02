package dev.tapedeck.trace.tools;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepShape;
import dev.tapedeck.trace.RequestCapture;

/**
 * The small engine behind {@code inspect gen-demo}: a step loop in virtual time shaped like vLLM V1's scheduler, far
 * simpler than tapedeck's real engine (core) and independent of it.
 * <ol>
 *   <li>Every running request that has its prompt computed decodes one token (one unit of the token budget).</li>
 *   <li>Running requests still in prefill get their next chunk, in admission order, while budget remains.</li>
 *   <li>Waiting requests are admitted first come first served while budget remains and fewer than
 *       {@value #MAX_NUM_SEQS} run; at admission the longest run of leading prompt blocks already computed by an
 *       earlier request is a prefix-cache hit (an unbounded cache, filled when a prompt finishes; at least one
 *       token is always computed).</li>
 *   <li>The step lasts what the latency model says for that batch; at its end a finished prompt yields the first
 *       token and each decode a token. A request ends with its last token. No preemption, no KV limit.</li>
 * </ol>
 * Token budget {@value #MAX_NUM_BATCHED_TOKENS} per step; steps end on whole microseconds. Not thread safe.
 */
final class DemoEngine
{
    static final int MAX_NUM_SEQS = 256;
    static final int MAX_NUM_BATCHED_TOKENS = 8192;
    static final int BLOCK_SIZE = 16;

    private final LatencyModel model;
    private final SeededRandom random = new SeededRandom(0);
    private final Shape shape = new Shape();
    private final Set<Long> cachedBlocks = new HashSet<>();

    /**
     * Called when a request has produced its last token.
     */
    interface Sink
    {
        void finished(Request request, double endMs) throws IOException;
    }

    /**
     * One request and its progress.
     */
    static final class Request
    {
        final int index;
        final double arrivalMs;
        final int promptTokens;
        final long[] blockHashes;
        final int outputTokens;
        final String finishReason;
        final RequestCapture capture;
        int cachedTokens;
        int computedTokens;
        int chunk;
        boolean decoding;
        int generated;

        Request(final int index, final double arrivalMs, final int promptTokens, final long[] blockHashes,
            final int outputTokens, final String finishReason)
        {
            this.index = index;
            this.arrivalMs = arrivalMs;
            this.promptTokens = promptTokens;
            this.blockHashes = blockHashes;
            this.outputTokens = outputTokens;
            this.finishReason = finishReason;
            this.capture = new RequestCapture(arrivalMs, promptTokens, 1, false).blockHashes(blockHashes);
        }

        boolean prefillDone()
        {
            return cachedTokens + computedTokens >= promptTokens;
        }
    }

    DemoEngine(final LatencyModel model)
    {
        this.model = model;
    }

    /**
     * Run every request to its end.
     *
     * @param requests the requests in arrival order.
     * @param sink told of each request's end, in end order.
     */
    void run(final List<Request> requests, final Sink sink) throws IOException
    {
        final ArrayDeque<Request> waiting = new ArrayDeque<>();
        final List<Request> running = new ArrayList<>();
        double nowMs = 0;
        int next = 0;
        while (next < requests.size() || !waiting.isEmpty() || !running.isEmpty())
        {
            if (waiting.isEmpty() && running.isEmpty() && requests.get(next).arrivalMs > nowMs)
            {
                nowMs = requests.get(next).arrivalMs;
            }
            while (next < requests.size() && requests.get(next).arrivalMs <= nowMs)
            {
                waiting.add(requests.get(next++));
            }
            compose(waiting, running);
            // step ends on whole microseconds, so a record's rounded gaps add up to its span
            final double endMs = Math.round((nowMs + model.stepDurationNs(shape, random) / 1e6) * 1000.0) / 1000.0;
            final Iterator<Request> it = running.iterator();
            while (it.hasNext())
            {
                final Request request = it.next();
                if (!advance(request))
                {
                    continue;
                }
                request.capture.onChunk(endMs, 1, shape.running, shape.prefillTokens);
                request.generated++;
                if (request.generated >= request.outputTokens)
                {
                    it.remove();
                    sink.finished(request, endMs);
                }
            }
            nowMs = endMs;
        }
    }

    private void compose(final ArrayDeque<Request> waiting, final List<Request> running)
    {
        shape.reset();
        int budget = MAX_NUM_BATCHED_TOKENS;
        for (final Request request : running)
        {
            request.chunk = 0;
            request.decoding = request.prefillDone();
            if (request.decoding)
            {
                budget--;
                shape.decodeRequests++;
                shape.decodeContextTokens += request.promptTokens + request.generated;
            }
        }
        for (final Request request : running)
        {
            if (!request.decoding && budget > 0)
            {
                budget -= schedulePrefill(request, budget);
            }
        }
        while (!waiting.isEmpty() && running.size() < MAX_NUM_SEQS && budget > 0)
        {
            final Request request = waiting.poll();
            request.cachedTokens = cachedPrefix(request);
            request.decoding = false;
            budget -= schedulePrefill(request, budget);
            running.add(request);
        }
        shape.running = running.size();
    }

    private int schedulePrefill(final Request request, final int budget)
    {
        request.chunk = Math.min(request.promptTokens - request.cachedTokens - request.computedTokens, budget);
        shape.prefillTokens += request.chunk;
        shape.prefillRequests++;
        return request.chunk;
    }

    /**
     * Apply the step to a request.
     *
     * @return true when the step gave it a token.
     */
    private boolean advance(final Request request)
    {
        if (request.decoding)
        {
            return true;
        }
        if (0 == request.chunk)
        {
            return false;
        }
        request.computedTokens += request.chunk;
        if (!request.prefillDone())
        {
            return false;
        }
        if (null != request.blockHashes)
        {
            for (final long hash : request.blockHashes)
            {
                cachedBlocks.add(hash);
            }
        }
        return true;
    }

    private int cachedPrefix(final Request request)
    {
        if (null == request.blockHashes)
        {
            return 0;
        }
        int hits = 0;
        while (hits < request.blockHashes.length && cachedBlocks.contains(request.blockHashes[hits]))
        {
            hits++;
        }
        final int mostCacheable = (request.promptTokens - 1) / BLOCK_SIZE * BLOCK_SIZE;
        return Math.min(hits * BLOCK_SIZE, mostCacheable);
    }

    /**
     * The composed step as the latency model sees it.
     */
    private static final class Shape implements StepShape
    {
        int decodeRequests;
        int prefillTokens;
        int prefillRequests;
        long decodeContextTokens;
        int running;

        void reset()
        {
            decodeRequests = 0;
            prefillTokens = 0;
            prefillRequests = 0;
            decodeContextTokens = 0;
            running = 0;
        }

        @Override
        public int decodeRequests()
        {
            return decodeRequests;
        }

        @Override
        public int prefillTokens()
        {
            return prefillTokens;
        }

        @Override
        public int prefillRequests()
        {
            return prefillRequests;
        }

        @Override
        public long decodeContextTokens()
        {
            return decodeContextTokens;
        }

        @Override
        public int runningRequests()
        {
            return running;
        }
    }
}
