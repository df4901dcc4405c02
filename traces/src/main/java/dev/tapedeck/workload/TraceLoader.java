package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;

import dev.tapedeck.trace.TraceFormatException;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceValidation;

/**
 * A vllm-vcr (or tapedeck) trace as a workload: the records with {@code arrival_ms}, stably sorted by it (vcr's
 * canonical replay order), with their prompt and output lengths; {@code block_hashes} become hash ids of the meta
 * line's {@code block_size} (dropped, with a note, when the meta has none). Records without {@code arrival_ms} are
 * skipped with a note; a trace with none at all is an error. Records are checked with the workload rules only
 * ({@link TraceReader#openWorkload}): arrival, prompt and output lengths make a request, so a record without
 * {@code ttft_ms} or gaps ({@code itl_ms}/{@code itl_summary}) is replayed (noted: such a trace is no latency
 * source), and one without {@code output_tokens} lets the server decide. Stateless; thread safe.
 */
final class TraceLoader
{
    private TraceLoader()
    {
    }

    static Workload load(final Path path) throws IOException
    {
        final String name = path.toString();
        final WorkloadBuilder builder = new WorkloadBuilder(WorkloadFormat.TRACE.cliName());
        final NoteTally noArrival = new NoteTally("records have no arrival_ms and were skipped");
        final NoteTally noTimings = new NoteTally("records lack what a latency source needs (ttft_ms, output_tokens, " +
            "itl_ms or itl_summary for several output tokens): replayed as requests all the same");
        final NoteTally noOutput = new NoteTally("records have no output_tokens (the server decides)");
        long records = 0;
        boolean anyBlockHashes = false;
        boolean blockHashesDropped = false;
        try (TraceReader reader = TraceReader.openWorkload(path))
        {
            final Long blockSize = reader.meta().blockSize();
            if (null != blockSize && blockSize > 0 && blockSize <= Integer.MAX_VALUE)
            {
                builder.hashBlockSize(blockSize.intValue());
            }
            for (TraceRecord record = reader.next(); null != record; record = reader.next())
            {
                records++;
                final String where = name + ":" + reader.lineNumber();
                if (null == record.arrivalMs())
                {
                    noArrival.add(where);
                    continue;
                }
                if (!TraceValidation.latencyProblems(record).isEmpty())
                {
                    noTimings.add(where);
                }
                if (record.outputTokens() < 0)
                {
                    noOutput.add(where);
                }
                long[] hashIds = record.blockHashes();
                if (null != hashIds)
                {
                    anyBlockHashes = true;
                    if (0 == builder.hashBlockSize())
                    {
                        blockHashesDropped = true;
                        hashIds = null;
                    }
                }
                builder.add(where, record.arrivalMs(), record.promptTokens(), record.outputTokens(), hashIds, null, 0,
                    Double.NaN);
            }
            builder.notes().addAll(reader.warnings());
        }
        if (0 == builder.size())
        {
            throw new TraceFormatException(name + ": none of its " + records + " records has arrival_ms; a " +
                "trace without arrival times has nothing to replay");
        }
        if (!anyBlockHashes)
        {
            builder.hashBlockSize(0);
        }
        if (blockHashesDropped)
        {
            builder.note("block_hashes dropped: the meta line has no block_size, so their block size is unknown");
        }
        noArrival.addTo(builder.notes());
        noTimings.addTo(builder.notes());
        noOutput.addTo(builder.notes());
        builder.note("arrival_ms is in milliseconds; records in arrival order (stable), output lengths as recorded");
        return builder.build(false);
    }
}
