package dev.tapedeck.engine;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * {@code --replay-steps FILE} (vllm-vcr's replay-steps): a request that matches a recorded one is served that
 * record's output chunks verbatim. Its first output carries {@code output_tokens - sum(itl_tokens)} tokens (at least
 * 1); each decode step after it pops the next recorded {@code (itl_ms[i], itl_tokens[i])}: the step lasts the recorded
 * gap (when this request paces the step, see below) and emits the recorded tokens. The request produces at most the
 * recorded total, and finishes as the recording did ({@code stop}, else {@code length}). Unmatched requests stay on the
 * latency model.
 * <p>
 * Matching ({@link Match}): {@code PREFIX} (default) takes the record sharing the prompt's deepest full-block
 * fingerprint (the trace's {@code block_hashes}, its meta {@code block_size}, else 16), the first not served yet, else
 * the first again; {@code INDEX} takes record {@code i} of the canonical replay order (by {@code arrival_ms}) for a
 * request id ending in {@code -i} ({@code simulate} names requests {@code sim-i}).
 * <p>
 * In a step with several recorded decoders, the one with the longest context paces it (its gap is the step's decode
 * time, as vllm-vcr's pacer); the step lasts the longer of that gap and the latency model's cost of the rest of the
 * step (prefill chunks, unmatched decodes). {@code K = max(itl_tokens) - 1}, when above 0, turns on speculative
 * decoding accounting with recorded bursts ({@link SpeculativeDecoding#recorded}).
 * <p>
 * <b>Thread safe</b> (see {@link RecordIndex}); shared by every engine of a configuration.
 */
public final class StepReplay
{
    /** How requests find their record. */
    public enum Match
    {
        /** By the deepest shared prompt block fingerprint. */
        PREFIX,
        /** By the integer after the last {@code -} of the request id. */
        INDEX
    }

    private final RecordIndex index;
    private final Match match;
    private final int blockSize;
    private final String source;
    private final int numSpecTokens;

    private StepReplay(final RecordIndex index, final Match match, final int blockSize, final String source,
        final int numSpecTokens)
    {
        this.index = index;
        this.match = match;
        this.blockSize = blockSize;
        this.source = source;
        this.numSpecTokens = numSpecTokens;
    }

    /**
     * @param file a vllm-vcr or tapedeck trace (JSONL, {@code .gz}) with {@code itl_ms}.
     * @param match how requests find their record.
     * @return the replay.
     * @throws IOException if the file cannot be read.
     * @throws IllegalArgumentException (naming the file, and the line of a bad record) for an unusable trace.
     */
    public static StepReplay read(final Path file, final Match match) throws IOException
    {
        final TraceReader.Trace trace = TraceReader.readAll(file);
        return of(trace.records(), match, null == trace.meta().blockSize() ? TokenReplay.DEFAULT_BLOCK_SIZE :
            (int)(long)trace.meta().blockSize(), file.toString());
    }

    /**
     * @param records the recorded requests.
     * @param match how requests find their record.
     * @param blockSize the block size of their {@code block_hashes}.
     * @param source where they come from, for messages.
     * @return the replay.
     * @throws IllegalArgumentException when no record can be served.
     */
    public static StepReplay of(final List<TraceRecord> records, final Match match, final int blockSize,
        final String source)
    {
        final RecordIndex index = new RecordIndex(records);
        final List<TraceRecord> ordered = index.records();
        int usable = 0;
        int maxTokens = 0;
        for (int i = 0; i < ordered.size(); i++)
        {
            final TraceRecord record = ordered.get(i);
            if (!isUsable(record))
            {
                continue;
            }
            usable++;
            for (final int tokens : null == record.itlTokens() ? new int[] {1} : record.itlTokens())
            {
                maxTokens = Math.max(maxTokens, tokens);
            }
            if (Match.PREFIX == match && null != record.blockHashes())
            {
                for (final long hash : record.blockHashes())
                {
                    index.put(hash, i);
                }
            }
        }
        if (0 == usable || (Match.PREFIX == match && index.isEmpty()))
        {
            throw new IllegalArgumentException(source + ": --replay-steps needs records with itl_ms" +
                (Match.PREFIX == match ? " and block_hashes (or match by index)" : "") + "; none of " +
                records.size() + " has them");
        }
        return new StepReplay(index, match, blockSize, source, Math.max(0, maxTokens - 1));
    }

    private static boolean isUsable(final TraceRecord record)
    {
        final double[] gaps = record.itlMs();
        return null != gaps && (null == record.itlTokens() || record.itlTokens().length == gaps.length);
    }

    /**
     * @return {@code K} of the recorded bursts ({@code max(itl_tokens) - 1}), 0 for an autoregressive trace.
     */
    public int numSpecTokens()
    {
        return numSpecTokens;
    }

    /**
     * Give a request its recorded steps, if it matches a record; called once per request, at submission.
     *
     * @param request the request (its schedule is set).
     */
    void assign(final Request request)
    {
        final int found;
        if (Match.INDEX == match)
        {
            found = index.indexOf(request.requestId());
        }
        else
        {
            final long[] hashes = PromptBlockHashes.of(request.promptTokenIds(), request.promptLength(), blockSize);
            found = null == hashes ? -1 : index.takeDeepest(hashes);
        }
        if (found < 0 || !isUsable(index.records().get(found)))
        {
            return;
        }
        final TraceRecord record = index.records().get(found);
        final double[] gapsMs = record.itlMs();
        final int[] tokens = new int[gapsMs.length];
        final long[] gapsNs = new long[gapsMs.length];
        long decoded = 0;
        for (int i = 0; i < gapsMs.length; i++)
        {
            tokens[i] = null == record.itlTokens() ? 1 : Math.max(1, record.itlTokens()[i]);
            gapsNs[i] = Math.max(0, Math.round(gapsMs[i] * 1_000_000.0));
            decoded += tokens[i];
        }
        request.firstChunkTokens = (int)Math.max(1, Math.min(Integer.MAX_VALUE / 2, record.outputTokens() - decoded));
        request.stepGapsNs = gapsNs;
        request.stepTokens = tokens;
        request.stepCursor = 0;
        request.recordedFinish = "stop".equals(record.finishReason()) ? FinishReason.STOP : FinishReason.LENGTH;
    }

    @Override
    public String toString()
    {
        return "recorded steps of " + source + " (by " + match.name().toLowerCase(java.util.Locale.ROOT) + ")";
    }
}
