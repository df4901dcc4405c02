package dev.tapedeck.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.tapedeck.trace.TraceFiles;
import dev.tapedeck.trace.TraceFormatException;

/**
 * BurstGPT's request traces (HPMLL/BurstGPT, KDD'25): CSV with the header {@code Timestamp, Model, Request tokens,
 * Response tokens, Total tokens, Log Type} (column order free, names case-insensitive; newer releases add
 * {@code Session ID} and {@code Elapsed time}). {@code Timestamp} is the submission time in <b>seconds</b> from 0:00:00
 * of the trace's first day; arrivals become milliseconds after the earliest row. {@code Request tokens} and
 * {@code Response tokens} are the prompt and output lengths. Rows whose {@code Response tokens} is 0 are the trace's
 * failed requests (its README) and are skipped, noted, as are rows with no request tokens; a {@code Total tokens} that
 * is not their sum is noted. {@code Session ID} (when present and not empty) makes sessions, turns in arrival order.
 * {@code Model}, {@code Log Type} and {@code Elapsed time} (submit to complete, a result) are not used. No prefix
 * information. Stateless; thread safe.
 */
final class BurstGptLoader
{
    private static final String TIMESTAMP = "timestamp";
    private static final String REQUEST_TOKENS = "request tokens";
    private static final String RESPONSE_TOKENS = "response tokens";
    private static final String TOTAL_TOKENS = "total tokens";

    private BurstGptLoader()
    {
    }

    /**
     * @param lowerCaseHeader the first line, lower case, quotes removed.
     * @return true when it names BurstGPT's timestamp and token columns.
     */
    static boolean isHeader(final String lowerCaseHeader)
    {
        final List<String> columns = columns(lowerCaseHeader);
        return columns.contains(TIMESTAMP) && columns.contains(REQUEST_TOKENS) && columns.contains(RESPONSE_TOKENS);
    }

    private static List<String> columns(final String lowerCaseHeader)
    {
        return Arrays.asList(lowerCaseHeader.strip().split("\\s*,\\s*", -1));
    }

    /**
     * One data row: its place, arrival and sizes.
     */
    private record Row(String where, double timestampS, long requestTokens, long responseTokens, String session)
    {
    }

    static Workload load(final Path path) throws IOException
    {
        final String name = path.toString();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(TraceFiles.openInput(path),
            StandardCharsets.UTF_8), 64 * 1024))
        {
            final String header = reader.readLine();
            final String lowerCase = null == header ? "" : header.toLowerCase(Locale.ROOT).replace("\"", "");
            if (!isHeader(lowerCase))
            {
                throw new TraceFormatException(name + ":1: expected the BurstGPT header with Timestamp, " +
                    "Request tokens and Response tokens, got '" + header + "'");
            }
            final List<String> columns = columns(lowerCase);
            final int timeColumn = columns.indexOf(TIMESTAMP);
            final int requestColumn = columns.indexOf(REQUEST_TOKENS);
            final int responseColumn = columns.indexOf(RESPONSE_TOKENS);
            final int totalColumn = columns.indexOf(TOTAL_TOKENS);
            final int sessionColumn = Math.max(columns.indexOf("session id"), columns.indexOf("sessionid"));
            final int needed = Math.max(timeColumn, Math.max(requestColumn, responseColumn)) + 1;
            final NoteTally failed = new NoteTally("rows have Response tokens 0 (failed requests) and were skipped");
            final NoteTally empty = new NoteTally("rows have Request tokens 0 and were skipped");
            final NoteTally total = new NoteTally("rows have a Total tokens that is not Request tokens + Response " +
                "tokens");
            final List<Row> rows = new ArrayList<>();
            final CsvRows csv = new CsvRows(name, reader, columns.size(), needed);
            for (String[] fields = csv.next(); null != fields; fields = csv.next())
            {
                final String where = csv.where();
                final double timestampS = parseSeconds(fields[timeColumn], where);
                final long requestTokens = parseCount(fields[requestColumn], where, "Request tokens");
                final long responseTokens = parseCount(fields[responseColumn], where, "Response tokens");
                if (totalColumn >= 0 && totalColumn < fields.length && !AzureLoader.unquote(fields[totalColumn])
                    .isEmpty() && parseCount(fields[totalColumn], where, "Total tokens") != requestTokens +
                    responseTokens)
                {
                    total.add(where);
                }
                if (0 == responseTokens)
                {
                    failed.add(where);
                    continue;
                }
                if (0 == requestTokens)
                {
                    empty.add(where);
                    continue;
                }
                final String session = sessionColumn >= 0 && sessionColumn < fields.length ?
                    AzureLoader.unquote(fields[sessionColumn]) : "";
                rows.add(new Row(where, timestampS, requestTokens, responseTokens, session.isEmpty() ? null :
                    session));
            }
            final boolean sorted = isSorted(rows);
            final List<Row> ordered = new ArrayList<>(rows);
            ordered.sort(Comparator.comparingDouble(Row::timestampS)); // stable
            final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.BURSTGPT.cliName());
            final Map<String, Integer> turns = new HashMap<>();
            for (final Row row : ordered)
            {
                final int turn = null == row.session ? 0 : turns.merge(row.session, 1, Integer::sum) - 1;
                builder.add(row.where, row.timestampS * 1000.0, row.requestTokens, row.responseTokens, null,
                    row.session, turn, Double.NaN);
            }
            builder.note("Timestamp is in seconds (BurstGPT); arrivals are Timestamp x 1000 ms");
            if (!sorted)
            {
                builder.note("the input is not in arrival order: requests were sorted by Timestamp (stable)");
            }
            if (!turns.isEmpty())
            {
                builder.note("Session ID makes " + turns.size() + " sessions, turns in Timestamp order");
            }
            failed.addTo(builder.notes());
            empty.addTo(builder.notes());
            total.addTo(builder.notes());
            return builder.build(false);
        }
    }

    private static boolean isSorted(final List<Row> rows)
    {
        for (int i = 1; i < rows.size(); i++)
        {
            if (rows.get(i).timestampS < rows.get(i - 1).timestampS)
            {
                return false;
            }
        }
        return true;
    }

    private static double parseSeconds(final String field, final String where)
    {
        final String text = AzureLoader.unquote(field);
        try
        {
            final double seconds = Double.parseDouble(text);
            if (Double.isFinite(seconds) && seconds >= 0)
            {
                return seconds;
            }
        }
        catch (final NumberFormatException ex)
        {
            // reported below
        }
        throw new TraceFormatException(where + ": Timestamp must be a non-negative number of seconds, got '" + text +
            "'");
    }

    private static long parseCount(final String field, final String where, final String column)
    {
        final String text = AzureLoader.unquote(field);
        try
        {
            final double value = Double.parseDouble(text);
            if (value >= 0 && value == Math.rint(value) && value < 0x1p53)
            {
                return (long)value;
            }
        }
        catch (final NumberFormatException ex)
        {
            // reported below
        }
        throw new TraceFormatException(where + ": " + column + " must be a non-negative integer, got '" + text + "'");
    }
}
