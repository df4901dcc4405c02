package dev.tapedeck.latency;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import dev.tapedeck.trace.TraceRecord;

/**
 * The fits behind {@link TraceLatencyModel}: the prefill service curve, the chunk-cost law, the full-step floor and
 * the decode donors, from captured records. Stateless; called once per model, on the caller's thread.
 */
final class TraceLatencyFit
{
    private static final double WINDOW_TOKENS = 600;
    private static final double WINDOW_STRIDE = 400;
    private static final int WINDOW_MIN_POINTS = 5;
    private static final int LAW_MIN_OBSERVATIONS = 30;
    private static final int LAW_MIN_CHUNK = 256;

    private TraceLatencyFit()
    {
    }

    private static long minimumConcurrency(final List<TraceRecord> records)
    {
        long min = Long.MAX_VALUE;
        for (final TraceRecord record : records)
        {
            min = Math.min(min, record.concurrency());
        }
        return min;
    }

    /**
     * @return {a, b, c, floor} of {@code T(u)} in ms, a NaN when no curve fits.
     */
    static double[] serviceCurve(final List<TraceRecord> records)
    {
        final long concurrency = minimumConcurrency(records);
        final List<double[]> points = new ArrayList<>();
        for (final TraceRecord record : records)
        {
            if (record.concurrency() == concurrency && record.outputTokens() > 0)
            {
                points.add(new double[] {Math.max(record.promptTokens() - record.cachedTokens(), 1), record.ttftMs()});
            }
        }
        points.sort(Comparator.comparingDouble(p -> p[0]));
        final List<double[]> windows = new ArrayList<>(); // u, p10, weight
        if (!points.isEmpty())
        {
            final double last = points.get(points.size() - 1)[0];
            for (double start = points.get(0)[0]; start <= last; start += WINDOW_STRIDE)
            {
                final List<double[]> in = new ArrayList<>();
                for (final double[] p : points)
                {
                    if (p[0] >= start && p[0] < start + WINDOW_TOKENS)
                    {
                        in.add(p);
                    }
                }
                if (in.size() >= WINDOW_MIN_POINTS)
                {
                    final double[] ttft = in.stream().mapToDouble(p -> p[1]).sorted().toArray();
                    windows.add(new double[] {in.get(in.size() / 2)[0], ttft[in.size() / 10], Math.sqrt(in.size())});
                }
            }
        }
        final double[] none = {Double.NaN, 0, 0, 0};
        if (windows.size() < 2)
        {
            return none;
        }
        double floor = Double.MAX_VALUE;
        double maxU = 0;
        for (final double[] w : windows)
        {
            floor = Math.min(floor, w[1]);
            maxU = Math.max(maxU, w[0]);
        }
        if (windows.size() >= 4)
        {
            final double[] quad = weightedLeastSquares(windows, 3);
            if (null != quad && quad[2] >= 0 && quad[1] + 2 * quad[2] * maxU >= 0)
            {
                return new double[] {quad[0], quad[1], quad[2], floor};
            }
        }
        final double[] line = weightedLeastSquares(windows, 2);
        return null != line && line[1] >= 0 ? new double[] {line[0], line[1], 0, floor} : none;
    }

    /** Weighted least squares of y on 1, u (, u^2); null when singular. */
    private static double[] weightedLeastSquares(final List<double[]> windows, final int terms)
    {
        final double[][] a = new double[terms][terms + 1];
        for (final double[] w : windows)
        {
            final double[] x = {1, w[0], w[0] * w[0]};
            for (int i = 0; i < terms; i++)
            {
                for (int j = 0; j < terms; j++)
                {
                    a[i][j] += w[2] * x[i] * x[j];
                }
                a[i][terms] += w[2] * x[i] * w[1];
            }
        }
        return solve(a, 1e-12);
    }

