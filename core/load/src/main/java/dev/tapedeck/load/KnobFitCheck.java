package dev.tapedeck.load;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.tapedeck.latency.KnobLatencyModel;
import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepShape;
import dev.tapedeck.load.LatencySide.Distribution;
import dev.tapedeck.load.LatencySide.Metric;
import dev.tapedeck.trace.TraceRecord;

/**
 * {@code tapedeck inspect calibrate TRACE}: the model-level check tapedeck can make of one trace today, vllm-vcr's
 * "knob fit". The knob model ({@link KnobLatencyModel}, constant TTFT form, no load factor) is given the trace's
 * pooled TTFT and ITL mean and sample standard deviation (n - 1), each standard deviation capped at 30% of its mean as
 * the knob model requires, and drawn {@code repeat} times for every record: one first-token delay per record and one
 * step per token the record generated after its first chunk. The draws are the prediction; the trace is the
 * measurement; {@link Calibration} compares them.
 * <p>
 * It answers "do two numbers per metric (mean, spread) reproduce this trace?": a trace with a heavy tail fails it,
 * since the knob model's draws are clamped to [0.3, 1.7] x mean. It is not vllm-vcr's trace-fitted replay (the
 * {@code TraceLatency} model, which tapedeck does not have yet), and it does not run the engine: queueing and batching
 * are not replayed, so queue time is not compared. Stateless.
 */
public final class KnobFitCheck
{
    /** Records are drawn this many times by default (vllm-vcr draws at least 10 samples per record). */
    public static final int DEFAULT_REPEAT = 10;

    private static final double MAX_STD_DEV_SHARE = 0.3;
    private static final int MAX_NUM_SEQS = 128;

    private KnobFitCheck()
    {
    }

    /**
     * The fitted knobs.
     *
     * @param ttftMeanMs pooled TTFT mean.
     * @param ttftStdDevMs its standard deviation as used (after the cap).
     * @param itlMeanMs pooled per-token ITL mean.
     * @param itlStdDevMs its standard deviation as used.
     * @param notes what was capped.
     */
    public record Knobs(double ttftMeanMs, double ttftStdDevMs, double itlMeanMs, double itlStdDevMs,
        List<String> notes)
    {
    }

    /**
     * @param trace the measured side, a trace (with per-request samples).
     * @return the knobs fitted to it.
     */
    public static Knobs fit(final LatencySide trace)
    {
        final List<String> notes = new ArrayList<>();
        final double[] ttft = moments(trace.metrics().get(Metric.TTFT));
        final double[] itl = moments(trace.metrics().get(Metric.ITL));
        return new Knobs(ttft[0], cap("TTFT", ttft, notes), itl[0], cap("ITL", itl, notes), notes);
    }

    /**
     * @param trace the measured side (a trace).
     * @param records the trace's records, in file order.
     * @param repeat draws per record, at least 1.
     * @param seed the generator's seed.
     * @param tolerance the gate of every metric without its own.
     * @param perMetric tolerances of single metrics.
     * @return the knob fit's draws (PRED) against the trace (REAL).
     */
    public static Calibration.Result check(final LatencySide trace, final List<TraceRecord> records, final int repeat,
        final long seed, final double tolerance, final Map<Metric, Double> perMetric)
    {
        if (repeat < 1)
        {
            throw new IllegalArgumentException("--repeat must be at least 1, got " + repeat);
        }
        final Knobs knobs = fit(trace);
        final KnobLatencyModel model = new KnobLatencyModel(KnobLatencyModel.Calculator.CONSTANT,
            nanos(knobs.ttftMeanMs()), stdDevNanos(knobs.ttftStdDevMs(), knobs.ttftMeanMs()),
            nanos(knobs.itlMeanMs()), stdDevNanos(knobs.itlStdDevMs(), knobs.itlMeanMs()), 0, 0, 0, 1.0, MAX_NUM_SEQS);
        final SeededRandom random = new SeededRandom(seed);
        final OneDecode step = new OneDecode();
        final List<TraceRecord> drawn = new ArrayList<>(records.size() * repeat);
        for (int r = 0; r < repeat; r++)
        {
            for (final TraceRecord source : records)
            {
                final int running = (int)Math.max(1, Math.min(Integer.MAX_VALUE, source.concurrency()));
                step.running = running;
                final TraceRecord record = new TraceRecord().promptTokens(source.promptTokens())
                    .outputTokens(source.outputTokens()).cachedTokens(source.cachedTokens())
                    .ttftMs(model.firstTokenDelayNs((int)Math.min(Integer.MAX_VALUE, source.promptTokens()),
                        (int)Math.min(Integer.MAX_VALUE, source.cachedTokens()), running, random) / 1e6);
                final double[] gaps = new double[tokensAfterFirstChunk(source)];
                for (int i = 0; i < gaps.length; i++)
                {
                    gaps[i] = model.stepDurationNs(step, random) / 1e6;
                }
                drawn.add(record.itlMs(gaps));
            }
        }
        final LatencySide fitted = LatencySide.ofTrace(String.format(Locale.ROOT,
            "knob fit of %s (TTFT %.2f +- %.2f ms, ITL %.2f +- %.2f ms, %d draws per record, seed %d)", trace.name(),
            knobs.ttftMeanMs(), knobs.ttftStdDevMs(), knobs.itlMeanMs(), knobs.itlStdDevMs(), repeat, seed), drawn);
        final LatencySide pred = new LatencySide(fitted.name(), "knob-fit", fitted.metrics(), List.of(),
            knobs.notes());
        final LatencySide real = new LatencySide(trace.name(), trace.kind(), withoutQueue(trace.metrics()),
            trace.requests(), trace.notes());
        return Calibration.compare("knob-fit", pred, real, tolerance, perMetric, new Calibration.Pairing("none",
            List.of(), List.of(), "the knob fit draws every request independently of what it measured; APE does " +
            "not apply"));
    }

