package dev.tapedeck.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import dev.tapedeck.trace.TraceFiles;
import dev.tapedeck.trace.TraceFormatException;

/**
 * The Azure LLM inference traces (2023 and 2024): CSV with the header {@code TIMESTAMP,ContextTokens,GeneratedTokens}
 * (column order free, other columns such as {@code NumImages} ignored). {@code TIMESTAMP} is a wall-clock time
 * {@code yyyy-MM-dd HH:mm:ss[.fraction]} with up to 9 fractional digits (the files have 7) and an optional zone
 * ({@code Z}, {@code +00:00}); times without a zone are read as UTC. Arrivals become milliseconds after the earliest
 * row; rows are sorted (stable) when the file is not. Stateless; thread safe.
 */
final class AzureLoader
{
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    private AzureLoader()
    {
    }

    /**
     * @param lowerCaseHeader the first line, lower case, quotes removed.
     * @return true when it names the three Azure columns.
     */
    static boolean isHeader(final String lowerCaseHeader)
    {
        final List<String> columns = Arrays.asList(lowerCaseHeader.split("\\s*,\\s*", -1));
        return columns.contains("timestamp") && columns.contains("contexttokens") &&
            columns.contains("generatedtokens");
    }

    static Workload load(final Path path) throws IOException
    {
        final String name = path.toString();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(TraceFiles.openInput(path),
            StandardCharsets.UTF_8), 64 * 1024))
        {
            final String header = reader.readLine();
            if (null == header || !isHeader(header.strip().toLowerCase(Locale.ROOT).replace("\"", "")))
            {
                throw new TraceFormatException(name + ":1: expected the header TIMESTAMP,ContextTokens," +
                    "GeneratedTokens, got '" + header + "'");
            }
            final List<String> columns = Arrays.asList(header.strip().toLowerCase(Locale.ROOT).replace("\"", "")
                .split("\\s*,\\s*", -1));
            final int timeColumn = columns.indexOf("timestamp");
            final int contextColumn = columns.indexOf("contexttokens");
            final int generatedColumn = columns.indexOf("generatedtokens");
            final int needed = Math.max(timeColumn, Math.max(contextColumn, generatedColumn)) + 1;
            final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.AZURE.cliName());
            final List<Row> rows = new ArrayList<>();
            final CsvRows csv = new CsvRows(name, reader, columns.size(), needed);
            long earliestNanos = Long.MAX_VALUE;
            int withZone = 0;
            for (String[] fields = csv.next(); null != fields; fields = csv.next())
            {
                final String where = csv.where();
                final Timestamp time = parseTimestamp(unquote(fields[timeColumn]), where);
                withZone += time.zoned ? 1 : 0;
                earliestNanos = Math.min(earliestNanos, time.epochNanos);
                rows.add(new Row(csv.line(), time.epochNanos, parseCount(fields[contextColumn], where,
                    "ContextTokens"), parseCount(fields[generatedColumn], where, "GeneratedTokens")));
            }
            for (final Row row : rows)
            {
                builder.add(name + ":" + row.line, (row.epochNanos - earliestNanos) / 1e6, row.contextTokens,
                    row.generatedTokens, null, null, 0, Double.NaN);
            }
            if (!rows.isEmpty())
            {
                builder.note("TIMESTAMP is wall-clock time; arrivals are milliseconds after the earliest row, " +
                    LocalDateTime.ofEpochSecond(Math.floorDiv(earliestNanos, NANOS_PER_SECOND),
                        (int)Math.floorMod(earliestNanos, NANOS_PER_SECOND), ZoneOffset.UTC) + " UTC");
            }
            if (withZone > 0 && withZone < rows.size())
            {
                builder.note((rows.size() - withZone) + " rows have no time zone (read as UTC) and " + withZone +
                    " have one");
            }
            return builder.build(true);
        }
    }

    private static long parseCount(final String field, final String where, final String column)
    {
        final String text = unquote(field);
        try
        {
            final long value = Long.parseLong(text);
            if (value >= 0)
            {
                return value;
            }
        }
        catch (final NumberFormatException ex)
        {
            // reported below
        }
        throw new TraceFormatException(where + ": " + column + " must be a non-negative integer, got '" + text + "'");
    }

    /**
     * @param field a CSV field.
     * @return it without surrounding blanks and double quotes (the CSV files tapedeck reads quote no commas).
     */
    static String unquote(final String field)
    {
        final String text = field.strip();
        if (text.length() >= 2 && '"' == text.charAt(0) && '"' == text.charAt(text.length() - 1))
        {
            return text.substring(1, text.length() - 1).strip();
        }
        return text;
    }

    /**
     * A parsed TIMESTAMP: nanoseconds since the epoch and whether it named a zone.
     */
    private record Timestamp(long epochNanos, boolean zoned)
    {
    }

    /**
     * One data row: its line, arrival and sizes.
     */
    private record Row(long line, long epochNanos, long contextTokens, long generatedTokens)
    {
    }

    /**
     * {@code yyyy-MM-dd[ T]HH:mm:ss[.f{1,9}][Z|+HH[:MM]|-HH[:MM]]}, parsed by hand: the files' 7 fractional digits
     * are more than some libraries take, and a million rows should not cost a formatter each.
     */
    static long parseEpochNanos(final String text, final String where)
    {
        return parseTimestamp(text, where).epochNanos;
    }

    private static Timestamp parseTimestamp(final String text, final String where)
    {
        try
        {
            if (text.length() < 19 || '-' != text.charAt(4) || '-' != text.charAt(7) ||
                (' ' != text.charAt(10) && 'T' != text.charAt(10)) || ':' != text.charAt(13) ||
                ':' != text.charAt(16))
            {
                throw new DateTimeException("not yyyy-MM-dd HH:mm:ss");
            }
            final LocalDate date = LocalDate.of(digits(text, 0, 4), digits(text, 5, 7), digits(text, 8, 10));
            final int hour = digits(text, 11, 13);
            final int minute = digits(text, 14, 16);
            final int second = digits(text, 17, 19);
            if (hour > 23 || minute > 59 || second > 59)
            {
                throw new DateTimeException("time out of range");
            }
            int position = 19;
            long fractionNanos = 0;
            if (position < text.length() && '.' == text.charAt(position))
            {
                final int start = ++position;
                while (position < text.length() && Character.isDigit(text.charAt(position)))
                {
                    position++;
                }
                final int digitCount = position - start;
                if (0 == digitCount || digitCount > 9)
                {
                    throw new DateTimeException("1 to 9 fractional digits");
                }
                fractionNanos = digits(text, start, position) * (long)Math.pow(10, 9 - digitCount);
            }
            final int offsetSeconds = parseZone(text.substring(position).strip());
            final long epochSeconds = date.toEpochDay() * 86_400L + hour * 3600L + minute * 60L + second -
                (Integer.MIN_VALUE == offsetSeconds ? 0 : offsetSeconds);
            return new Timestamp(Math.addExact(Math.multiplyExact(epochSeconds, NANOS_PER_SECOND), fractionNanos),
                Integer.MIN_VALUE != offsetSeconds);
        }
        catch (final DateTimeException | NumberFormatException | ArithmeticException ex)
        {
            throw new TraceFormatException(where + ": TIMESTAMP '" + text + "' is not yyyy-MM-dd HH:mm:ss[.fraction]" +
                "[zone] (" + ex.getMessage() + ")");
        }
    }

    /**
     * @return the zone's offset in seconds, or Integer.MIN_VALUE when there is none.
     */
    private static int parseZone(final String zone)
    {
        if (zone.isEmpty())
        {
            return Integer.MIN_VALUE;
        }
        if ("Z".equals(zone) || "UTC".equals(zone))
        {
            return 0;
        }
        final int sign = '+' == zone.charAt(0) ? 1 : '-' == zone.charAt(0) ? -1 : 0;
        final String body = zone.substring(1).replace(":", "");
        if (0 == sign || (2 != body.length() && 4 != body.length()))
        {
            throw new DateTimeException("zone '" + zone + "' is not Z, +HH, +HH:MM or +HHMM");
        }
        final int hours = digits(body, 0, 2);
        final int minutes = 4 == body.length() ? digits(body, 2, 4) : 0;
        return ZoneOffset.ofHoursMinutesSeconds(sign * hours, sign * minutes, 0).getTotalSeconds();
    }

    private static int digits(final String text, final int from, final int to)
    {
        int value = 0;
        for (int i = from; i < to; i++)
        {
            final char c = text.charAt(i);
            if (c < '0' || c > '9')
            {
                throw new NumberFormatException("'" + c + "' where a digit belongs");
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }
}