    /** Gaussian elimination with partial pivoting on an augmented matrix; null when a pivot is below the limit. */
    static double[] solve(final double[][] a, final double singular)
    {
        final int n = a.length;
        for (int col = 0; col < n; col++)
        {
            int pivot = col;
            for (int row = col + 1; row < n; row++)
            {
                if (Math.abs(a[row][col]) > Math.abs(a[pivot][col]))
                {
                    pivot = row;
                }
            }
            if (Math.abs(a[pivot][col]) < singular)
            {
                return null;
            }
            final double[] swap = a[col];
            a[col] = a[pivot];
            a[pivot] = swap;
            for (int row = col + 1; row < n; row++)
            {
                final double factor = a[row][col] / a[col][col];
                for (int k = col; k <= n; k++)
                {
                    a[row][k] -= factor * a[col][k];
                }
            }
        }
        final double[] x = new double[n];
        for (int row = n - 1; row >= 0; row--)
        {
            double sum = a[row][n];
            for (int k = row + 1; k < n; k++)
            {
                sum -= a[row][k] * x[k];
            }
            x[row] = sum / a[row][row];
        }
        return x;
    }

    /** Fallback TTFTs: per uncached-prompt bucket, the TTFTs of its lowest concurrency bucket, sorted. */
    static void ttftBuckets(final List<TraceRecord> records, final double[][] ttft, final double[] medianU)
    {
        for (int bucket = 0; bucket < ttft.length; bucket++)
        {
            int lowest = Integer.MAX_VALUE;
            final List<double[]> in = new ArrayList<>();
            for (final TraceRecord record : records)
            {
                final long u = Math.max(record.promptTokens() - record.cachedTokens(), 1);
                if (TraceLatencyModel.promptBucket(u) != bucket || record.outputTokens() <= 0)
                {
                    continue;
                }
                final int conc = TraceLatencyModel.concurrencyBucket(record.concurrency());
                if (conc < lowest)
                {
                    lowest = conc;
                    in.clear();
                }
                if (conc == lowest)
                {
                    in.add(new double[] {u, record.ttftMs()});
                }
            }
            if (!in.isEmpty())
            {
                ttft[bucket] = in.stream().mapToDouble(p -> p[1]).sorted().toArray();
                medianU[bucket] = in.stream().mapToDouble(p -> p[0]).sorted().toArray()[in.size() / 2];
            }
        }
    }

    /** True when more than 6% of the record's gaps carry a budget-scale prefill admission. */
    static boolean isChurn(final TraceRecord record)
    {
        final TraceRecord.ItlContext ctx = record.itlContext();
        if (null == ctx || null == ctx.prefillTokens() || 0 == ctx.prefillTokens().length)
        {
            return false;
        }
        int big = 0;
        for (final int mark : ctx.prefillTokens())
        {
            big += mark > TraceLatencyModel.BIG_CHUNK_TOKENS ? 1 : 0;
        }
        return big * 100L > ctx.prefillTokens().length * 6L;
    }

    private static boolean hasContext(final TraceRecord record)
    {
        return null != record.itlMs() && null != record.itlContext() && null != record.itlContext().prefillTokens() &&
            record.itlContext().prefillTokens().length == record.itlMs().length;
    }

    private static double medianCleanGap(final TraceRecord record)
    {
        final double[] gaps = record.itlMs();
        final int[] marks = record.itlContext().prefillTokens();
        final List<Double> clean = new ArrayList<>();
        for (int i = 0; i < gaps.length; i++)
        {
            if (0 == marks[i])
            {
                clean.add(gaps[i]);
            }
        }
        if (clean.size() < WINDOW_MIN_POINTS)
        {
            return Double.NaN;
        }
        clean.sort(null);
        return clean.get(clean.size() / 2);
    }

