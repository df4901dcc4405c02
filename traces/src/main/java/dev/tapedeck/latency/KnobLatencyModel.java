package dev.tapedeck.latency;

/**
 * The knob model: llm-d-inference-sim's latency flags and semantics, at nanosecond resolution.
 * <ul>
 *   <li>First token: {@code TTFT} (mean and std-dev) when either is set, otherwise
 *       {@code prefill-overhead + uncached prompt tokens x prefill-time-per-token} with {@code prefill-time-std-dev}
 *       (the llm-d "legacy" choice; {@link Calculator} forces one form). Measured from admission, so a client sees
 *       queue wait plus this delay.</li>
 *   <li>Decode: every step that carries decodes lasts one inter-token-latency draw. Tokens of the batch are emitted
 *       together at the step's end, as in vLLM; a step with only prefill work costs nothing (its cost is in the
 *       first-token delay).</li>
 *   <li>Load: means (not std-devs) are multiplied by {@code 1 + (f - 1)(n - 1)/(max-num-seqs - 1)} where f is
 *       {@code time-factor-under-load} and n the running requests.</li>
 *   <li>Draws are Gaussian, clamped to [0.3, 1.7] x mean as llm-d does, but never truncated to whole milliseconds
 *       (llm-d truncates, so sub-millisecond settings vanish there and work here).</li>
 * </ul>
 * Immutable; safe to share. Randomness comes from the caller's generator.
 */
public final class KnobLatencyModel implements LatencyModel
{
    /** Which first-token form to use (llm-d {@code --latency-calculator}). */
    public enum Calculator
    {
        /** Constant TTFT when a TTFT or its std-dev is set, per-token prefill otherwise (llm-d's default, ""). */
        AUTO,
        /** Always the constant TTFT. */
        CONSTANT,
        /** Always overhead plus per uncached prompt token. */
        PER_TOKEN
    }

    private static final double CLAMP_LOW = 0.3;
    private static final double CLAMP_HIGH = 1.7;

    private final Calculator calculator;
    private final long ttftNs;
    private final long ttftStdDevNs;
    private final long itlNs;
    private final long itlStdDevNs;
    private final long prefillOverheadNs;
    private final long prefillPerTokenNs;
    private final long prefillStdDevNs;
    private final double timeFactorUnderLoad;
    private final int maxNumSeqs;

    /**
     * @param calculator first-token form.
     * @param ttftNs mean time to first token.
     * @param ttftStdDevNs its standard deviation.
     * @param itlNs mean inter-token latency.
     * @param itlStdDevNs its standard deviation.
     * @param prefillOverheadNs fixed prefill cost (per-token form).
     * @param prefillPerTokenNs cost per uncached prompt token (per-token form).
     * @param prefillStdDevNs standard deviation of the whole prefill time (per-token form).
     * @param timeFactorUnderLoad multiplier at full load, at least 1.
     * @param maxNumSeqs the engine's running-set cap, for the load factor.
     */
    public KnobLatencyModel(
        final Calculator calculator,
        final long ttftNs,
        final long ttftStdDevNs,
        final long itlNs,
        final long itlStdDevNs,
        final long prefillOverheadNs,
        final long prefillPerTokenNs,
        final long prefillStdDevNs,
        final double timeFactorUnderLoad,
        final int maxNumSeqs)
    {
        requireNonNegative("time-to-first-token", ttftNs);
        requireNonNegative("inter-token-latency", itlNs);
        requireNonNegative("prefill-overhead", prefillOverheadNs);
        requireNonNegative("prefill-time-per-token", prefillPerTokenNs);
        requireNonNegative("prefill-time-std-dev", prefillStdDevNs);
        requireStdDev("time-to-first-token-std-dev", ttftStdDevNs, ttftNs);
        requireStdDev("inter-token-latency-std-dev", itlStdDevNs, itlNs);
        if (!(timeFactorUnderLoad >= 1.0))
        {
            throw new IllegalArgumentException("time-factor-under-load must be >= 1.0, got " + timeFactorUnderLoad);
        }
        if (maxNumSeqs < 1)
        {
            throw new IllegalArgumentException("max-num-seqs must be >= 1, got " + maxNumSeqs);
        }
        this.calculator = calculator;
        this.ttftNs = ttftNs;
        this.ttftStdDevNs = ttftStdDevNs;
        this.itlNs = itlNs;
        this.itlStdDevNs = itlStdDevNs;
        this.prefillOverheadNs = prefillOverheadNs;
        this.prefillPerTokenNs = prefillPerTokenNs;
        this.prefillStdDevNs = prefillStdDevNs;
        this.timeFactorUnderLoad = timeFactorUnderLoad;
        this.maxNumSeqs = maxNumSeqs;
    }

