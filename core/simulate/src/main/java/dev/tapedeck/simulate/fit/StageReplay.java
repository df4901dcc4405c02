package dev.tapedeck.simulate.fit;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.VirtualTimeDriver;
import dev.tapedeck.latency.LatencyModel;

/**
 * An experiment's stages run back to back through the engine in virtual time with given step coefficients, as the
 * real server ran them: constant-rate arrivals; each request from the next user in turn, its prompt its system
 * prompt's tokens (shared by that prompt's users, so the prefix cache hits them) then tokens of its own, up to the
 * stage's measured mean prompt length; exactly the profile's output length. Each stage may be cut to its first
 * {@code secondsPerStage} seconds (the servers reach their steady state within seconds).
 * <p>
 * Stateless; every replay builds its own engine on the caller's thread.
 */
public final class StageReplay
{
    private static final int[] TOKEN_SPACE = {7};
    private static final int EOS = 2;

    private StageReplay()
    {
    }

    /**
     * What the replay predicts for one stage.
     *
     * @param ttftMeanMs mean TTFT.
     * @param ttftP99Ms p99 TTFT.
     * @param e2eMeanMs mean request latency.
     * @param e2eP99Ms p99 request latency.
     * @param itlMeanMs mean inter-token latency, (E2E - TTFT) / (output - 1) as the measurement is derived.
     * @param requests requests of the stage that finished.
     */
    public record Predicted(double ttftMeanMs, double ttftP99Ms, double e2eMeanMs, double e2eP99Ms,
        double itlMeanMs, int requests)
    {
    }

