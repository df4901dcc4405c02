package dev.tapedeck.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict parser of the Prometheus text format (0.0.4) for tests: every line is a comment (HELP/TYPE) or a sample
 * of a declared family; label syntax, float syntax and histogram structure (cumulative buckets ending in +Inf, count
 * equal to the +Inf bucket) are checked. Fails with the offending line.
 */
final class ExpositionParser
{
    private static final Pattern SAMPLE = Pattern.compile(
        "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)})? (-?[0-9]+(?:\\.[0-9]+)?(?:e[+-][0-9]+)?|[+-]Inf|NaN)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** One sample line. */
    record Sample(String name, Map<String, String> labels, double value)
    {
    }

    /** One family: its type and its samples in order. */
    record Family(String name, String type, List<Sample> samples)
    {
    }

    private ExpositionParser()
    {
    }

    static Map<String, Family> parse(final String text)
    {
        final Map<String, Family> families = new LinkedHashMap<>();
        Family current = null;
        int lineNumber = 0;
        for (final String line : text.split("\n"))
        {
            lineNumber++;
            if (line.startsWith("# HELP "))
            {
                continue;
            }
            if (line.startsWith("# TYPE "))
            {
                final String[] parts = line.split(" ");
                check(parts.length == 4, lineNumber, line);
                check(!families.containsKey(parts[2]), lineNumber, "family declared twice: " + line);
                current = new Family(parts[2], parts[3], new ArrayList<>());
                families.put(parts[2], current);
                continue;
            }
            final Matcher m = SAMPLE.matcher(line);
            check(m.matches(), lineNumber, line);
            check(null != current && belongs(m.group(1), current), lineNumber, "sample outside its family: " + line);
            final Map<String, String> labels = new TreeMap<>();
            if (null != m.group(3))
            {
                final Matcher l = LABEL.matcher(m.group(3));
                int end = 0;
                String previous = "";
                while (l.find())
                {
                    check(l.start() == end || l.start() == end + 1, lineNumber, "bad label list: " + line);
                    check(l.group(1).compareTo(previous) > 0, lineNumber, "labels not sorted: " + line);
                    previous = l.group(1);
                    labels.put(l.group(1), l.group(2));
                    end = l.end();
                }
                check(end == m.group(3).length(), lineNumber, "bad label list: " + line);
            }
            current.samples().add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4)
                .replace("+Inf", "Infinity").replace("-Inf", "-Infinity"))));
        }
        for (final Family family : families.values())
        {
            if ("histogram".equals(family.type()))
            {
                checkHistogram(family);
            }
        }
        return families;
    }

    private static boolean belongs(final String sample, final Family family)
    {
        if ("histogram".equals(family.type()))
        {
            return sample.equals(family.name() + "_bucket") || sample.equals(family.name() + "_count") ||
                sample.equals(family.name() + "_sum");
        }
        return sample.equals(family.name());
    }

    private static void checkHistogram(final Family family)
    {
        double lastBound = Double.NEGATIVE_INFINITY;
        double lastCount = 0;
        for (final Sample sample : family.samples())
        {
            if (sample.name().endsWith("_bucket"))
            {
                final double bound = Double.parseDouble(sample.labels().get("le").replace("+Inf", "Infinity"));
                if (bound <= lastBound)
                {
                    lastCount = 0; // the next engine's buckets start again
                }
                if (!(sample.value() >= lastCount))
                {
                    throw new AssertionError(family.name() + ": buckets not cumulative at le=" + bound);
                }
                lastBound = bound;
                lastCount = sample.value();
            }
            else if (sample.name().endsWith("_count"))
            {
                if (lastBound != Double.POSITIVE_INFINITY || sample.value() != lastCount)
                {
                    throw new AssertionError(family.name() + ": _count differs from the +Inf bucket");
                }
            }
        }
    }

    private static void check(final boolean ok, final int line, final String text)
    {
        if (!ok)
        {
            throw new AssertionError("line " + line + ": " + text);
        }
    }
}
