package dev.tapedeck.workload;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import dev.tapedeck.trace.TraceFiles;
import dev.tapedeck.trace.TraceFormatException;

/**
 * Reads a tapedeck workload file (docs/workloads.md) request by request: the meta line first (required, with
 * {@code "kind":"workload"}), then one {@link WorkloadRequest} per non-blank line. Gzip is recognised by its magic
 * bytes. Fields this version does not know are ignored. Every broken rule throws {@link TraceFormatException} naming
 * the file and line. Not thread safe.
 * <pre>
 *   try (WorkloadReader reader = WorkloadReader.open(path))
 *   {
 *       for (WorkloadRequest request = reader.next(); null != request; request = reader.next()) { ... }
 *   }
 * </pre>
 */
public final class WorkloadReader implements Closeable
{
    private final String name;
    private final JsonlObjects objects;
    private String source;
    private int hashBlockSize;
    private final List<String> notes = new ArrayList<>();
    private double originMs;
    private double lastArrivalMs;

    private WorkloadReader(final String name, final InputStream in) throws IOException
    {
        this.name = name;
        this.objects = new JsonlObjects(name, in);
        try
        {
            readMeta();
        }
        catch (final IOException | RuntimeException ex)
        {
            objects.close();
            throw ex;
        }
    }

    /**
     * @param path a workload file, gzip or plain.
     * @return a reader positioned after the meta line.
     * @throws IOException if the file cannot be read.
     */
    public static WorkloadReader open(final Path path) throws IOException
    {
        return new WorkloadReader(path.toString(), TraceFiles.openInput(path));
    }

    /**
     * @param name the name to use in messages.
     * @param in the content, gzip or plain (closed with the reader).
     * @return a reader positioned after the meta line.
     * @throws IOException if the content cannot be read.
     */
    public static WorkloadReader open(final String name, final InputStream in) throws IOException
    {
        return new WorkloadReader(name, TraceFiles.maybeGunzip(in));
    }

    /**
     * Read a whole workload file.
     *
     * @param path the file.
     * @return the workload with the meta line's source, block size, notes and origin.
     * @throws IOException if the file cannot be read.
     */
    public static Workload readAll(final Path path) throws IOException
    {
        try (WorkloadReader reader = open(path))
        {
            final List<WorkloadRequest> requests = new ArrayList<>();
            for (WorkloadRequest request = reader.next(); null != request; request = reader.next())
            {
                requests.add(request);
            }
            return new Workload(null == reader.source() ? "tapedeck" : reader.source(), reader.hashBlockSize(),
                requests, reader.notes(), reader.originMs());
        }
    }

    /**
     * @return the meta line's {@code source}, or null.
     */
    public String source()
    {
        return source;
    }

    /**
     * @return the meta line's {@code block_size}: tokens per hash id, 0 when absent.
     */
    public int hashBlockSize()
    {
        return hashBlockSize;
    }

    /**
     * @return the meta line's {@code notes}.
     */
    public List<String> notes()
    {
        return notes;
    }

    /**
     * @return the meta line's {@code origin_ms}: the source's time of arrival 0, 0 when absent.
     */
    public double originMs()
    {
        return originMs;
    }

