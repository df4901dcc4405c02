package dev.tapedeck.simulate.fit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.tapedeck.kv.KvCapacity;
import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.latency.RooflineCoefficients;
import dev.tapedeck.latency.RooflineStepModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepShape;

/**
 * Fits the corrections of the physics step model ({@link RooflineStepModel}) and the frontend delay to experiments of
 * any models on one GPU type, by replaying every experiment's stages ({@link StageReplay}) with each experiment's own
 * architecture, tensor-parallel size and KV cache (see {@link #fit}). One set of
 * corrections for all the models is what lets the model predict a model or GPU that was never measured; fitted to a
 * single model's runs it is that model's measured profile.
 * <p>
 * Stateless; runs on the caller's thread.
 */
public final class RooflineFit
{
    private static final double PRIOR_WEIGHT = 0.01;
    /** A stage whose mean TTFT is this many mean gaps or more was queueing: its TTFT is not a step-time measure. */
    private static final double QUEUEING_TTFT_IN_STEPS = 10;
    private static final int COMPUTE = 3;
    private static final int WEIGHTS = 4;
    private static final int KV = 5;
    /**
     * The experts' factor stays at the data sheet's: fitted, it lowered the in-sample error and raised the held-out
     * one (leave one model out, mean ITL 10.4% against 5.7%; docs/latency-models.md, "Which terms stay").
     */
    private static final int EXPERTS = 8;
    private static final int FRONTEND_ROUNDS = 2;
    private static final int JITTER_STEPS = 24;
    private static final double JITTER_STEP = 0.05;
    private static final int BLOCK_SIZE = 16;

    private RooflineFit()
    {
    }

    /**
     * A fit's result.
     *
     * @param coefficients the corrections.
     * @param frontendUs the API server's mean time before the engine queues a request, in microseconds.
     * @param frontendJitter the log-normal sigma of that time.
     */
    public record Fitted(RooflineCoefficients coefficients, double frontendUs, double frontendJitter)
    {
    }

    /**
     * @param experiment an experiment.
     * @return its model's architecture.
     * @throws IllegalArgumentException naming the model when it is not built in.
     */
    public static ModelArchitecture architecture(final BlisExperiment experiment)
    {
        final ModelArchitecture model = ModelArchitecture.lookup(experiment.model());
        if (null == model)
        {
            throw new IllegalArgumentException(experiment.name() + ": no built-in architecture for model '" +
                experiment.model() + "' (known: " + ModelArchitecture.knownNames() + ")");
        }
        return model;
    }

    /**
     * @param model the model.
     * @param gpu the GPU.
     * @param tensorParallel GPUs per engine.
     * @return the KV blocks of 16 tokens vLLM would allocate at 0.9 memory utilisation.
     */
    public static int kvCacheBlocks(final ModelArchitecture model, final GpuSpec gpu, final int tensorParallel)
    {
        return KvCapacity.blocks(model, gpu, tensorParallel, 0.9, BLOCK_SIZE);
    }

    /**
     * The data-sheet prior: what the fit starts from and weakly pulls towards when the data cannot tell terms apart.
     * A 0.5 ms step, 20 us per layer, 5 us per request, peak FLOP/s, 90% of peak bandwidth for weights and experts,
     * 80% for KV, 70% of the link, 15 us per all-reduce, a 10 ms frontend.
     */
    public static final Fitted DATA_SHEET = new Fitted(
        new RooflineCoefficients("data-sheet", 500, 20, 5, 1, 1 / 0.9, 1 / 0.8, 1 / 0.7, 15, 1 / 0.9, 0), 10_000, 0);

