package dev.tapedeck.workload;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.ZipException;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFormatException;

/**
 * The objects of a JSON Lines file, one at a time, each with the line it starts on: one Jackson parser runs over the
 * whole stream, so the file is never held in memory. Blank lines are skipped. Not thread safe.
 */
final class JsonlObjects implements Closeable
{
    private final String name;
    private final JsonParser parser;
    private long line;

    JsonlObjects(final String name, final InputStream in) throws IOException
    {
        this.name = name;
        this.parser = JsonValues.MAPPER.getFactory().createParser(in);
    }

    /**
     * @return the next object, or null at the end of the input.
     * @throws TraceFormatException naming file and line when a line is not a JSON object.
     */
    JsonNode next() throws IOException
    {
        try
        {
            final JsonToken token = parser.nextToken();
            if (null == token)
            {
                return null;
            }
            line = parser.currentTokenLocation().getLineNr();
            if (JsonToken.START_OBJECT != token)
            {
                throw new TraceFormatException(where() + ": expected a JSON object per line, got " + parser.getText());
            }
            return JsonValues.MAPPER.readTree(parser);
        }
        catch (final JsonProcessingException ex)
        {
            if (ex instanceof JsonEOFException)
            {
                throw new TraceFormatException(name + ":" + line + ": not valid JSON: the object starting on this " +
                    "line is cut short by the end of the file", ex);
            }
            final long at = null == ex.getLocation() ? line : ex.getLocation().getLineNr();
            throw new TraceFormatException(name + ":" + at + ": not valid JSON: " + ex.getOriginalMessage(), ex);
        }
        catch (final ZipException ex)
        {
            throw new TraceFormatException(name + ":" + line + ": corrupt gzip data after this line: " +
                ex.getMessage(), ex);
        }
    }

    /**
     * @return {@code file:line} of the object returned last.
     */
    String where()
    {
        return name + ":" + line;
    }

    /**
     * @return the line the object returned last starts on (1-based).
     */
    long line()
    {
        return line;
    }

    @Override
    public void close() throws IOException
    {
        parser.close();
    }
}
