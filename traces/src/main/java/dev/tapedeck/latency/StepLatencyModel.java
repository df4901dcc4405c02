package dev.tapedeck.latency;

/**
 * The step model: a step lasts as long as its composed batch costs on the modelled GPU (see
 * {@link StepCoefficients}). Queueing, chunked-prefill interference and decode slow-down under load are not
 * modelled separately: they emerge from the scheduler composing bigger steps.
 * <p>
 * Immutable; safe to share. Randomness (optional jitter) comes from the caller's generator.
 */
public final class StepLatencyModel implements LatencyModel
{
    private final StepCoefficients coefficients;

    /**
     * @param coefficients the cost coefficients.
     */
    public StepLatencyModel(final StepCoefficients coefficients)
    {
        this.coefficients = coefficients;
    }

    /**
     * @return the coefficients in use.
     */
    public StepCoefficients coefficients()
    {
        return coefficients;
    }

    @Override
    public long stepDurationNs(final StepShape step, final SeededRandom random)
    {
        final StepCoefficients c = coefficients;
        double us = c.baseUs() +
            c.prefillTokenUs() * step.prefillTokens() +
            c.decodeRequestUs() * step.decodeRequests() +
            c.contextKiloTokenUs() * (step.decodeContextTokens() / 1000.0);
        if (c.jitter() > 0.0)
        {
            us *= Math.max(1.0 + c.jitter() * random.nextGaussian(), 0.0);
        }
        return (long)(us * 1000.0);
    }

    @Override
    public long firstTokenDelayNs(
        final int promptTokens, final int cachedTokens, final int runningRequests, final SeededRandom random)
    {
        return 0;
    }

    @Override
    public String describe()
    {
        return "step model " + coefficients + " [" + coefficients.source() + "]";
    }
}
