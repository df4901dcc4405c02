package dev.tapedeck.latency;

/**
 * Parses durations as given on the command line: Go-style strings ({@code 100ms}, {@code 1.5s}, {@code 250us},
 * {@code 1m30s}, {@code 2h}, {@code 800ns}), as llm-d-inference-sim accepts them, or a bare number of milliseconds
 * ({@code 12.5}).
 */
public final class Durations
{
    private Durations()
    {
    }

    /**
     * @param text the duration text.
     * @return the duration in nanoseconds.
     * @throws IllegalArgumentException with the offending text when it does not parse or is negative.
     */
    public static long parseNs(final String text)
    {
        final String s = text.trim();
        if (s.isEmpty())
        {
            throw new IllegalArgumentException("empty duration");
        }
        if (isPlainNumber(s))
        {
            return toNs(Double.parseDouble(s), 1_000_000.0, text);
        }
        double totalNs = 0.0;
        int i = 0;
        while (i < s.length())
        {
            final int numberStart = i;
            while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.'))
            {
                i++;
            }
            final int unitStart = i;
            while (i < s.length() && Character.isLetter(s.charAt(i)))
            {
                i++;
            }
            if (numberStart == unitStart || unitStart == i)
            {
                throw invalid(text);
            }
            final double value;
            try
            {
                value = Double.parseDouble(s.substring(numberStart, unitStart));
            }
            catch (final NumberFormatException ex)
            {
                throw invalid(text);
            }
            totalNs += value * unitNs(s.substring(unitStart, i), text);
        }
        return toNs(totalNs, 1.0, text);
    }

    /**
     * @param ns a duration in nanoseconds.
     * @return the shortest exact Go-style rendering ({@code 1.5s}, {@code 250us}, {@code 0s}).
     */
    public static String format(final long ns)
    {
        if (0 == ns)
        {
            return "0s";
        }
        final long[] units = {1_000_000_000L, 1_000_000L, 1_000L, 1L};
        final String[] names = {"s", "ms", "us", "ns"};
        for (int u = 0; u < units.length; u++)
        {
            if (ns >= units[u] && (ns * 1000) % units[u] == 0)
            {
                final double value = (double)ns / units[u];
                return (value == Math.rint(value) ? Long.toString((long)value) : Double.toString(value)) + names[u];
            }
        }
        return ns + "ns";
    }

    private static boolean isPlainNumber(final String s)
    {
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            if (!Character.isDigit(c) && c != '.')
            {
                return false;
            }
        }
        return true;
    }

    private static double unitNs(final String unit, final String text)
    {
        switch (unit)
        {
            case "ns":
                return 1.0;
            case "us":
            case "\u00b5s":
                return 1e3;
            case "ms":
                return 1e6;
            case "s":
                return 1e9;
            case "m":
                return 60e9;
            case "h":
                return 3600e9;
            default:
                throw invalid(text);
        }
    }

    private static long toNs(final double value, final double scale, final String text)
    {
        final double ns = value * scale;
        if (Double.isNaN(ns) || ns < 0 || ns > Long.MAX_VALUE)
        {
            throw invalid(text);
        }
        return Math.round(ns);
    }

    private static IllegalArgumentException invalid(final String text)
    {
        return new IllegalArgumentException(
            "invalid duration '" + text + "': use e.g. 100ms, 1.5s, 250us, 1m30s, or a number of milliseconds");
    }
}