    /**
     * Fits by successive linear least squares, since a step's duration is linear in the coefficients once the
     * batches are composed. Each round replays every stage alone with the current coefficients and averages each
     * coefficient's term over the decode steps (weighted by their decodes, as a request's gaps average them) and over
     * what a request's TTFT spans (the rest of the step under way, then its prefill step, then the frontend). It
     * solves for the coefficients that make those averages the measured mean inter-token latency and mean TTFT
     * (relative errors; no coefficient negative, the compute, weight and KV factors at least 1 since no GPU beats its
     * data sheet, the experts' factor held at the data sheet's; a weak pull towards the prior for what the data
     * cannot tell apart), and moves half-way there. A stage whose TTFT is queueing (ten gaps or more) gives no TTFT
     * row. Then the frontend delay takes up what the full replays' mean TTFT still misses, and last its spread (a
     * log-normal sigma, 0 to 1.2 by 0.05, which keeps the mean) is the one whose replays give the measured p99 TTFT
     * best, over the stages whose p99 holds no spike of ten gaps or more.
     *
     * @param experiments the experiments to fit to (any models).
     * @param gpu the GPU they ran on.
     * @param prior where to start and what to pull towards ({@link #DATA_SHEET}, or a fit across models when fitting
     *     one model).
     * @param name the corrections' name.
     * @param secondsPerStage how much of each stage to replay.
     * @param rounds replay-and-solve rounds; 12 converge on the BLIS runs.
     * @return the fitted corrections and frontend time.
     */
    public static Fitted fit(final List<BlisExperiment> experiments, final GpuSpec gpu, final Fitted prior,
        final String name, final double secondsPerStage, final int rounds)
    {
        final double[] pinned = new double[RooflineStepModel.TERMS];
        Arrays.fill(pinned, Double.NaN);
        pinned[EXPERTS] = DATA_SHEET.coefficients().experts();
        return fit(experiments, gpu, prior, name, secondsPerStage, rounds, pinned);
    }

    /**
     * {@link #fit} with some corrections held at given values: what an ablation ("does this term lower the
     * out-of-sample error?") needs.
     *
     * @param pinned per correction in the order of {@link RooflineCoefficients#values()}, the value to hold it at, or
     *     NaN to fit it; shorter than the corrections for the rest free.
     */
    static Fitted fit(final List<BlisExperiment> experiments, final GpuSpec gpu, final Fitted prior,
        final String name, final double secondsPerStage, final int rounds, final double[] pinned)
    {
        final double[] priorValues = values(prior);
        double[] current = priorValues.clone();
        for (int round = 0; round < rounds; round++)
        {
            final RooflineCoefficients coefficients = RooflineCoefficients.of(name, current);
            final List<double[]> rows = new ArrayList<>();
            final List<Double> targets = new ArrayList<>();
            for (final BlisExperiment e : experiments)
            {
                final ModelArchitecture model = architecture(e);
                final int tp = e.tensorParallel();
                for (final BlisExperiment.Stage stage : e.stages())
                {
                    final double seconds = secondsPerStage > 0 ? Math.min(secondsPerStage, stage.durationS()) :
                        stage.durationS();
                    final TermRecorder recorder =
                        new TermRecorder(new RooflineStepModel(model, gpu, tp, coefficients), seconds * 1e6);
                    StageReplay.run(e.withStages(List.of(stage)), recorder, 0, 0, kvCacheBlocks(model, gpu, tp),
                        secondsPerStage);
                    final double itlUs = stage.itlMeanMs(e.outputTokens()) * 1000;
                    rows.add(recorder.itlTerms());
                    targets.add(itlUs);
                    if (stage.ttftMeanMs() < QUEUEING_TTFT_IN_STEPS * itlUs / 1000)
                    {
                        rows.add(recorder.ttftTerms());
                        targets.add(stage.ttftMeanMs() * 1000);
                    }
                }
            }
            final double[] solved = solve(rows, targets, priorValues, pinned);
            for (int k = 0; k < solved.length; k++)
            {
                current[k] = 0 == round ? solved[k] : 0.5 * (solved[k] + current[k]);
            }
        }
        Fitted fitted = new Fitted(RooflineCoefficients.of(name, current), current[RooflineStepModel.TERMS], 0);
        for (int round = 0; round < FRONTEND_ROUNDS; round++)
        {
            fitted = new Fitted(fitted.coefficients(), Math.max(0, fitted.frontendUs() +
                meanTtftShortfallUs(compareAll(experiments, gpu, fitted, secondsPerStage))), 0);
        }
        double bestLoss = Double.MAX_VALUE;
        double bestJitter = 0;
        for (int step = 0; step <= JITTER_STEPS; step++)
        {
            final double jitter = step * JITTER_STEP;
            final double loss = p99TtftLoss(compareAll(experiments, gpu,
                new Fitted(fitted.coefficients(), fitted.frontendUs(), jitter), secondsPerStage));
            if (loss < bestLoss)
            {
                bestLoss = loss;
                bestJitter = jitter;
            }
        }
        return new Fitted(fitted.coefficients(), fitted.frontendUs(), bestJitter);
    }

