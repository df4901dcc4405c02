package dev.tapedeck.trace;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reads a trace (JSONL, gzip when compressed) record by record with Jackson's streaming parser: the optional meta
 * line first, then one {@link TraceRecord} per non-blank line, each checked by {@link TraceValidation}: with every
 * rule ({@link #open(Path)}: the record must be usable as a latency source), with the workload rules only
 * ({@link #openWorkload(Path)}: a record without {@code ttft_ms} or gaps is still a request to replay), or with none
 * ({@link #openUnchecked(Path)}).
 * <p>
 * A file that ends early is read up to its last whole record with a warning ({@link #warnings()}), not rejected: a
 * gzip stream without its trailer (a capture still being written, or interrupted), or a last line cut short without
 * its newline. Every other problem throws {@link TraceFormatException} naming the file and line.
 * <p>
 * Not thread safe.
 * <pre>
 *   try (TraceReader reader = TraceReader.open(path))
 *   {
 *       for (TraceRecord record = reader.next(); null != record; record = reader.next()) { ... }
 *   }
 * </pre>
 */
public final class TraceReader implements Closeable
{
    private final String name;
    private final InputStream in;
    private final LineSource lines;
    private final List<String> warnings = new ArrayList<>();
    private final Checks checks;
    private TraceMeta meta = new TraceMeta();
    private TraceRecord pending;
    private boolean done;

    /**
     * Which {@link TraceValidation} rules each record is checked against.
     */
    private enum Checks
    {
        /** Every rule: the trace is a latency source. */
        LATENCY_SOURCE,
        /** The workload rules: the trace is a schedule of requests. */
        WORKLOAD,
        /** None (types are still checked). */
        NONE
    }

    private TraceReader(final String name, final InputStream in, final Checks checks) throws IOException
    {
        this.name = name;
        this.in = in;
        this.lines = new LineSource(in);
        this.checks = checks;
        readHead();
    }

    /**
     * Open a trace file; gzip is recognised by its magic bytes (and so by a {@code .gz} name).
     *
     * @param path the file.
     * @return a reader positioned after the meta line.
     * @throws IOException if the file cannot be read.
     */
    public static TraceReader open(final Path path) throws IOException
    {
        return new TraceReader(path.toString(), TraceFiles.openInput(path), Checks.LATENCY_SOURCE);
    }

    /**
     * Open a trace to replay as a workload: records are checked with {@link TraceValidation#workloadProblems} only,
     * so a record without {@code ttft_ms}, {@code output_tokens} or gaps is read (vcr's rule that a multi-token
     * record needs gaps is for latency sources).
     *
     * @param path the file.
     * @return a reader positioned after the meta line.
     * @throws IOException if the file cannot be read.
     */
    public static TraceReader openWorkload(final Path path) throws IOException
    {
        return new TraceReader(path.toString(), TraceFiles.openInput(path), Checks.WORKLOAD);
    }

    /**
     * Open without the cross-field checks (types are still checked): for tools that report problems themselves.
     *
     * @param path the file.
     * @return a reader positioned after the meta line.
     * @throws IOException if the file cannot be read.
     */
    public static TraceReader openUnchecked(final Path path) throws IOException
    {
        return new TraceReader(path.toString(), TraceFiles.openInput(path), Checks.NONE);
    }

    /**
     * @param name the name to use in messages.
     * @param in the content (gzip or plain); closed with the reader.
     * @return a reader positioned after the meta line.
     * @throws IOException if the content cannot be read.
     */
    public static TraceReader open(final String name, final InputStream in) throws IOException
    {
        return new TraceReader(name, TraceFiles.maybeGunzip(in), Checks.LATENCY_SOURCE);
    }

    /**
     * Read a whole file.
     *
     * @param path the file.
     * @return its meta and records.
     * @throws IOException if the file cannot be read.
     */
    public static Trace readAll(final Path path) throws IOException
    {
        try (TraceReader reader = open(path))
        {
            final List<TraceRecord> records = new ArrayList<>();
            for (TraceRecord record = reader.next(); null != record; record = reader.next())
            {
                records.add(record);
            }
            return new Trace(reader.meta(), records, List.copyOf(reader.warnings()));
        }
    }

    /**
     * A whole trace in memory.
     *
     * @param meta the meta line (empty when the file has none).
     * @param records the records in file order (finish order for captures).
     * @param warnings what was tolerated while reading.
     */
    public record Trace(TraceMeta meta, List<TraceRecord> records, List<String> warnings)
    {
    }

    /**
     * @return the meta line, empty when the file has none.
     */
    public TraceMeta meta()
    {
        return meta;
    }

    /**
     * @return the next record, or null at the end.
     * @throws IOException if reading fails.
     */
    public TraceRecord next() throws IOException
    {
        if (null != pending)
        {
            final TraceRecord record = pending;
            pending = null;
            return record;
        }
        while (!done)
        {
            final String line = readLine();
            if (null == line)
            {
                return null;
            }
            if (line.isBlank())
            {
                continue;
            }
            return parseRecord(line);
        }
        return null;
    }

    /**
     * @return what was tolerated so far (a missing gzip trailer, a cut last line).
     */
    public List<String> warnings()
    {
        return warnings;
    }

    /**
     * @return the line number of the line read last (1-based).
     */
    public long lineNumber()
    {
        return lines.lineNumber();
    }

    @Override
    public void close() throws IOException
    {
        lines.close();
    }

    private void readHead() throws IOException
    {
        while (!done)
        {
            final String line = readLine();
            if (null == line)
            {
                return;
            }
            if (line.isBlank())
            {
                continue;
            }
            final JsonNode node;
            try
            {
                node = TraceJson.MAPPER.readTree(line);
            }
            catch (final JsonProcessingException ex)
            {
                if (lastLineCut(line))
                {
                    return;
                }
                throw error("not valid JSON: " + ex.getOriginalMessage(), ex);
            }
            if (null != node && node.isObject() && node.has("meta"))
            {
                try (JsonParser parser = TraceJson.MAPPER.treeAsTokens(node.get("meta")))
                {
                    parser.nextToken();
                    meta = TraceJson.readMeta(parser);
                }
                catch (final TraceFormatException ex)
                {
                    throw error(ex.getMessage(), ex);
                }
                return;
            }
            pending = parseRecord(line);
            return;
        }
    }

    private TraceRecord parseRecord(final String line) throws IOException
    {
        final TraceRecord record;
        try (JsonParser parser = TraceJson.FACTORY.createParser(line))
        {
            parser.nextToken();
            record = TraceJson.readRecord(parser);
            if (null != parser.nextToken())
            {
                throw new TraceFormatException("unexpected content after the record");
            }
        }
        catch (final JsonProcessingException ex)
        {
            if (lastLineCut(line))
            {
                return null;
            }
            throw error("not valid JSON: " + ex.getOriginalMessage(), ex);
        }
        catch (final TraceFormatException ex)
        {
            if (lastLineCut(line))
            {
                return null;
            }
            throw error(ex.getMessage(), ex);
        }
        final List<String> problems = switch (checks)
        {
            case LATENCY_SOURCE -> TraceValidation.problems(record);
            case WORKLOAD -> TraceValidation.workloadProblems(record);
            case NONE -> List.of();
        };
        if (!problems.isEmpty())
        {
            throw error(String.join("; ", problems), null);
        }
        return record;
    }

    /**
     * A last line without its newline that does not parse is a record being written: stop before it.
     */
    private boolean lastLineCut(final String line) throws IOException
    {
        if (lines.lastLineTerminated() || !lines.atEnd() || !TraceFiles.couldBeCutRecord(line))
        {
            return false;
        }
        warnings.add(name + ":" + lines.lineNumber() + ": the last line is cut short (a capture still being " +
            "written?); read up to the record before it");
        if (TraceFiles.endedWithoutGzipTrailer(in))
        {
            warnings.add(name + ": the gzip stream ends without its trailer (a capture still being written, or " +
                "interrupted)");
        }
        done = true;
        return true;
    }

    private String readLine() throws IOException
    {
        try
        {
            final String line = lines.next();
            if (null == line)
            {
                done = true;
                if (TraceFiles.endedWithoutGzipTrailer(in))
                {
                    warnings.add(name + ": the gzip stream ends without its trailer (a capture still being " +
                        "written, or interrupted); read up to the last whole record, line " + lines.lineNumber());
                }
            }
            return line;
        }
        catch (final java.util.zip.ZipException ex)
        {
            throw new TraceFormatException(name + ":" + (lines.lineNumber() + 1) + ": corrupt gzip data: " +
                ex.getMessage(), ex);
        }
        catch (final LineSource.LineTooLongException ex)
        {
            throw new TraceFormatException(name + ": " + ex.getMessage(), ex);
        }
    }

    private TraceFormatException error(final String message, final Throwable cause)
    {
        return new TraceFormatException(name + ":" + lines.lineNumber() + ": " + message, cause);
    }
}