    /**
     * @return the next request, or null at the end.
     * @throws IOException if reading fails.
     */
    public WorkloadRequest next() throws IOException
    {
        final JsonNode line = objects.next();
        if (null == line)
        {
            return null;
        }
        final String where = objects.where();
        if (line.has("meta"))
        {
            throw new TraceFormatException(where + ": a second meta line");
        }
        final double arrivalMs = JsonValues.nonNegative(JsonValues.required(line, "arrival_ms", where), where,
            "arrival_ms");
        if (arrivalMs < lastArrivalMs)
        {
            throw new TraceFormatException(where + ": arrival_ms " + Workload.formatMs(arrivalMs) +
                " is before the previous request's " + Workload.formatMs(lastArrivalMs) +
                " (a workload file is in arrival order)");
        }
        final int promptTokens = JsonValues.count(JsonValues.required(line, "prompt_tokens", where), where,
            "prompt_tokens");
        if (promptTokens < 1)
        {
            throw new TraceFormatException(where + ": prompt_tokens must be at least 1");
        }
        final JsonNode output = JsonValues.optional(line, "output_tokens");
        final int outputTokens = null == output ? WorkloadRequest.UNKNOWN :
            JsonValues.count(output, where, "output_tokens");
        final long[] hashIds = readHashIds(line, where, promptTokens);
        final JsonNode session = JsonValues.optional(line, "session");
        final JsonNode turn = JsonValues.optional(line, "turn");
        final JsonNode think = JsonValues.optional(line, "think_ms");
        lastArrivalMs = arrivalMs;
        return new WorkloadRequest(arrivalMs, promptTokens, outputTokens, hashIds,
            null == session ? null : JsonValues.string(session, where, "session"),
            null == turn ? 0 : JsonValues.count(turn, where, "turn"),
            null == think ? Double.NaN : JsonValues.nonNegative(think, where, "think_ms"));
    }

    private long[] readHashIds(final JsonNode line, final String where, final int promptTokens)
    {
        final JsonNode value = JsonValues.optional(line, "hash_ids");
        if (null == value)
        {
            return null;
        }
        final long[] ids = JsonValues.unsignedLongs(value, where, "hash_ids");
        if (0 == hashBlockSize)
        {
            throw new TraceFormatException(where + ": hash_ids need the meta line's block_size");
        }
        final long blocks = ((long)promptTokens + hashBlockSize - 1) / hashBlockSize;
        if (ids.length > blocks)
        {
            throw new TraceFormatException(where + ": " + ids.length + " hash_ids for " + promptTokens +
                " prompt tokens, more than its " + blocks + " blocks of " + hashBlockSize);
        }
        return ids;
    }

    private void readMeta() throws IOException
    {
        final JsonNode first = objects.next();
        if (null == first)
        {
            throw new TraceFormatException(name + ": empty; a workload file starts with " +
                "{\"meta\":{\"kind\":\"workload\",...}}");
        }
        final String where = objects.where();
        final JsonNode meta = first.get("meta");
        if (null == meta || !meta.isObject() || !"workload".equals(meta.path("kind").asText(null)))
        {
            throw new TraceFormatException(where + ": not a tapedeck workload file: the first line must be " +
                "{\"meta\":{\"kind\":\"workload\",...}}" + (null != meta ? " (a vllm-vcr trace? use --format trace)" :
                ""));
        }
        final JsonNode version = JsonValues.optional(meta, "version");
        if (null != version && WorkloadWriter.VERSION != JsonValues.natural(version, where, "meta.version"))
        {
            throw new TraceFormatException(where + ": workload format version " + version + " is not supported " +
                "(this tapedeck reads version " + WorkloadWriter.VERSION + ")");
        }
        final JsonNode sourceValue = JsonValues.optional(meta, "source");
        source = null == sourceValue ? null : JsonValues.string(sourceValue, where, "meta.source");
        final JsonNode blockSize = JsonValues.optional(meta, "block_size");
        hashBlockSize = null == blockSize ? 0 : JsonValues.count(blockSize, where, "meta.block_size");
        final JsonNode origin = JsonValues.optional(meta, "origin_ms");
        originMs = null == origin ? 0 : JsonValues.number(origin, where, "meta.origin_ms");
        final JsonNode notesValue = JsonValues.optional(meta, "notes");
        if (null != notesValue)
        {
            if (!notesValue.isArray())
            {
                throw new TraceFormatException(where + ": meta.notes must be an array of strings");
            }
            for (int i = 0; i < notesValue.size(); i++)
            {
                notes.add(JsonValues.string(notesValue.get(i), where, "meta.notes[" + i + "]"));
            }
        }
    }

    @Override
    public void close() throws IOException
    {
        objects.close();
    }
}