    /**
     * The squared log error of p99 TTFT over the stages that were not queueing and whose p99 holds no spike (a p99
     * of ten mean gaps or more: a stall a log-normal spread does not make, and would be stretched to fit; such stages
     * still count in every reported error).
     */
    private static double p99TtftLoss(final List<StageReplay.Comparison> comparisons)
    {
        double loss = 0;
        for (int i = 0; i < comparisons.size(); i++)
        {
            final StageReplay.Comparison c = comparisons.get(i);
            if ("ttft_p99".equals(c.metric()) && notQueueing(comparisons, c) &&
                c.measured() < QUEUEING_TTFT_IN_STEPS * measured(comparisons, c, "itl_mean"))
            {
                final double ratio = Math.log(Math.max(c.predicted(), 1e-6) / c.measured());
                loss += ratio * ratio;
            }
        }
        return loss;
    }

    /**
     * The TTFT rows approximate the wait for the step under way; the full replays measure it. So the frontend delay
     * is moved by what the replays' mean TTFT still falls short of the measured one (relative errors, stages that were
     * not queueing).
     */
    private static double meanTtftShortfallUs(final List<StageReplay.Comparison> comparisons)
    {
        double weighted = 0;
        double weights = 0;
        for (int i = 0; i < comparisons.size(); i++)
        {
            final StageReplay.Comparison c = comparisons.get(i);
            if ("ttft_mean".equals(c.metric()) && Double.isFinite(c.predicted()) && notQueueing(comparisons, c))
            {
                final double w = 1 / (c.measured() * c.measured());
                weighted += w * (c.measured() - c.predicted());
                weights += w;
            }
        }
        return weights > 0 ? weighted / weights * 1000 : 0;
    }

    /** Whether the stage of a comparison was not queueing: its measured mean TTFT under ten mean gaps. */
    private static boolean notQueueing(final List<StageReplay.Comparison> comparisons, final StageReplay.Comparison of)
    {
        return measured(comparisons, of, "ttft_mean") < QUEUEING_TTFT_IN_STEPS * measured(comparisons, of, "itl_mean");
    }

    private static double measured(final List<StageReplay.Comparison> comparisons, final StageReplay.Comparison of,
        final String metric)
    {
        for (final StageReplay.Comparison c : comparisons)
        {
            if (metric.equals(c.metric()) && c.stage() == of.stage() && c.experiment().equals(of.experiment()))
            {
                return c.measured();
            }
        }
        return Double.NaN;
    }

    private static double[] values(final Fitted fitted)
    {
        final double[] values = Arrays.copyOf(fitted.coefficients().values(), RooflineStepModel.TERMS + 1);
        values[RooflineStepModel.TERMS] = fitted.frontendUs();
        return values;
    }

    /**
     * min sum ((row . x - target) / target)^2 + PRIOR_WEIGHT sum ((x_k - prior_k) / data sheet_k)^2 over x >= the
     * floors (the compute, weight, KV and expert factors at least 1, the rest at least 0).
     */
    private static double[] solve(final List<double[]> rows, final List<Double> targets, final double[] prior,
        final double[] pinned)
    {
        final int n = prior.length;
        final double[][] normal = new double[n][n];
        final double[] rhs = new double[n];
        for (int r = 0; r < rows.size(); r++)
        {
            final double[] row = rows.get(r);
            final double target = targets.get(r);
            for (int i = 0; i < n; i++)
            {
                rhs[i] += row[i] / target;
                for (int j = 0; j < n; j++)
                {
                    normal[i][j] += row[i] * row[j] / (target * target);
                }
            }
        }
        final double[] scales = values(DATA_SHEET);
        for (int k = 0; k < n; k++)
        {
            final double scale = scales[k];
            normal[k][k] += PRIOR_WEIGHT / (scale * scale);
            rhs[k] += PRIOR_WEIGHT * prior[k] / (scale * scale);
        }
        final double[] lower = new double[n];
        // no part of a step beats its data sheet: compute, weight and KV reads at peak at best (the all-reduces may:
        // vLLM's one-shot custom all-reduce moves less than the ring the link term prices)
        lower[COMPUTE] = 1;
        lower[WEIGHTS] = 1;
        lower[KV] = 1;
        lower[EXPERTS] = 1;
        final double[] upper = new double[n];
        Arrays.fill(upper, Double.MAX_VALUE);
        for (int k = 0; k < pinned.length; k++)
        {
            if (!Double.isNaN(pinned[k]))
            {
                lower[k] = pinned[k];
                upper[k] = pinned[k];
            }
        }
        final double[] start = prior.clone();
        for (int k = 0; k < n; k++)
        {
            start[k] = Math.min(upper[k], Math.max(lower[k], start[k]));
        }
        return NonNegativeLeastSquares.solveNormal(normal, rhs, start, lower, upper);
    }

