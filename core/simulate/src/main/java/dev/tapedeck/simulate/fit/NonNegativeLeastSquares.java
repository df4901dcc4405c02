package dev.tapedeck.simulate.fit;

/**
 * Least squares with every unknown within bounds (at least zero or a physical floor; a fixed value for an ablation),
 * for the few unknowns of a step-model fit: cyclic coordinate descent on the normal equations, each coordinate set to
 * its exact minimiser clamped to its bounds. The problem is convex, so the sweeps converge to its minimum. Stateless;
 * runs on the caller's thread.
 */
final class NonNegativeLeastSquares
{
    private static final int MAX_SWEEPS = 100_000;
    private static final double TOLERANCE = 1e-12;

    private NonNegativeLeastSquares()
    {
    }

    /**
     * @param normal {@code A^T A} (symmetric, positive diagonal).
     * @param rhs {@code A^T b}.
     * @param start a starting point (not below the bounds); overwritten with the solution.
     * @param lower each unknown's least value.
     * @param upper each unknown's greatest value (equal to its least to hold it fixed).
     * @return the {@code lower <= x <= upper} minimising {@code |A x - b|^2}.
     */
    static double[] solveNormal(final double[][] normal, final double[] rhs, final double[] start,
        final double[] lower, final double[] upper)
    {
        final double[] x = start;
        for (int sweep = 0; sweep < MAX_SWEEPS; sweep++)
        {
            double change = 0;
            for (int k = 0; k < x.length; k++)
            {
                double residual = rhs[k];
                for (int j = 0; j < x.length; j++)
                {
                    if (j != k)
                    {
                        residual -= normal[k][j] * x[j];
                    }
                }
                final double next = Math.min(upper[k], Math.max(lower[k], residual / normal[k][k]));
                change = Math.max(change, Math.abs(next - x[k]) / Math.max(Math.abs(x[k]), 1e-9));
                x[k] = next;
            }
            if (change < TOLERANCE)
            {
                break;
            }
        }
        return x;
    }
}
