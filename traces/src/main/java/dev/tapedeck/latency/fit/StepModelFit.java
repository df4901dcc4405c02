package dev.tapedeck.latency.fit;

import java.util.List;

import dev.tapedeck.latency.StepCoefficients;

/**
 * Fits step-model coefficients to a real run from per-request timestamps alone (no per-step trace needed).
 * <p>
 * A request that decodes from its first to its last token lives through exactly {@code output - 1} engine steps, so
 * {@code last - first} is the sum of those steps' durations. With the step model that sum is linear in the
 * coefficients: {@code steps x base + P x prefillToken + D x decodeRequest + C x contextKiloToken}, where over the
 * request's decode window P is the prompt tokens every request prefilled, D the tokens every request decoded and C
 * the KV context those decodes read (in thousands of tokens). P, D and C are built from the other requests' own
 * windows (prefill spread over scheduled..first token, decode spread evenly over first..last token). One equation per
 * request with at least 20 output tokens; ordinary least squares over all of them. A negative coefficient is not
 * physical: its term is dropped and the rest refitted.
 * <p>
 * Stateless.
 */
public final class StepModelFit
{
    private static final int MIN_OUTPUT_TOKENS = 21;
    private static final int TERMS = 4;

    private StepModelFit()
    {
    }

    /**
     * The fitted coefficients and how well they explain the requests' decode windows.
     *
     * @param coefficients the profile (named {@code name}).
     * @param meanAbsolutePercentageError mean |predicted - measured| / measured decode window.
     * @param requestsUsed equations in the fit.
     */
    public record Result(StepCoefficients coefficients, double meanAbsolutePercentageError, int requestsUsed)
    {
    }

    /**
     * Fit all four terms.
     *
     * @param requests the run's requests.
     * @param name profile name for the result.
     * @param source provenance text for the result.
     * @return the fit.
     * @throws IllegalArgumentException when too few requests have long enough outputs.
     */
    public static Result fit(final List<MeasuredRequest> requests, final String name, final String source)
    {
        return fit(requests, name, source, true);
    }

    /**
     * @param requests the run's requests.
     * @param name profile name for the result.
     * @param source provenance text for the result.
     * @param contextTerm fit the KV-context term too; without it the per-decode term absorbs the attention cost
     *     (the two are close to collinear when context lengths vary little over a run).
     * @return the fit.
     * @throws IllegalArgumentException when too few requests have long enough outputs.
     */
    public static Result fit(final List<MeasuredRequest> requests, final String name, final String source,
        final boolean contextTerm)
    {
        final double[][] rows = new double[requests.size()][];
        final double[] targets = new double[requests.size()];
        int used = 0;
        for (final MeasuredRequest request : requests)
        {
            if (request.outputTokens() < MIN_OUTPUT_TOKENS || !(request.lastTokenS() > request.firstTokenS()))
            {
                continue;
            }
            rows[used] = features(request, requests);
            targets[used] = (request.lastTokenS() - request.firstTokenS()) * 1e6;
            used++;
        }
        if (used < 2 * TERMS)
        {
            throw new IllegalArgumentException("need at least " + 2 * TERMS + " requests with " + MIN_OUTPUT_TOKENS +
                "+ output tokens to fit, got " + used);
        }
        final double[][] normal = new double[TERMS][TERMS];
        final double[] rhs = new double[TERMS];
        for (int r = 0; r < used; r++)
        {
            for (int i = 0; i < TERMS; i++)
            {
                for (int j = 0; j < TERMS; j++)
                {
                    normal[i][j] += rows[r][i] * rows[r][j];
                }
                rhs[i] += rows[r][i] * targets[r];
            }
        }
        final double[] solution = DropNegativeLeastSquares.solve(normal, rhs,
            new boolean[] {true, true, true, contextTerm});
        double errorSum = 0;
        for (int i = 0; i < used; i++)
        {
            double predicted = 0;
            for (int t = 0; t < TERMS; t++)
            {
                predicted += solution[t] * rows[i][t];
            }
            errorSum += Math.abs(predicted - targets[i]) / targets[i];
        }
        final StepCoefficients coefficients = new StepCoefficients(name, solution[0], solution[1], solution[2],
            solution[3], 0.0, source);
        return new Result(coefficients, errorSum / used, used);
    }

    /**
     * [steps, prefill tokens, decode tokens, KV context / 1000] over the decode window of {@code subject}.
     */
    static double[] features(final MeasuredRequest subject, final List<MeasuredRequest> all)
    {
        final double start = subject.firstTokenS();
        final double end = subject.lastTokenS();
        double prefill = 0;
        double decodes = 0;
        double context = 0;
        for (final MeasuredRequest other : all)
        {
            final double prefillWindow = other.firstTokenS() - other.scheduledS();
            if (prefillWindow > 1e-6)
            {
                prefill += other.inputTokens() * overlap(other.scheduledS(), other.firstTokenS(), start, end) /
                    prefillWindow;
            }
            else if (other.firstTokenS() > start && other.firstTokenS() <= end)
            {
                prefill += other.inputTokens();
            }
            final int otherSteps = other.outputTokens() - 1;
            final double decodeWindow = other.lastTokenS() - other.firstTokenS();
            if (otherSteps <= 0 || decodeWindow <= 0)
            {
                continue;
            }
            final double lo = Math.max(other.firstTokenS(), start);
            final double hi = Math.min(other.lastTokenS(), end);
            if (hi <= lo)
            {
                continue;
            }
            final double fromFraction = (lo - other.firstTokenS()) / decodeWindow;
            final double toFraction = (hi - other.firstTokenS()) / decodeWindow;
            final double tokens = otherSteps * (toFraction - fromFraction);
            decodes += tokens;
            final double contextFrom = other.inputTokens() + otherSteps * fromFraction;
            final double contextTo = other.inputTokens() + otherSteps * toFraction;
            context += tokens * (contextFrom + contextTo) / 2.0;
        }
        return new double[] {subject.outputTokens() - 1, prefill, decodes, context / 1000.0};
    }

    private static double overlap(final double a0, final double a1, final double b0, final double b1)
    {
        return Math.max(0.0, Math.min(a1, b1) - Math.max(a0, b0));
    }
}