    /**
     * @param experiment the experiment.
     * @param latency the latency model to run it with.
     * @param frontendNs what the API server takes before the engine queues a request (the engine's
     *     {@code frontendDelayNs}, BLIS's arrival-to-queue overhead); latencies are measured from the arrival.
     * @param frontendJitter the log-normal sigma of the frontend delay (the engine's {@code frontendDelayJitter}).
     * @param kvCacheBlocks the engine's KV blocks.
     * @param secondsPerStage how much of each stage to run (0 for all).
     * @return one prediction per stage.
     */
    public static List<Predicted> run(final BlisExperiment experiment, final LatencyModel latency,
        final long frontendNs, final double frontendJitter, final int kvCacheBlocks, final double secondsPerStage)
    {
        final EngineConfig config = new EngineConfig()
            .maxNumSeqs(experiment.maxNumSeqs())
            .maxNumBatchedTokens(experiment.maxNumBatchedTokens())
            .maxModelLen(experiment.maxModelLen())
            .maxWaitingQueueLength(1 << 20)
            .frontendDelayNs(frontendNs)
            .frontendDelayJitter(frontendJitter)
            .kvCacheBlocks(kvCacheBlocks)
            .latencyModel(latency)
            .tokenSpace(TOKEN_SPACE, EOS)
            .conclude();
        final List<Request> requests = new ArrayList<>();
        final List<Integer> stageOf = new ArrayList<>();
        final int users = Math.max(1, experiment.systemPrompts() * experiment.usersPerSystemPrompt());
        long startNs = 0;
        int index = 0;
        for (int s = 0; s < experiment.stages().size(); s++)
        {
            final BlisExperiment.Stage stage = experiment.stages().get(s);
            final double seconds = secondsPerStage > 0 ? Math.min(secondsPerStage, stage.durationS()) :
                stage.durationS();
            final long count = Math.round(stage.ratePerS() * seconds);
            final double gapNs = 1e9 / stage.ratePerS();
            for (long i = 0; i < count; i++, index++)
            {
                final int user = index % users;
                final int group = user / Math.max(1, experiment.usersPerSystemPrompt());
                requests.add(new Request("r" + index, prompt(experiment, stage, group, index))
                    .maxTokens(experiment.outputTokens()).ignoreEos(true)
                    .arrivalNs(startNs + Math.round(i * gapNs)));
                stageOf.add(s);
            }
            startNs += Math.round(seconds * 1e9);
        }
        // the requests themselves hold their first-token and finish times
        VirtualTimeDriver.run(new Engine(config, OutputSink.DISCARD, 0), requests);
        final List<Predicted> predicted = new ArrayList<>();
        for (int s = 0; s < experiment.stages().size(); s++)
        {
            final List<double[]> rows = new ArrayList<>();
            for (int r = 0; r < requests.size(); r++)
            {
                final Request request = requests.get(r);
                if (stageOf.get(r) == s && request.isFinished() && request.firstTokenNs() > 0)
                {
                    rows.add(new double[] {(request.firstTokenNs() - request.arrivalNs()) / 1e6,
                        (request.finishedNs() - request.arrivalNs()) / 1e6});
                }
            }
            predicted.add(summarise(rows, experiment.outputTokens()));
        }
        return predicted;
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
     * @param experiment an experiment.
     * @param latency the latency model to replay it with.
     * @param frontendNs the modelled frontend delay.
     * @param frontendJitter its log-normal sigma.
     * @param kvCacheBlocks the engine's KV blocks.
     * @param secondsPerStage how much of each stage to replay.
     * @return the comparisons of every stage.
     */
    public static List<Comparison> compare(final BlisExperiment experiment, final LatencyModel latency,
        final long frontendNs, final double frontendJitter, final int kvCacheBlocks, final double secondsPerStage)
    {
        final List<Predicted> predicted = run(experiment, latency, frontendNs, frontendJitter, kvCacheBlocks,
            secondsPerStage);
        final List<Comparison> out = new ArrayList<>();
        for (int s = 0; s < predicted.size(); s++)
        {
            final BlisExperiment.Stage m = experiment.stages().get(s);
            final Predicted p = predicted.get(s);
            out.add(new Comparison(experiment.name(), s, "ttft_mean", m.ttftMeanMs(), p.ttftMeanMs()));
            out.add(new Comparison(experiment.name(), s, "ttft_p99", m.ttftP99Ms(), p.ttftP99Ms()));
            out.add(new Comparison(experiment.name(), s, "itl_mean", m.itlMeanMs(experiment.outputTokens()),
                p.itlMeanMs()));
            out.add(new Comparison(experiment.name(), s, "e2e_mean", m.e2eMeanMs(), p.e2eMeanMs()));
        }
        return out;
    }

    /**
     * @param comparisons comparisons of some stages.
     * @return the fits' loss: the squared log error of each, p99 TTFT with half the weight.
     */
    public static double loss(final List<Comparison> comparisons)
    {
        double sum = 0;
        for (final Comparison comparison : comparisons)
        {
            final double ratio = Math.log(Math.max(comparison.predicted(), 1e-6) / comparison.measured());
            sum += ("ttft_p99".equals(comparison.metric()) ? 0.5 : 1.0) * ratio * ratio;
        }
        return sum;
    }

    private static int[] prompt(final BlisExperiment experiment, final BlisExperiment.Stage stage, final int group,
        final int index)
    {
        final int length = Math.max(stage.promptTokens(), experiment.systemPromptTokens() + 1);
        final int[] tokens = new int[length];
        for (int t = 0; t < length; t++)
        {
            tokens[t] = t < experiment.systemPromptTokens() ? 1_000_000 + group * 10_000 + t :
                2_000_000 + (index % 500_000) * 4_000 + t;
        }
        return tokens;
    }

    private static Predicted summarise(final List<double[]> rows, final int outputTokens)
    {
        if (rows.isEmpty())
        {
            return new Predicted(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0);
        }
        final double[] ttft = rows.stream().mapToDouble(r -> r[0]).sorted().toArray();
        final double[] e2e = rows.stream().mapToDouble(r -> r[1]).sorted().toArray();
        final double ttftMean = Arrays.stream(ttft).average().orElse(Double.NaN);
        final double e2eMean = Arrays.stream(e2e).average().orElse(Double.NaN);
        return new Predicted(ttftMean, percentile(ttft, 0.99), e2eMean, percentile(e2e, 0.99),
            (e2eMean - ttftMean) / Math.max(1, outputTokens - 1), rows.size());
    }

    private static double percentile(final double[] sorted, final double q)
    {
        final double position = q * (sorted.length - 1);
        final int low = (int)Math.floor(position);
        final int high = Math.min(sorted.length - 1, low + 1);
        return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
    }
}
