package dev.tapedeck.simulate.fit;

import java.util.List;
import java.util.function.ToDoubleFunction;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;

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
                sum += StageReplay.loss(compare(e, c, kvCacheBlocks, secondsPerStage));
            }
            return sum;
        };
        final double[] x0 = new double[START.length];
        for (int i = 0; i < x0.length; i++)
        {
            x0[i] = Math.log(START[i]);
        }
        return fitted(NelderMead.minimise(loss, x0, evaluations), name);
    }

    /**
     * @param experiment an experiment.
     * @param fitted a step model and frontend time.
     * @param kvCacheBlocks the engine's KV blocks.
     * @param secondsPerStage how much of each stage to replay.
     * @return the comparisons of every stage.
     */
    public static List<StageReplay.Comparison> compare(final BlisExperiment experiment, final Fitted fitted,
        final int kvCacheBlocks, final double secondsPerStage)
    {
        return StageReplay.compare(experiment, new StepLatencyModel(fitted.coefficients()),
            Math.round(fitted.frontendUs() * 1000), 0, kvCacheBlocks, secondsPerStage);
    }

    private static Fitted fitted(final double[] x, final String name)
    {
        return new Fitted(new StepCoefficients(name, Math.exp(x[0]), Math.exp(x[1]), Math.exp(x[2]), Math.exp(x[3]),
            0, "fitted by tapedeck StepFit to replayed BLIS H100 training runs"), Math.exp(x[4]));
    }
}
