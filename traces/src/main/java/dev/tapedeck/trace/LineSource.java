package dev.tapedeck.trace;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;

/**
 * Lines of UTF-8 text that remember whether each ended with a newline, so a reader can tell a complete last record
 * from one still being written. {@code \r\n} is accepted. Not thread safe.
 */
final class LineSource implements Closeable
{
    /** The longest line read: a longer one (a file with no newlines, a gzip bomb) is refused, not held in memory. */
    static final int MAX_LINE_CHARS = 16 << 20;

    private final Reader reader;
    private final char[] buffer = new char[64 * 1024];
    private final StringBuilder line = new StringBuilder(256);
    private int position;
    private int limit;
    private long lineNumber;
    private boolean lastTerminated = true;
    private boolean atEnd;

    LineSource(final InputStream in)
    {
        reader = new InputStreamReader(in, StandardCharsets.UTF_8);
    }

    /**
     * @return the next line without its terminator, or null at the end.
     */
    String next() throws IOException
    {
        line.setLength(0);
        while (true)
        {
            if (position == limit && !fill())
            {
                if (0 == line.length())
                {
                    return null;
                }
                lineNumber++;
                lastTerminated = false;
                return line.toString();
            }
            for (int i = position; i < limit; i++)
            {
                if ('\n' == buffer[i])
                {
                    line.append(buffer, position, i - position);
                    position = i + 1;
                    lineNumber++;
                    lastTerminated = true;
                    final int length = line.length();
                    if (length > 0 && '\r' == line.charAt(length - 1))
                    {
                        line.setLength(length - 1);
                    }
                    return line.toString();
                }
            }
            if (line.length() + (limit - position) > MAX_LINE_CHARS)
            {
                throw new LineTooLongException(lineNumber + 1);
            }
            line.append(buffer, position, limit - position);
            position = limit;
        }
    }

    /** A line over {@link #MAX_LINE_CHARS}; the rest of the input is not read. */
    static final class LineTooLongException extends IOException
    {
        private static final long serialVersionUID = 1L;

        LineTooLongException(final long lineNumber)
        {
            super("line " + lineNumber + " is longer than " + (MAX_LINE_CHARS >> 20) + " Mi characters (no newline? " +
                "not a JSONL trace); the rest of the file is not read");
        }
    }

    long lineNumber()
    {
        return lineNumber;
    }

    boolean lastLineTerminated()
    {
        return lastTerminated;
    }

    /**
     * @return true once the whole input has been read.
     */
    boolean atEnd()
    {
        return atEnd;
    }

    private boolean fill() throws IOException
    {
        final int read = reader.read(buffer, 0, buffer.length);
        if (read < 0)
        {
            atEnd = true;
            return false;
        }
        position = 0;
        limit = read;
        return true;
    }

    @Override
    public void close() throws IOException
    {
        reader.close();
    }
}