    /**
     * @return {c0, c1} of the chunk-cost law in ms ({0, 0} when it cannot be fitted).
     */
    static double[] chunkLaw(final List<TraceRecord> records, final int budget)
    {
        final List<double[]> observations = new ArrayList<>(); // x1, x2, y
        for (final TraceRecord record : records)
        {
            if (!hasContext(record))
            {
                continue;
            }
            final double base = medianCleanGap(record);
            if (Double.isNaN(base))
            {
                continue;
            }
            final double[] gaps = record.itlMs();
            final int[] marks = record.itlContext().prefillTokens();
            for (int i = 0; i < gaps.length; i++)
            {
                final long mark = marks[i];
                if (0 == mark)
                {
                    continue;
                }
                final long chunk = (mark - 1) % budget + 1;
                boolean isolated = chunk >= LAW_MIN_CHUNK;
                for (int j = Math.max(0, i - 2); j <= Math.min(gaps.length - 1, i + 2) && isolated; j++)
                {
                    isolated = j == i || 0 == marks[j];
                }
                if (isolated)
                {
                    final double rest = mark - chunk;
                    observations.add(new double[] {chunk, (mark * (double)mark - rest * rest) / 2,
                        Math.max(gaps[i] - base, 0)});
                }
            }
        }
        final double[] zero = {0, 0};
        if (observations.size() < LAW_MIN_OBSERVATIONS)
        {
            return zero;
        }
        List<double[]> kept = observations;
        double[] fit = null;
        for (int round = 0; round < 4; round++)
        {
            if (kept.size() < 2)
            {
                return zero;
            }
            double s11 = 0;
            double s12 = 0;
            double s22 = 0;
            double s1y = 0;
            double s2y = 0;
            for (final double[] o : kept)
            {
                s11 += o[0] * o[0];
                s12 += o[0] * o[1];
                s22 += o[1] * o[1];
                s1y += o[0] * o[2];
                s2y += o[1] * o[2];
            }
            final double det = s11 * s22 - s12 * s12;
            if (Math.abs(det) < 1e-9)
            {
                return zero;
            }
            final double[] f = {(s1y * s22 - s2y * s12) / det, (s2y * s11 - s1y * s12) / det};
            fit = f;
            final List<double[]> sorted = new ArrayList<>(kept);
            sorted.sort(Comparator.comparingDouble(o -> Math.abs(o[2] - f[0] * o[0] - f[1] * o[1])));
            kept = sorted.subList(0, (int)(sorted.size() * 0.8));
        }
        return fit[0] < 0 || fit[1] < 0 ? zero : fit;
    }

    /**
     * @return the median excess of clean gaps within [0.8, 2.5] x the law's full-budget cost (ms), 0 with fewer than
     *     30 such gaps or no law.
     */
    static double fullStepFloor(final List<TraceRecord> records, final double lawFullMs)
    {
        if (lawFullMs <= 0)
        {
            return 0;
        }
        final List<Double> excess = new ArrayList<>();
        for (final TraceRecord record : records)
        {
            if (!hasContext(record))
            {
                continue;
            }
            final double base = medianCleanGap(record);
            if (Double.isNaN(base))
            {
                continue;
            }
            final double[] gaps = record.itlMs();
            for (int i = 0; i < gaps.length; i++)
            {
                final double e = gaps[i] - base;
                if (0 == record.itlContext().prefillTokens()[i] && e >= 0.8 * lawFullMs && e <= 2.5 * lawFullMs)
                {
                    excess.add(e);
                }
            }
        }
        if (excess.size() < LAW_MIN_OBSERVATIONS)
        {
            return 0;
        }
        excess.sort(null);
        return excess.get(excess.size() / 2);
    }

    /**
     * @return a record's donor steps {sorted gaps ms, their tokens}, or null when it has no ITL data.
     */
    static double[][] donorSteps(final TraceRecord record)
    {
        final double[] gaps = record.itlMs();
        if (null == gaps || 0 == gaps.length)
        {
            if (null != record.itlSummary() && record.itlSummary().count() > 0)
            {
                return new double[][] {{record.itlSummary().meanMs()}, {1}};
            }
            return null;
        }
        final int[] tokens = record.itlTokens();
        final boolean context = hasContext(record);
        final List<double[]> steps = new ArrayList<>();
        for (int i = 0; i < gaps.length; i++)
        {
            if (!context || 0 == record.itlContext().prefillTokens()[i])
            {
                steps.add(new double[] {gaps[i], null == tokens ? 1 : Math.max(1, tokens[i])});
            }
        }
        if (context && !steps.isEmpty())
        {
            final double[] all = gaps.clone();
            Arrays.sort(all);
            final double limit = 4 * all[all.length / 2];
            steps.removeIf(s -> s[0] > limit);
        }
        if (steps.isEmpty())
        {
            return null;
        }
        steps.sort(Comparator.comparingDouble(s -> s[0]));
        final double[][] out = new double[2][steps.size()];
        for (int i = 0; i < steps.size(); i++)
        {
            out[0][i] = steps.get(i)[0];
            out[1][i] = steps.get(i)[1];
        }
        return out;
    }

    /**
     * @return every record's {@code max(output_tokens, 1)}, sorted.
     */
    static double[] outputLengths(final List<TraceRecord> records)
    {
        return records.stream().mapToDouble(r -> Math.max(r.outputTokens(), 1)).sorted().toArray();
    }
}
