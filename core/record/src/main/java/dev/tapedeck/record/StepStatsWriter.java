package dev.tapedeck.record;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.tapedeck.trace.TraceFiles;

/**
 * The step-stats sidecar ({@code --step-stats-out}): one JSON line per engine output message that carried
 * {@code scheduler_stats}, {@code {"ts_ms": <ms since capture start>, "scheduler": {<named fields>}}}, gzip when the
 * name ends with {@code .gz}. {@link #flush()} makes the lines written so far readable; {@link #close()} writes the
 * gzip trailer. Not thread safe: the capture writer thread only.
 */
final class StepStatsWriter implements Closeable
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final OutputStream out;
    private final JsonGenerator generator;
    private long lines;
    private boolean unflushed;

    private StepStatsWriter(final OutputStream out) throws IOException
    {
        this.out = out;
        this.generator = MAPPER.getFactory().createGenerator(out);
        generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        generator.disable(JsonGenerator.Feature.FLUSH_PASSED_TO_STREAM);
        generator.setRootValueSeparator(null);
    }

    /**
     * @param path the file to create or replace.
     * @return the writer.
     * @throws IOException if the file cannot be created.
     */
    static StepStatsWriter open(final Path path) throws IOException
    {
        return new StepStatsWriter(TraceFiles.openOutput(path));
    }

    /**
     * @param tsMs when the message reached the tap, ms since the capture started.
     * @param scheduler the stats with named fields.
     * @throws IOException if writing fails.
     */
    void write(final double tsMs, final JsonNode scheduler) throws IOException
    {
        generator.writeStartObject();
        generator.writeNumberField("ts_ms", tsMs);
        generator.writeFieldName("scheduler");
        MAPPER.writeTree(generator, scheduler);
        generator.writeEndObject();
        generator.writeRaw('\n');
        lines++;
        unflushed = true;
    }

    /**
     * Make every line written so far readable in the file (a gzip sync flush), if any is pending.
     *
     * @throws IOException if writing fails.
     */
    void flush() throws IOException
    {
        if (unflushed)
        {
            generator.flush();
            out.flush();
            unflushed = false;
        }
    }

    /** @return lines written. */
    long lines()
    {
        return lines;
    }

    @Override
    public void close() throws IOException
    {
        generator.flush();
        generator.close();
        out.close();
    }
}
