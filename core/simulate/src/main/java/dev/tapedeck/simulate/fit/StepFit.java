package dev.tapedeck.simulate.fit;

import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

import dev.tapedeck.latency.StepCoefficients;

/**
 * Fits the step model (base, per prefill token, per decoding request, per thousand context tokens, in microseconds)
 * and the API server's time before the engine sees a request ({@link Fitted#frontendUs}) to experiments by replaying
 * them ({@link StageReplay}) and minimising the squared log error of the measured mean TTFT, mean inter-token latency,
 * mean request latency and (with half the weight) p99 TTFT over every stage. The search is Nelder-Mead over the
 * logarithms of the coefficients, so they stay positive; it starts from an H100-like guess (8 ms steps, 20 ms
 * frontend).
 * <p>
 * Stateless; runs on the caller's thread.
 */
public final class StepFit
{
    private static final double[] START = {8000, 10, 40, 5, 20000};

    private StepFit()
    {
    }

    /**
     * A fit's result.
     *
     * @param coefficients the step model.
     * @param frontendUs the API server's time before the engine queues a request, in microseconds (serve, play and
     *     simulate take it as {@code --frontend-delay}).
     */
    public record Fitted(StepCoefficients coefficients, double frontendUs)
    {
    }

    /**
     * How one stage's prediction compares with its measurement.
     *
     * @param experiment the experiment's name.
     * @param stage the stage's index.
     * @param metric {@code ttft_mean}, {@code ttft_p99}, {@code itl_mean} or {@code e2e_mean}.
     * @param measured the real server's value, in ms.
     * @param predicted the replay's value, in ms.
     */
    public record Comparison(String experiment, int stage, String metric, double measured, double predicted)
    {
        /**
         * @return the absolute percentage error.
         */
        public double ape()
        {
            return Math.abs(predicted - measured) / measured * 100;
        }
    }

    /**
     * @param experiments the experiments to fit to.
     * @param name the profile's name.
     * @param kvCacheBlocks the engines' KV blocks.
     * @param secondsPerStage how much of each stage to replay.
     * @param evaluations the search's budget of replays.
     * @return the fitted coefficients and frontend time.
     */
    public static Fitted fit(final List<BlisExperiment> experiments, final String name,
        final int kvCacheBlocks, final double secondsPerStage, final int evaluations)
    {
        final ToDoubleFunction<double[]> loss = x ->
        {
            final Fitted c = fitted(x, name);
            double sum = 0;
            for (final BlisExperiment e : experiments)
            {
                for (final Comparison comparison : compare(e, c, kvCacheBlocks, secondsPerStage))
                {
                    final double ratio = Math.log(Math.max(comparison.predicted(), 1e-6) / comparison.measured());
                    sum += ("ttft_p99".equals(comparison.metric()) ? 0.5 : 1.0) * ratio * ratio;
                }
            }
            return sum;
        };
        final double[] x0 = new double[START.length];
        for (int i = 0; i < x0.length; i++)
        {
            x0[i] = Math.log(START[i]);
        }
        return fitted(nelderMead(loss, x0, evaluations), name);
    }

    /**
     * @param experiment an experiment.
     * @param fitted a step model and frontend time.
     * @param kvCacheBlocks the engine's KV blocks.
     * @param secondsPerStage how much of each stage to replay.
     * @return the comparisons of every stage.
     */
    public static List<Comparison> compare(final BlisExperiment experiment, final Fitted fitted,
        final int kvCacheBlocks, final double secondsPerStage)
    {
        final List<StageReplay.Predicted> predicted = StageReplay.run(experiment, fitted.coefficients(),
            Math.round(fitted.frontendUs() * 1000), kvCacheBlocks, secondsPerStage);
        final java.util.ArrayList<Comparison> out = new java.util.ArrayList<>();
        for (int s = 0; s < predicted.size(); s++)
        {
            final BlisExperiment.Stage m = experiment.stages().get(s);
            final StageReplay.Predicted p = predicted.get(s);
            out.add(new Comparison(experiment.name(), s, "ttft_mean", m.ttftMeanMs(), p.ttftMeanMs()));
            out.add(new Comparison(experiment.name(), s, "ttft_p99", m.ttftP99Ms(), p.ttftP99Ms()));
            out.add(new Comparison(experiment.name(), s, "itl_mean", m.itlMeanMs(experiment.outputTokens()),
                p.itlMeanMs()));
            out.add(new Comparison(experiment.name(), s, "e2e_mean", m.e2eMeanMs(), p.e2eMeanMs()));
        }
        return out;
    }

