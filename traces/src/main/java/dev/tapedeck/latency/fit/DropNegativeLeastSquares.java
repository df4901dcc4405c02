package dev.tapedeck.latency.fit;

/**
 * Least squares from the normal equations with no coefficient negative, the way the step-model fits have always done
 * it: solve over the active terms, and while a term comes out negative, drop the last negative one (it is not
 * physical) and solve again. For the handful of terms of a step model. Stateless; runs on the caller's thread.
 */
final class DropNegativeLeastSquares
{
    private DropNegativeLeastSquares()
    {
    }

    /**
     * @param normal {@code A^T A} over every term.
     * @param rhs {@code A^T b}.
     * @param active the terms to fit (the others are 0); a dropped term is cleared here.
     * @return the coefficients, 0 for inactive terms.
     * @throws IllegalArgumentException when the data do not determine the active terms (a singular system).
     */
    static double[] solve(final double[][] normal, final double[] rhs, final boolean[] active)
    {
        final int terms = rhs.length;
        double[] solution = solveActive(normal, rhs, active);
        for (int round = 0; round < terms && hasNegative(solution, active); round++)
        {
            for (int t = terms - 1; t >= 0; t--)
            {
                if (active[t] && solution[t] < 0)
                {
                    active[t] = false;
                    break;
                }
            }
            solution = solveActive(normal, rhs, active);
        }
        return solution;
    }

    private static boolean hasNegative(final double[] solution, final boolean[] active)
    {
        for (int t = 0; t < solution.length; t++)
        {
            if (active[t] && solution[t] < 0)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Least squares over the active terms (Gaussian elimination with partial pivoting); inactive terms are 0.
     */
    private static double[] solveActive(final double[][] normal, final double[] rhs, final boolean[] active)
    {
        final int terms = rhs.length;
        final int[] index = new int[terms];
        int n = 0;
        for (int t = 0; t < terms; t++)
        {
            if (active[t])
            {
                index[n++] = t;
            }
        }
        final double[][] matrix = new double[n][n + 1];
        for (int i = 0; i < n; i++)
        {
            for (int j = 0; j < n; j++)
            {
                matrix[i][j] = normal[index[i]][index[j]];
            }
            matrix[i][n] = rhs[index[i]];
        }
        for (int col = 0; col < n; col++)
        {
            int pivot = col;
            for (int r = col + 1; r < n; r++)
            {
                if (Math.abs(matrix[r][col]) > Math.abs(matrix[pivot][col]))
                {
                    pivot = r;
                }
            }
            final double[] swap = matrix[col];
            matrix[col] = matrix[pivot];
            matrix[pivot] = swap;
            if (Math.abs(matrix[col][col]) < 1e-12)
            {
                throw new IllegalArgumentException("the data do not determine the coefficients (singular system)");
            }
            for (int r = 0; r < n; r++)
            {
                if (r != col)
                {
                    final double factor = matrix[r][col] / matrix[col][col];
                    for (int c = col; c <= n; c++)
                    {
                        matrix[r][c] -= factor * matrix[col][c];
                    }
                }
            }
        }
        final double[] solution = new double[terms];
        for (int i = 0; i < n; i++)
        {
            solution[index[i]] = matrix[i][n] / matrix[i][i];
        }
        return solution;
    }
}
