package dev.tapedeck.workload;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.core.JsonGenerator;

import dev.tapedeck.trace.TraceFiles;

/**
 * Writes a tapedeck workload file (docs/workloads.md): the meta line
 * {@code {"meta":{"kind":"workload","version":1,"source":...,"block_size":N,"notes":[...]}}}, then one request per
 * line in arrival order. Gzip when the file name ends with {@code .gz}. Records are buffered; {@link #close()} makes
 * the file complete. Not thread safe: one writer thread.
 * <pre>
 *   WorkloadWriter.write(Path.of("mooncake.workload.jsonl.gz"), workload);
 * </pre>
 */
public final class WorkloadWriter implements Closeable
{
    /** The format version this writer produces and {@link WorkloadReader} accepts. */
    public static final int VERSION = 1;

    private final OutputStream out;
    private final JsonGenerator generator;
    private final int hashBlockSize;
    private double lastArrivalMs;
    private long requests;

    private WorkloadWriter(final OutputStream out, final String source, final int hashBlockSize,
        final List<String> notes, final double originMs) throws IOException
    {
        if (hashBlockSize < 0)
        {
            throw new IllegalArgumentException("hashBlockSize must not be negative: " + hashBlockSize);
        }
        this.out = out;
        this.hashBlockSize = hashBlockSize;
        this.generator = JsonValues.MAPPER.getFactory().createGenerator(out);
        generator.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        generator.setRootValueSeparator(null);
        generator.writeStartObject();
        generator.writeObjectFieldStart("meta");
        generator.writeStringField("kind", "workload");
        generator.writeNumberField("version", VERSION);
        if (null != source)
        {
            generator.writeStringField("source", source);
        }
        generator.writeNumberField("block_size", hashBlockSize);
        if (0 != originMs)
        {
            generator.writeNumberField("origin_ms", originMs);
        }
        if (null != notes && !notes.isEmpty())
        {
            generator.writeArrayFieldStart("notes");
            for (final String note : notes)
            {
                generator.writeString(note);
            }
            generator.writeEndArray();
        }
        generator.writeEndObject();
        generator.writeEndObject();
        generator.writeRaw('\n');
    }

    /**
     * @param path the file to create or replace (gzip when its name ends with {@code .gz}).
     * @param source where the requests come from, or null.
     * @param hashBlockSize tokens per hash id, 0 when the requests carry none.
     * @param notes what the loader adjusted, or null.
     * @return a writer positioned after the meta line.
     * @throws IOException if the file cannot be created.
     */
    public static WorkloadWriter open(final Path path, final String source, final int hashBlockSize,
        final List<String> notes) throws IOException
    {
        return new WorkloadWriter(TraceFiles.openOutput(path), source, hashBlockSize, notes, 0);
    }

    /**
     * @param out where to write (closed with the writer).
     * @param source where the requests come from, or null.
     * @param hashBlockSize tokens per hash id, 0 when the requests carry none.
     * @param notes what the loader adjusted, or null.
     * @return a writer positioned after the meta line.
     * @throws IOException if writing fails.
     */
    public static WorkloadWriter open(final OutputStream out, final String source, final int hashBlockSize,
        final List<String> notes) throws IOException
    {
        return new WorkloadWriter(out, source, hashBlockSize, notes, 0);
    }

    /**
     * Write a whole workload to a file.
     *
     * @param path the file to create or replace (gzip when its name ends with {@code .gz}).
     * @param workload the workload.
     * @throws IOException if writing fails.
     */
    public static void write(final Path path, final Workload workload) throws IOException
    {
        try (WorkloadWriter writer = new WorkloadWriter(TraceFiles.openOutput(path), workload.source(),
            workload.hashBlockSize(), workload.notes(), workload.originMs()))
        {
            for (final WorkloadRequest request : workload.requests())
            {
                writer.write(request);
            }
        }
    }

    /**
     * @param request the next request; arrivals must not decrease.
     * @throws IOException if writing fails.
     * @throws IllegalArgumentException if the request breaks the format's rules.
     */
    public void write(final WorkloadRequest request) throws IOException
    {
        check(request);
        generator.writeStartObject();
        writeMs("arrival_ms", request.arrivalMs());
        generator.writeNumberField("prompt_tokens", request.promptTokens());
        if (WorkloadRequest.UNKNOWN != request.outputTokens())
        {
            generator.writeNumberField("output_tokens", request.outputTokens());
        }
        if (null != request.hashIds())
        {
            generator.writeArrayFieldStart("hash_ids");
            for (final long id : request.hashIds())
            {
                if (id >= 0)
                {
                    generator.writeNumber(id);
                }
                else
                {
                    generator.writeNumber(Long.toUnsignedString(id));
                }
            }
            generator.writeEndArray();
        }
        if (null != request.session())
        {
            generator.writeStringField("session", request.session());
        }
        generator.writeNumberField("turn", request.turn());
        if (!Double.isNaN(request.thinkMs()))
        {
            writeMs("think_ms", request.thinkMs());
        }
        generator.writeEndObject();
        generator.writeRaw('\n');
        lastArrivalMs = request.arrivalMs();
        requests++;
    }

    /**
     * @return requests written.
     */
    public long requests()
    {
        return requests;
    }

    private void check(final WorkloadRequest request)
    {
        final String which = "request " + requests + ": ";
        if (!(request.arrivalMs() >= lastArrivalMs) || Double.isInfinite(request.arrivalMs()))
        {
            throw new IllegalArgumentException(which + "arrival_ms " + request.arrivalMs() +
                " must be finite, at least 0 and not before the previous request's " + lastArrivalMs);
        }
        if (request.promptTokens() < 1)
        {
            throw new IllegalArgumentException(which + "prompt_tokens must be at least 1: " + request.promptTokens());
        }
        if (request.outputTokens() < 0 && WorkloadRequest.UNKNOWN != request.outputTokens())
        {
            throw new IllegalArgumentException(which + "output_tokens must not be negative: " +
                request.outputTokens());
        }
        if (request.turn() < 0 || request.thinkMs() < 0 || Double.isInfinite(request.thinkMs()))
        {
            throw new IllegalArgumentException(which + "turn and think_ms must not be negative or infinite");
        }
        if (null != request.hashIds())
        {
            if (0 == hashBlockSize)
            {
                throw new IllegalArgumentException(which + "hash_ids need a block size");
            }
            final long blocks = ((long)request.promptTokens() + hashBlockSize - 1) / hashBlockSize;
            if (request.hashIds().length > blocks)
            {
                throw new IllegalArgumentException(which + request.hashIds().length + " hash ids for " +
                    request.promptTokens() + " prompt tokens, more than its " + blocks + " blocks");
            }
        }
    }

    private void writeMs(final String field, final double ms) throws IOException
    {
        if (ms == Math.rint(ms) && ms < 0x1p53)
        {
            generator.writeNumberField(field, (long)ms);
        }
        else
        {
            generator.writeNumberField(field, ms);
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