    /**
     * The load multiplier for a running-set size.
     *
     * @param runningRequests requests running, including the one being timed.
     * @return 1 when idle or when max-num-seqs is 1, rising linearly to time-factor-under-load at max-num-seqs.
     */
    public double loadFactor(final int runningRequests)
    {
        if (maxNumSeqs <= 1)
        {
            return 1.0;
        }
        final int busy = Math.max(runningRequests - 1, 0);
        return 1.0 + (timeFactorUnderLoad - 1.0) * busy / (maxNumSeqs - 1);
    }

    @Override
    public long stepDurationNs(final StepShape step, final SeededRandom random)
    {
        if (0 == step.decodeRequests())
        {
            return 0;
        }
        return clampedNormal(itlNs * loadFactor(step.runningRequests()), itlStdDevNs, random);
    }

    @Override
    public long firstTokenDelayNs(
        final int promptTokens, final int cachedTokens, final int runningRequests, final SeededRandom random)
    {
        final double load = loadFactor(runningRequests);
        if (usesConstantTtft())
        {
            return clampedNormal(ttftNs * load, ttftStdDevNs, random);
        }
        final long uncached = Math.max(promptTokens - cachedTokens, 0);
        final double mean = prefillOverheadNs * load + (double)uncached * prefillPerTokenNs * load;
        return clampedNormal(mean, prefillStdDevNs, random);
    }

    @Override
    public String describe()
    {
        final String first = usesConstantTtft() ?
            "ttft " + ms(ttftNs) + " +- " + ms(ttftStdDevNs) :
            "prefill " + ms(prefillOverheadNs) + " + " + ms(prefillPerTokenNs) + "/token +- " + ms(prefillStdDevNs);
        return "knob: " + first + ", itl " + ms(itlNs) + " +- " + ms(itlStdDevNs) +
            ", time-factor-under-load " + timeFactorUnderLoad;
    }

    private boolean usesConstantTtft()
    {
        switch (calculator)
        {
            case CONSTANT:
                return true;
            case PER_TOKEN:
                return false;
            default:
                return 0 != ttftNs || 0 != ttftStdDevNs;
        }
    }

    private static long clampedNormal(final double meanNs, final long stdDevNs, final SeededRandom random)
    {
        if (meanNs <= 0.0)
        {
            return 0;
        }
        if (0 == stdDevNs)
        {
            return (long)meanNs;
        }
        final double draw = meanNs + stdDevNs * random.nextGaussian();
        return (long)Math.min(Math.max(draw, CLAMP_LOW * meanNs), CLAMP_HIGH * meanNs);
    }

    private static void requireNonNegative(final String name, final long valueNs)
    {
        if (valueNs < 0)
        {
            throw new IllegalArgumentException(name + " must not be negative");
        }
    }

    private static void requireStdDev(final String name, final long stdDevNs, final long meanNs)
    {
        requireNonNegative(name, stdDevNs);
        if (stdDevNs > 0.3 * meanNs)
        {
            throw new IllegalArgumentException(name + " must be at most 30% of its mean (" + ms(meanNs) + ")");
        }
    }

    private static String ms(final long ns)
    {
        return (ns / 1_000) / 1000.0 + "ms";
    }
}