    private static Fitted fitted(final double[] x, final String name)
    {
        return new Fitted(new StepCoefficients(name, Math.exp(x[0]), Math.exp(x[1]), Math.exp(x[2]), Math.exp(x[3]),
            0, "fitted by tapedeck StepFit to replayed BLIS H100 training runs"), Math.exp(x[4]));
    }

    /** A plain Nelder-Mead simplex search (reflection 1, expansion 2, contraction and shrink 0.5). */
    private static double[] nelderMead(final ToDoubleFunction<double[]> f, final double[] x0, final int budget)
    {
        final int n = x0.length;
        final double[][] simplex = new double[n + 1][];
        final double[] values = new double[n + 1];
        simplex[0] = x0.clone();
        for (int i = 0; i < n; i++)
        {
            simplex[i + 1] = x0.clone();
            simplex[i + 1][i] += 0.7;
        }
        int evaluations = 0;
        for (int i = 0; i <= n; i++)
        {
            values[i] = f.applyAsDouble(simplex[i]);
            evaluations++;
        }
        while (evaluations < budget)
        {
            final Integer[] order = new Integer[n + 1];
            for (int i = 0; i <= n; i++)
            {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Double.compare(values[a], values[b]));
            final double[][] s = new double[n + 1][];
            final double[] v = new double[n + 1];
            for (int i = 0; i <= n; i++)
            {
                s[i] = simplex[order[i]];
                v[i] = values[order[i]];
            }
            System.arraycopy(s, 0, simplex, 0, n + 1);
            System.arraycopy(v, 0, values, 0, n + 1);
            if (values[n] - values[0] < 1e-6)
            {
                break;
            }
            final double[] centroid = new double[n];
            for (int i = 0; i < n; i++)
            {
                for (int d = 0; d < n; d++)
                {
                    centroid[d] += simplex[i][d] / n;
                }
            }
            final double[] reflected = towards(centroid, simplex[n], -1);
            final double fr = f.applyAsDouble(reflected);
            evaluations++;
            if (fr < values[0])
            {
                final double[] expanded = towards(centroid, simplex[n], -2);
                final double fe = f.applyAsDouble(expanded);
                evaluations++;
                simplex[n] = fe < fr ? expanded : reflected;
                values[n] = Math.min(fe, fr);
            }
            else if (fr < values[n - 1])
            {
                simplex[n] = reflected;
                values[n] = fr;
            }
            else
            {
                final double[] contracted = towards(centroid, simplex[n], 0.5);
                final double fc = f.applyAsDouble(contracted);
                evaluations++;
                if (fc < values[n])
                {
                    simplex[n] = contracted;
                    values[n] = fc;
                }
                else
                {
                    for (int i = 1; i <= n; i++)
                    {
                        simplex[i] = towards(simplex[0], simplex[i], 0.5);
                        values[i] = f.applyAsDouble(simplex[i]);
                        evaluations++;
                    }
                }
            }
        }
        int best = 0;
        for (int i = 1; i <= n; i++)
        {
            if (values[i] < values[best])
            {
                best = i;
            }
        }
        return simplex[best];
    }

    /** centroid + t * (point - centroid). */
    private static double[] towards(final double[] centroid, final double[] point, final double t)
    {
        final double[] out = new double[centroid.length];
        for (int d = 0; d < out.length; d++)
        {
            out[d] = centroid[d] + t * (point[d] - centroid[d]);
        }
        return out;
    }
}
