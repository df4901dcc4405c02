package dev.tapedeck.engine;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * {@code --replay-tokens FILE}: a request whose prompt matches a recorded one gets that record's {@code
 * output_token_ids}, so a real frontend (or {@code serve} with the model's tokenizer) turns them into the recorded
 * text. With {@code --replay-tokens-match index}, a request whose id ends in {@code -i} gets record {@code i} of the
 * canonical replay order (as {@code --replay-steps-match index}). Otherwise requests match by content: the prompt's
 * length and its deepest full-block fingerprint (the trace's {@code block_hashes} recipe, with the trace's {@code
 * block_size}, else 16), which covers every full block of the prompt; records with both {@code block_hashes} and {@code
 * output_token_ids} are keyed. A matched request produces the recorded tokens, at most {@code max_tokens} of them, and
 * finishes as the recording did ({@code stop} or {@code length}); an unmatched one (no such prompt, or shorter than a
 * block) uses the normal token source. Repeated prompts are served their recordings in arrival order, then the first
 * one again.
 * <p>
 * <b>Thread safe</b> (see {@link RecordIndex}); shared by every engine of a configuration.
 */
public final class TokenReplay
{
    /** The block size of fingerprints when the trace's meta has none (vLLM's and vllm-vcr's default). */
    public static final int DEFAULT_BLOCK_SIZE = 16;

    private final RecordIndex index;
    private final int blockSize;
    private final String source;
    private final StepReplay.Match match;

    private TokenReplay(final RecordIndex index, final int blockSize, final String source,
        final StepReplay.Match match)
    {
        this.index = index;
        this.blockSize = blockSize;
        this.source = source;
        this.match = match;
    }

    /**
     * @param file a vllm-vcr or tapedeck trace (JSONL, {@code .gz}) recorded with token ids.
     * @return the replay.
     * @throws IOException if the file cannot be read.
     * @throws IllegalArgumentException (naming the file, and the line for a bad record) when it is not a trace or no
     *     record can be matched.
     */
    public static TokenReplay read(final Path file) throws IOException
    {
        return read(file, StepReplay.Match.PREFIX);
    }

    /**
     * @param file a vllm-vcr or tapedeck trace (JSONL, {@code .gz}) recorded with token ids.
     * @param match how a request finds its record: by prompt, or by the index its id ends in.
     * @return the replay.
     * @throws IOException if the file cannot be read.
     * @throws IllegalArgumentException (naming the file, and the line for a bad record) when it is not a trace or no
     *     record can be matched.
     */
    public static TokenReplay read(final Path file, final StepReplay.Match match) throws IOException
    {
        final TraceReader.Trace trace = TraceReader.readAll(file);
        return of(trace.records(), null == trace.meta().blockSize() ? DEFAULT_BLOCK_SIZE :
            (int)(long)trace.meta().blockSize(), file.toString(), match);
    }

    /**
     * @param records the recorded requests.
     * @param blockSize the block size of their {@code block_hashes}.
     * @param source where they come from, for messages.
     * @return the replay.
     * @throws IllegalArgumentException when no record has both {@code block_hashes} and {@code output_token_ids}.
     */
    public static TokenReplay of(final List<TraceRecord> records, final int blockSize, final String source)
    {
        return of(records, blockSize, source, StepReplay.Match.PREFIX);
    }

    /**
     * @param records the recorded requests.
     * @param blockSize the block size of their {@code block_hashes}.
     * @param source where they come from, for messages.
     * @param match {@code PREFIX}: by prompt (records need {@code block_hashes}); {@code INDEX}: a request whose id
     *     ends in {@code -i} gets record {@code i} of the canonical replay order (by {@code arrival_ms}).
     * @return the replay.
     * @throws IllegalArgumentException when no record can be matched.
     */
    public static TokenReplay of(final List<TraceRecord> records, final int blockSize, final String source,
        final StepReplay.Match match)
    {
        final RecordIndex index = new RecordIndex(records);
        final List<TraceRecord> ordered = index.records();
        boolean any = false;
        for (int i = 0; i < ordered.size(); i++)
        {
            final TraceRecord record = ordered.get(i);
            final long[] hashes = record.blockHashes();
            final int[] ids = record.outputTokenIds();
            any |= null != ids && ids.length > 0;
            if (null != hashes && hashes.length > 0 && null != ids && ids.length > 0)
            {
                index.put(RecordIndex.contentKey(record.promptTokens(), hashes[hashes.length - 1]), i);
            }
        }
        if (StepReplay.Match.INDEX == match ? !any : index.isEmpty())
        {
            throw new IllegalArgumentException(source + (StepReplay.Match.INDEX == match ? ": --replay-tokens " +
                "needs records with output_token_ids (record with --record-tokens)" : ": --replay-tokens needs " +
                "records with both output_token_ids (record with --record-tokens) and block_hashes") + "; none of " +
                records.size() + " has them");
        }
        return new TokenReplay(index, blockSize, source, match);
    }

    /**
     * Give a request its recording, if its prompt has one; called once per request, at submission.
     *
     * @param request the request (its recorded tokens are set).
     */
    void assign(final Request request)
    {
        final int found;
        if (StepReplay.Match.INDEX == match)
        {
            found = index.indexOf(request.requestId());
        }
        else
        {
            final long[] hashes = PromptBlockHashes.of(request.promptTokenIds(), request.promptLength(), blockSize);
            found = null == hashes ? -1 : index.take(RecordIndex.contentKey(request.promptLength(),
                hashes[hashes.length - 1]));
        }
        if (found >= 0 && null != index.records().get(found).outputTokenIds())
        {
            final TraceRecord record = index.records().get(found);
            request.recordedTokenIds = record.outputTokenIds();
            request.recordedFinish = "stop".equals(record.finishReason()) ? FinishReason.STOP : FinishReason.LENGTH;
        }
    }

    @Override
    public String toString()
    {
        return "recorded tokens of " + source;
    }
}