    private static Map<Metric, Distribution> withoutQueue(final Map<Metric, Distribution> metrics)
    {
        final Map<Metric, Distribution> copy = new EnumMap<>(Metric.class);
        copy.putAll(metrics);
        copy.remove(Metric.QUEUE);
        return copy;
    }

    private static int tokensAfterFirstChunk(final TraceRecord record)
    {
        if (null != record.itlMs())
        {
            final int[] tokens = record.itlTokens();
            if (null == tokens)
            {
                return record.itlMs().length;
            }
            int sum = 0;
            for (final int t : tokens)
            {
                sum += Math.max(1, t);
            }
            return sum;
        }
        if (null != record.itlSummary())
        {
            return (int)Math.min(Integer.MAX_VALUE, record.itlSummary().count());
        }
        return 0;
    }

    /**
     * @return {mean, sample standard deviation} of the samples; {0, 0} without samples.
     */
    private static double[] moments(final Distribution distribution)
    {
        if (null == distribution || !distribution.hasSamples() || 0 == distribution.count())
        {
            return new double[] {0, 0};
        }
        final double[] values = distribution.sortedMs();
        final double mean = distribution.meanMs();
        if (values.length < 2)
        {
            return new double[] {mean, 0};
        }
        double squares = 0;
        for (final double v : values)
        {
            squares += (v - mean) * (v - mean);
        }
        return new double[] {mean, Math.sqrt(squares / (values.length - 1))};
    }

    private static double cap(final String name, final double[] moments, final List<String> notes)
    {
        final double max = MAX_STD_DEV_SHARE * moments[0];
        if (moments[1] > max)
        {
            notes.add(String.format(Locale.ROOT, "%s standard deviation %.2f ms capped at 30%% of the mean, %.2f ms " +
                "(the knob model's limit)", name, moments[1], max));
            return max;
        }
        return moments[1];
    }

    private static long nanos(final double ms)
    {
        return Math.round(ms * 1e6);
    }

    private static long stdDevNanos(final double stdDevMs, final double meanMs)
    {
        return Math.min((long)Math.floor(stdDevMs * 1e6), (long)(MAX_STD_DEV_SHARE * nanos(meanMs)));
    }

    /**
     * A step with one decode and the record's concurrency as the running set (the knob model reads only these).
     */
    private static final class OneDecode implements StepShape
    {
        private int running = 1;

        @Override
        public int decodeRequests()
        {
            return 1;
        }

        @Override
        public int prefillTokens()
        {
            return 0;
        }

        @Override
        public int prefillRequests()
        {
            return 0;
        }

        @Override
        public long decodeContextTokens()
        {
            return 0;
        }

        @Override
        public int runningRequests()
        {
            return running;
        }
    }
}
