package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.List;

import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepShape;

/**
 * Every step lasts the same time, whatever it carries, and every composed step is recorded: makes step arithmetic in
 * tests exact and lets tests assert on the batch the scheduler composed.
 */
final class FixedStepModel implements LatencyModel
{
    /** What one composed step carried. */
    record Shape(int decodes, int prefillTokens, int prefillRequests, int running)
    {
    }

    final List<Shape> steps = new ArrayList<>();
    private final long stepNs;
    private final long firstTokenDelayNs;

    FixedStepModel(final long stepNs)
    {
        this(stepNs, 0);
    }

    FixedStepModel(final long stepNs, final long firstTokenDelayNs)
    {
        this.stepNs = stepNs;
        this.firstTokenDelayNs = firstTokenDelayNs;
    }

    @Override
    public long stepDurationNs(final StepShape step, final SeededRandom random)
    {
        steps.add(new Shape(step.decodeRequests(), step.prefillTokens(), step.prefillRequests(),
            step.runningRequests()));
        return stepNs;
    }

    @Override
    public long firstTokenDelayNs(final int promptTokens, final int cachedTokens, final int runningRequests,
        final SeededRandom random)
    {
        return firstTokenDelayNs;
    }

    @Override
    public String describe()
    {
        return "fixed " + stepNs + "ns";
    }
}
