package dev.tapedeck.engine;

import dev.tapedeck.latency.LatencyModel;

/**
 * Drives an engine with a manual clock: no sleeps, no threads. Time jumps from deadline to deadline.
 */
final class EngineHarness
{
    static final int[] TOKENS = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    static final int EOS = 99;
    static final long STEP_NS = 10_000_000L;

    final RecordingSink sink = new RecordingSink();
    final Engine engine;
    long nowNs = 1_000_000_000L;

    EngineHarness(final EngineConfig config)
    {
        engine = new Engine(config.tokenSpace(TOKENS, EOS).conclude(), sink, nowNs);
        sink.engine = engine;
    }

    static EngineConfig config(final LatencyModel model)
    {
        return new EngineConfig().latencyModel(model);
    }

    Request request(final String id, final int promptTokens, final int maxTokens)
    {
        return new Request(id, prompt(id, promptTokens)).maxTokens(maxTokens).arrivalNs(nowNs);
    }

    /** Submit a request with the given prompt (tests of prefix sharing pass the same array twice). */
    Request submit(final String id, final int[] prompt, final int maxTokens)
    {
        final Request request = new Request(id, prompt).maxTokens(maxTokens).arrivalNs(nowNs);
        if (SubmitResult.ACCEPTED != engine.submit(request, nowNs))
        {
            throw new IllegalStateException(id + " refused");
        }
        return request;
    }

    /** A prompt of its own for each request id, so requests share no prefix unless a test says so. */
    static int[] prompt(final String id, final int length)
    {
        final int[] ids = new int[length];
        final int base = Math.floorMod(id.hashCode(), 1 << 20) * 7;
        for (int i = 0; i < length; i++)
        {
            ids[i] = base + i;
        }
        return ids;
    }

    Request submit(final String id, final int promptTokens, final int maxTokens)
    {
        final Request request = request(id, promptTokens, maxTokens);
        final SubmitResult result = engine.submit(request, nowNs);
        if (SubmitResult.ACCEPTED != result)
        {
            throw new IllegalStateException(id + ": " + result);
        }
        return request;
    }

    static int[] prompt(final int length)
    {
        final int[] ids = new int[length];
        for (int i = 0; i < length; i++)
        {
            ids[i] = i % 1000;
        }
        return ids;
    }

    /** Do the work due now (starts a step when idle). */
    void poke()
    {
        engine.doWork(nowNs);
    }

    /**
     * Jump to the next deadline and do the work due there.
     *
     * @return false when the engine is idle.
     */
    boolean advance()
    {
        final long next = engine.nextDeadlineNs();
        if (Long.MAX_VALUE == next)
        {
            return false;
        }
        nowNs = Math.max(nowNs, next);
        engine.doWork(nowNs);
        return true;
    }

    void runUntilIdle()
    {
        poke();
        int guard = 0;
        while (advance())
        {
            if (++guard > 1_000_000)
            {
                throw new IllegalStateException("engine never went idle");
            }
        }
    }
}
