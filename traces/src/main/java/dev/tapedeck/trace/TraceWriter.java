package dev.tapedeck.trace;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;

import com.fasterxml.jackson.core.JsonGenerator;

/**
 * Writes a trace: the meta line (when there is one), then one record per line. {@link #write(TraceRecord)} flushes
 * (a gzip sync flush for {@code .gz}), so a file being written can be read at any moment up to its last record;
 * {@link #close()} writes the gzip trailer. Not thread safe: one writer thread.
 */
public final class TraceWriter implements Closeable
{
    private final OutputStream out;
    private final JsonGenerator generator;
    private long records;

    private TraceWriter(final OutputStream out, final TraceMeta meta) throws IOException
    {
        this.out = out;
        this.generator = TraceJson.FACTORY.createGenerator(out);
        generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        generator.disable(JsonGenerator.Feature.FLUSH_PASSED_TO_STREAM);
        generator.setRootValueSeparator(null);
        if (null != meta && !meta.isEmpty())
        {
            TraceJson.writeMeta(generator, meta);
            endLine(true);
        }
    }

    /**
     * @param path the file to create or replace (gzip when its name ends with {@code .gz}).
     * @param meta the meta line, or null/empty for none.
     * @return the writer.
     * @throws IOException if the file cannot be created.
     */
    public static TraceWriter open(final Path path, final TraceMeta meta) throws IOException
    {
        return new TraceWriter(TraceFiles.openOutput(path), meta);
    }

    /**
     * @param out where to write (closed with the writer).
     * @param meta the meta line, or null/empty for none.
     * @return the writer.
     * @throws IOException if writing fails.
     */
    public static TraceWriter open(final OutputStream out, final TraceMeta meta) throws IOException
    {
        return new TraceWriter(out, meta);
    }

    /**
     * Write a record and flush it to the file.
     *
     * @param record the record.
     * @throws IOException if writing fails.
     */
    public void write(final TraceRecord record) throws IOException
    {
        write(record, true);
    }

    /**
     * @param record the record.
     * @param flush true to make it readable in the file now; false to let a batch share one flush.
     * @throws IOException if writing fails.
     */
    public void write(final TraceRecord record, final boolean flush) throws IOException
    {
        TraceJson.writeRecord(generator, record);
        endLine(flush);
        records++;
    }

    /**
     * Make every record written so far readable in the file.
     *
     * @throws IOException if writing fails.
     */
    public void flush() throws IOException
    {
        generator.flush();
        out.flush();
    }

    /**
     * @return records written.
     */
    public long records()
    {
        return records;
    }

    private void endLine(final boolean flush) throws IOException
    {
        generator.writeRaw('\n');
        if (flush)
        {
            flush();
        }
    }

    @Override
    public void close() throws IOException
    {
        generator.flush();
        generator.close();
        out.close();
    }
}
