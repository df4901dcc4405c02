package dev.tapedeck.simulate.fit;

import java.util.Arrays;
import java.util.function.ToDoubleFunction;

/**
 * A plain Nelder-Mead simplex search (reflection 1, expansion 2, contraction and shrink 0.5), for the fits, whose
 * loss is a replay in virtual time (no gradient). Stateless; runs on the caller's thread.
 */
final class NelderMead
{
    private NelderMead()
    {
    }

    /**
     * @param f the function to minimise.
     * @param x0 the starting point; the first simplex steps 0.7 along each axis from it.
     * @param budget most evaluations of {@code f}.
     * @return the best point found.
     */
    static double[] minimise(final ToDoubleFunction<double[]> f, final double[] x0, final int budget)
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