    /**
     * Averages the terms of the steps a replay asks for while arrivals last (the stage's busy steps follow each other,
     * so their durations add up to the time; the drain after the last arrival, at a falling load, is left out).
     */
    private static final class TermRecorder implements LatencyModel
    {
        private final RooflineStepModel model;
        private final double recordUs;
        private double elapsedUs;
        private final double[] terms = new double[RooflineStepModel.TERMS];
        private final double[] sums = new double[RooflineStepModel.TERMS];
        private final double[] timeSums = new double[RooflineStepModel.TERMS];
        private final double[] prefillSums = new double[RooflineStepModel.TERMS];
        private double decodes;
        private double timeUs;
        private double prefills;

        TermRecorder(final RooflineStepModel model, final double recordUs)
        {
            this.model = model;
            this.recordUs = recordUs;
        }

        @Override
        public long stepDurationNs(final StepShape step, final SeededRandom random)
        {
            final long durationNs = model.stepDurationNs(step, random);
            final double us = durationNs / 1000.0;
            elapsedUs += us;
            if (elapsedUs > recordUs)
            {
                return durationNs;
            }
            model.terms(step, terms);
            for (int k = 0; k < terms.length; k++)
            {
                sums[k] += step.decodeRequests() * terms[k];
                timeSums[k] += us * terms[k];
                prefillSums[k] += step.prefillRequests() * terms[k];
            }
            decodes += step.decodeRequests();
            timeUs += us;
            prefills += step.prefillRequests();
            return durationNs;
        }

        @Override
        public long firstTokenDelayNs(final int promptTokens, final int cachedTokens, final int runningRequests,
            final SeededRandom random)
        {
            return 0;
        }

        @Override
        public String describe()
        {
            return model.describe();
        }

        /** The mean inter-token latency's terms: the decode steps' terms weighted by their decodes. */
        double[] itlTerms()
        {
            final double[] mean = new double[sums.length + 1];
            for (int k = 0; k < sums.length; k++)
            {
                mean[k] = decodes > 0 ? sums[k] / decodes : 0;
            }
            return mean;
        }

        /**
         * The mean TTFT's terms: the rest of the step under way when a request arrives (half a step, weighted by
         * time, as a random arrival sees it), then the step with its prefill (weighted by prefills), then the frontend.
         */
        double[] ttftTerms()
        {
            final double[] mean = new double[sums.length + 1];
            for (int k = 0; k < sums.length; k++)
            {
                mean[k] = (timeUs > 0 ? 0.5 * timeSums[k] / timeUs : 0) +
                    (prefills > 0 ? prefillSums[k] / prefills : 0);
            }
            mean[sums.length] = 1;
            return mean;
        }
    }

    /**
     * @param experiment an experiment.
     * @param gpu the GPU it ran on.
     * @param fitted corrections and frontend time.
     * @param secondsPerStage how much of each stage to replay.
     * @return the comparisons of every stage.
     */
    public static List<StageReplay.Comparison> compare(final BlisExperiment experiment, final GpuSpec gpu,
        final Fitted fitted, final double secondsPerStage)
    {
        final ModelArchitecture model = architecture(experiment);
        final int tp = experiment.tensorParallel();
        return StageReplay.compare(experiment, new RooflineStepModel(model, gpu, tp, fitted.coefficients()),
            Math.round(fitted.frontendUs() * 1000), fitted.frontendJitter(), kvCacheBlocks(model, gpu, tp),
            secondsPerStage);
    }

    /**
     * @param experiments experiments.
     * @param gpu their GPU.
     * @param fitted corrections and frontend time.
     * @param secondsPerStage how much of each stage to replay.
     * @return the comparisons of every stage of every experiment.
     */
    public static List<StageReplay.Comparison> compareAll(final List<BlisExperiment> experiments, final GpuSpec gpu,
        final Fitted fitted, final double secondsPerStage)
    {
        final List<StageReplay.Comparison> out = new ArrayList<>();
        for (final BlisExperiment e : experiments)
        {
            out.addAll(compare(e, gpu, fitted, secondsPerStage));
        }
        return out;
    }
}
