package dev.tapedeck.workload;

import java.io.BufferedReader;
import java.io.IOException;

import dev.tapedeck.trace.TraceFormatException;

/**
 * The data rows of a CSV trace whose header line has been read (Azure, BurstGPT), one at a time: blank lines are
 * skipped, fields are split on every comma (the CSV files tapedeck reads quote no commas; {@link AzureLoader#unquote}
 * strips a field) and a row with too few fields is an error naming its file and line. Not thread safe.
 */
final class CsvRows
{
    private final String name;
    private final BufferedReader reader;
    private final int headerColumns;
    private final int neededColumns;
    private long lineNumber = 1;

    /**
     * @param name the file's name, for {@code file:line}.
     * @param reader positioned after the header line (line 1).
     * @param headerColumns how many columns the header names.
     * @param neededColumns the fewest fields a row may have: one past the last column the loader reads.
     */
    CsvRows(final String name, final BufferedReader reader, final int headerColumns, final int neededColumns)
    {
        this.name = name;
        this.reader = reader;
        this.headerColumns = headerColumns;
        this.neededColumns = neededColumns;
    }

    /**
     * @return the next row's fields, as written (quotes kept), or null at the end of the file.
     * @throws TraceFormatException naming file and line when the row has fewer than the needed fields.
     */
    String[] next() throws IOException
    {
        for (String line = reader.readLine(); null != line; line = reader.readLine())
        {
            lineNumber++;
            if (line.isBlank())
            {
                continue;
            }
            final String[] fields = line.split(",", -1);
            if (fields.length < neededColumns)
            {
                throw new TraceFormatException(where() + ": expected " + headerColumns + " columns, got " +
                    fields.length);
            }
            return fields;
        }
        return null;
    }

    /**
     * @return the line of the row returned last (1-based; the header is line 1).
     */
    long line()
    {
        return lineNumber;
    }

    /**
     * @return {@code file:line} of the row returned last.
     */
    String where()
    {
        return name + ":" + lineNumber;
    }
}
