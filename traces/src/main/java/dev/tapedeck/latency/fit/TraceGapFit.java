package dev.tapedeck.latency.fit;

import java.util.List;

import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.trace.TraceRecord;

/**
 * Fits step-model coefficients to a trace whose records carry per-token gaps with their step context ({@code itl_ms}
 * with {@code itl_ctx}, as vllm-vcr's tap and tapedeck's {@code --trace-out} write them).
 * <p>
 * Each one-token gap is one engine step's duration, and the step model makes it linear in the coefficients:
 * {@code gap = base + prefillToken x P + decodeRequest x D + contextKiloToken x C / 1000}, one equation per gap:
 * <ul>
 *   <li>P is the gap's {@code itl_ctx.prefill_tokens};</li>
 *   <li>D the requests decoding in the step: {@code itl_ctx.num_running}, less one when the step prefilled (the
 *       running count includes the request being prefilled), at least 1 (the record's own request);</li>
 *   <li>C the KV context those decodes read, which no trace records: it is D times the mean context (prompt plus
 *       tokens so far) of the trace's records decoding at that moment, placed on one timeline by
 *       {@code arrival_ms + ttft_ms + itl_ms}; a record without {@code arrival_ms} uses its own context. For a
 *       complete capture that mean is the step's; for a sampled one it is an estimate.</li>
 * </ul>
 * Gaps that closed on more than one token ({@code itl_tokens > 1}: a speculative burst, whose step also verified
 * drafts) and non-positive gaps are left out (their tokens still count towards the context). Least squares over every
 * gap of every file; a negative coefficient is not physical: its term is dropped and the rest refitted, as
 * {@link StepModelFit} does. Files are separate captures: each has its own timeline.
 * <p>
 * Stateless; runs on the caller's thread.
 */
public final class TraceGapFit
{
    private static final int TERMS = 4;
    /** Token times this close (ms) are the same step's. */
    private static final double SAME_STEP_MS = 1e-6;

    private TraceGapFit()
    {
    }

    /**
     * The fitted coefficients and how well they explain the gaps.
     *
     * @param coefficients the profile.
     * @param meanAbsolutePercentageError mean |predicted - measured| / measured gap.
     * @param gapsUsed equations in the fit.
     * @param recordsUsed records with {@code itl_ctx} that gave at least one gap.
     * @param multiTokenGaps gaps left out because they closed on more than one token.
     * @param recordsWithoutContext records with gaps but no {@code itl_ctx}, left out.
     */
    public record Result(StepCoefficients coefficients, double meanAbsolutePercentageError, long gapsUsed,
        int recordsUsed, int multiTokenGaps, int recordsWithoutContext)
    {
    }

    /** One gap's equation. */
    @FunctionalInterface
    interface GapSink
    {
        void accept(double prefillTokens, double decodes, double contextKiloTokens, double gapUs);
    }

    /**
     * @param captures the traces' records, one list per file (capture).
     * @param name profile name for the result.
     * @param source provenance text for the result.
     * @param contextTerm fit the KV-context term too; without it the per-decode term absorbs the attention cost.
     * @return the fit.
     * @throws IllegalArgumentException when no record has {@code itl_ctx}, when there are too few gaps, or when they
     *     do not determine the coefficients (e.g. every step had the same batch).
     */
    public static Result fit(final List<List<TraceRecord>> captures, final String name, final String source,
        final boolean contextTerm)
    {
        final double[][] normal = new double[TERMS][TERMS];
        final double[] rhs = new double[TERMS];
        final long[] gaps = new long[1];
        for (final List<TraceRecord> capture : captures)
        {
            gaps(capture, (p, d, c, y) ->
            {
                final double[] row = {1.0, p, d, c};
                for (int i = 0; i < TERMS; i++)
                {
                    for (int j = 0; j < TERMS; j++)
                    {
                        normal[i][j] += row[i] * row[j];
                    }
                    rhs[i] += row[i] * y;
                }
                gaps[0]++;
            });
        }
        final int[] counts = count(captures);
        if (0 == counts[0])
        {
            throw new IllegalArgumentException("no record has itl_ctx (the batch around each gap: num_running and " +
                "prefill_tokens), so the gaps cannot be attributed to steps; capture with vllm-vcr's tap or " +
                "tapedeck --trace-out");
        }
        if (gaps[0] < 2 * TERMS)
        {
            throw new IllegalArgumentException("need at least " + 2 * TERMS + " one-token gaps with itl_ctx to fit, " +
                "got " + gaps[0]);
        }
        final double[] solution;
        try
        {
            solution = DropNegativeLeastSquares.solve(normal, rhs, new boolean[] {true, true, true, contextTerm});
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("the gaps do not determine the coefficients (every step had the " +
                "same batch?); the fit needs steps of different sizes", ex);
        }
        final double[] error = new double[1];
        for (final List<TraceRecord> capture : captures)
        {
            gaps(capture, (p, d, c, y) -> error[0] += Math.abs(solution[0] + solution[1] * p + solution[2] * d +
                solution[3] * c - y) / y);
        }
        final StepCoefficients coefficients = new StepCoefficients(name, solution[0], solution[1], solution[2],
            solution[3], 0.0, source);
        return new Result(coefficients, error[0] / gaps[0], gaps[0], counts[0], counts[1], counts[2]);
    }

    /** [records with itl_ctx and gaps, multi-token gaps among them, records with gaps but no itl_ctx]. */
    private static int[] count(final List<List<TraceRecord>> captures)
    {
        final int[] counts = new int[3];
        for (final List<TraceRecord> capture : captures)
        {
            for (final TraceRecord record : capture)
            {
                if (null == record.itlMs() || 0 == record.itlMs().length)
                {
                    continue;
                }
                if (null == record.itlContext())
                {
                    counts[2]++;
                    continue;
                }
                counts[0]++;
                final int[] tokens = record.itlTokens();
                for (int i = 0; null != tokens && i < tokens.length; i++)
                {
                    counts[1] += tokens[i] > 1 ? 1 : 0;
                }
            }
        }
        return counts;
    }

    /**
     * Every usable gap of one capture, in record order.
     */
    static void gaps(final List<TraceRecord> capture, final GapSink sink)
    {
        final double[][] meanContext = DecodingContext.meanContext(capture, SAME_STEP_MS);
        for (int r = 0; r < capture.size(); r++)
        {
            final TraceRecord record = capture.get(r);
            final TraceRecord.ItlContext context = record.itlContext();
            final double[] itl = record.itlMs();
            if (null == context || null == itl)
            {
                continue;
            }
            final int[] tokens = record.itlTokens();
            for (int i = 0; i < itl.length; i++)
            {
                if (null != tokens && tokens[i] > 1 || !(itl[i] > 0))
                {
                    continue;
                }
                final int prefill = context.prefillTokens()[i];
                final int decodes = Math.max(context.numRunning()[i] - (prefill > 0 ? 1 : 0), 1);
                sink.accept(prefill, decodes, decodes * meanContext[r][i] / 1000.0, itl[i] * 1000.0);
            }
        }
    }
}
