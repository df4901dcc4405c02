package dev.tapedeck.latency;

import java.util.Locale;

/**
 * The corrections of the physics step model ({@link RooflineStepModel}): overheads in microseconds and
 * dimensionless factors on the data-sheet times (1 = the data sheet's peak). Immutable.
 *
 * @param name a name for the set.
 * @param stepUs fixed cost of a step (scheduling, sampling, launches not tied to layers).
 * @param layerUs cost per layer per step (kernel launches and small kernels).
 * @param requestUs cost per request scheduled in a step (input preparation, sampling).
 * @param compute factor on the compute time at peak FLOP/s (1 / achieved utilisation).
 * @param weights factor on the weight-read time at peak memory bandwidth.
 * @param kv factor on the KV-read time at peak memory bandwidth.
 * @param comm factor on the all-reduce bytes' time at the link's bandwidth.
 * @param allReduceUs fixed latency of one all-reduce (with tensor parallelism only).
 * @param experts factor on the routed experts' weight-read time (mixtures of experts only).
 * @param jitter relative standard deviation of a step's duration (0 = deterministic).
 */
public record RooflineCoefficients(String name, double stepUs, double layerUs, double requestUs, double compute,
    double weights, double kv, double comm, double allReduceUs, double experts, double jitter)
{
    /**
     * Validates the coefficients.
     */
    public RooflineCoefficients
    {
        if (stepUs < 0 || layerUs < 0 || requestUs < 0 || compute < 0 || weights < 0 || kv < 0 || comm < 0 ||
            allReduceUs < 0 || experts < 0)
        {
            throw new IllegalArgumentException("roofline coefficients must not be negative");
        }
        if (jitter < 0 || jitter > 0.5)
        {
            throw new IllegalArgumentException("step jitter must be within [0, 0.5], got " + jitter);
        }
    }

    /**
     * @return the coefficients in the order of {@link RooflineStepModel#terms}: step, layer, request, compute, weights,
     *     KV, all-reduce link factor, all-reduce latency, experts.
     */
    public double[] values()
    {
        return new double[] {stepUs, layerUs, requestUs, compute, weights, kv, comm, allReduceUs, experts};
    }

    /**
     * @param newName the set's name.
     * @param values the coefficients in the order of {@link #values()}.
     * @return the set, with no jitter.
     */
    public static RooflineCoefficients of(final String newName, final double[] values)
    {
        return new RooflineCoefficients(newName, values[0], values[1], values[2], values[3], values[4], values[5],
            values[6], values[7], values[8], 0);
    }

    /**
     * @param newJitter replacement.
     * @return a copy with that jitter.
     */
    public RooflineCoefficients withJitter(final double newJitter)
    {
        return newJitter == jitter ? this : new RooflineCoefficients(name, stepUs, layerUs, requestUs, compute,
            weights, kv, comm, allReduceUs, experts, newJitter);
    }

    @Override
    public String toString()
    {
        return String.format(Locale.ROOT, "%s: %.1fus/step + %.2fus/layer + %.2fus/request, compute x%.3f, " +
            "weights x%.3f, KV x%.3f, all-reduce x%.3f + %.2fus, experts x%.3f, jitter %.2f", name, stepUs, layerUs,
            requestUs, compute, weights, kv, comm, allReduceUs, experts, jitter);
    }
}
