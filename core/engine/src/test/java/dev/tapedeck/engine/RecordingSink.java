package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records what an engine emits, with the engine time of each event, for assertions.
 */
final class RecordingSink implements OutputSink
{
    final Map<Request, List<Integer>> tokens = new HashMap<>();
    final Map<Request, List<Long>> tokenTimes = new HashMap<>();
    final List<Request> finished = new ArrayList<>();
    final List<Long> batches = new ArrayList<>();
    /** Request id to the output token count at which {@link #onToken} asks the engine to stop it. */
    final Map<String, Integer> stopAtOutputTokens = new HashMap<>();
    Engine engine;
    long nowNs;

    @Override
    public boolean onToken(final Request request, final int tokenId)
    {
        tokens.computeIfAbsent(request, r -> new ArrayList<>()).add(tokenId);
        tokenTimes.computeIfAbsent(request, r -> new ArrayList<>()).add(request.lastTokenNs());
        return request.numOutputTokens() == stopAtOutputTokens.getOrDefault(request.requestId(), -1);
    }

    @Override
    public void onFinished(final Request request)
    {
        finished.add(request);
    }

    @Override
    public void onBatchEnd(final long batchNs)
    {
        batches.add(batchNs);
    }

    List<Integer> tokensOf(final Request request)
    {
        return tokens.getOrDefault(request, List.of());
    }

    List<Long> timesOf(final Request request)
    {
        return tokenTimes.getOrDefault(request, List.of());
    }
}
