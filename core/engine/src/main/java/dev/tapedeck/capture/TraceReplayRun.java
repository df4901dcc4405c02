package dev.tapedeck.capture;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.node.TextNode;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.RequestObserver;
import dev.tapedeck.engine.VirtualTimeDriver;
import dev.tapedeck.trace.TraceRecord;

/**
 * The workload of a trace replayed through the real {@link Engine} in virtual time ({@link VirtualTimeDriver}) and
 * captured as {@code serve --trace-out} captures ({@link CaptureObserver}): the model-level replay of
 * {@code inspect calibrate TRACE}. The records with {@code arrival_ms}, stably sorted by it (vllm-vcr's canonical
 * replay order; record {@code i} of that order is request {@code replay-i}), are submitted at their arrival times
 * with their prompt and output lengths:
 * <ul>
 *   <li>Prompt token ids as vllm-vcr's {@code prompt_from_block_hashes}: each block hash gives {@code blockSize}
 *       tokens {@code mix_token(hash, j)}, truncated to {@code prompt_tokens}, the rest
 *       {@code mix_token(i, position)}; so records that shared a prefix share it again and hit the prefix cache.</li>
 *   <li>Output: exactly {@code output_tokens} tokens ({@code min_tokens} = {@code max_tokens}, as {@code gen-demo}
 *       does).</li>
 * </ul>
 * Both the replayed records and the source records taken carry {@code request_id} {@code replay-i}, so a calibration
 * pairs them one to one. Stateless; every run builds its own engine on the caller's thread.
 */
public final class TraceReplayRun
{
    private static final int STOP_TOKEN_ID = 2;
    private static final int[] STOP_TOKEN = {STOP_TOKEN_ID};
    private static final int VOCABULARY = 31_000;

    private TraceReplayRun()
    {
    }

    /**
     * What a replay gave.
     *
     * @param source the source records replayed, in arrival order, each with its {@code request_id}.
     * @param replayed the replay's records, in finish order, with the same ids.
     * @param refused requests the engine refused (too long for the context, queue full).
     */
    public record Result(List<TraceRecord> source, List<TraceRecord> replayed, int refused)
    {
    }

    /**
     * @param records the trace's records (those without {@code arrival_ms} are left out); their {@code request_id}
     *     is set.
     * @param engine the engine's settings as {@code serve} and {@code simulate} build them (step model, KV cache,
     *     frontend delay, ...), not concluded and not changed: the replay runs a copy whose context and waiting queue
     *     are raised to hold every record, and whose block size also cuts the records' {@code block_hashes} into
     *     prompt tokens. The replay's request ids are {@code replay-i} (for {@code --replay-steps-match index}).
     * @return the replay.
     * @throws IllegalArgumentException if no record has {@code arrival_ms}, or for settings the engine refuses.
     */
    public static Result replay(final List<TraceRecord> records, final EngineConfig engine)
    {
        return replay(records, engine, false);
    }

    /**
     * @param records the trace's records (those without {@code arrival_ms} are left out); their {@code request_id}
     *     is set.
     * @param engine the engine's settings, as for {@link #replay(List, EngineConfig)}; with a token replay matched by
     *     index ({@code TokenReplay.of(records, blockSize, source, INDEX)}) request {@code replay-i} writes record
     *     {@code i}'s recorded tokens.
     * @param recordTokens true to keep the replay's output token ids in its records.
     * @return the replay.
     * @throws IllegalArgumentException if no record has {@code arrival_ms}, or for settings the engine refuses.
     */
    public static Result replay(final List<TraceRecord> records, final EngineConfig engine,
        final boolean recordTokens)
    {
        final List<TraceRecord> source = new ArrayList<>();
        for (final TraceRecord record : records)
        {
            if (null != record.arrivalMs())
            {
                source.add(record);
            }
        }
        if (source.isEmpty())
        {
            throw new IllegalArgumentException("no record has arrival_ms: a replay needs arrival times");
        }
        source.sort((a, b) -> Double.compare(a.arrivalMs(), b.arrivalMs()));
        final double startMs = source.get(0).arrivalMs();
        final List<Request> requests = new ArrayList<>(source.size());
        int maxModelLen = 1;
        for (int i = 0; i < source.size(); i++)
        {
            final TraceRecord record = source.get(i);
            final String id = "replay-" + i;
            record.extra().put("request_id", TextNode.valueOf(id));
            final int promptTokens = (int)Math.min(Integer.MAX_VALUE / 2, Math.max(1, record.promptTokens()));
            final int outputTokens = (int)Math.min(Integer.MAX_VALUE / 2, Math.max(1, record.outputTokens()));
            maxModelLen = Math.max(maxModelLen, promptTokens + outputTokens);
            requests.add(new Request(id, promptTokenIds(i, record.blockHashes(), promptTokens, engine.blockSize()))
                .arrivalNs(Math.round((record.arrivalMs() - startMs) * 1_000_000.0))
                .maxTokens(outputTokens)
                .minTokens(outputTokens)
                .stopTokenIds(STOP_TOKEN)
                .tokenPool(STOP_TOKEN));
        }
        final List<TraceRecord> replayed = new ArrayList<>(source.size());
        final Ids ids = new Ids();
        ids.capture = new CaptureObserver(-Math.round(startMs * 1_000_000.0), recordTokens, 0, record ->
        {
            record.extra().put("request_id", TextNode.valueOf(ids.current));
            replayed.add(record);
        });
        final EngineConfig config = engine.copy()
            .maxModelLen(Math.max(engine.maxModelLen(), Math.max(maxModelLen, engine.blockSize())))
            .maxWaitingQueueLength(Math.max(source.size(), engine.maxWaitingQueueLength()))
            .tokenSpace(STOP_TOKEN, STOP_TOKEN_ID)
            .requestObserver(ids)
            .conclude();
        final int refused = VirtualTimeDriver.run(new Engine(config, OutputSink.DISCARD, 0), requests);
        return new Result(source, replayed, refused);
    }

    /**
     * vllm-vcr's {@code mix_token}: {@code x = seed * 0x9E3779B97F4A7C15 + position * 0xBF58476D1CE4E5B9}
     * (wrapping), {@code x ^= x >>> 33}, token {@code x mod 31000} (unsigned).
     *
     * @param seed a block hash or a record index.
     * @param position the token's position in its block or prompt.
     * @return the token id.
     */
    public static int mixToken(final long seed, final long position)
    {
        long x = seed * 0x9E3779B97F4A7C15L + position * 0xBF58476D1CE4E5B9L;
        x ^= x >>> 33;
        return (int)Long.remainderUnsigned(x, VOCABULARY);
    }

    /**
     * @param index the record's position in arrival order.
     * @param blockHashes its block hashes, or null.
     * @param promptTokens its prompt length.
     * @param blockSize tokens per block.
     * @return its prompt token ids.
     */
    static int[] promptTokenIds(final int index, final long[] blockHashes, final int promptTokens,
        final int blockSize)
    {
        final int[] ids = new int[promptTokens];
        int position = 0;
        if (null != blockHashes)
        {
            for (final long hash : blockHashes)
            {
                for (int j = 0; j < blockSize && position < promptTokens; j++)
                {
                    ids[position++] = mixToken(hash, j);
                }
            }
        }
        for (int rest = 0; position < promptTokens; rest++)
        {
            ids[position++] = mixToken(index, rest);
        }
        return ids;
    }

    /**
     * Passes every event to the capture and remembers which request is finishing, so the record gets its id.
     */
    private static final class Ids implements RequestObserver
    {
        private CaptureObserver capture;
        private String current;

        @Override
        public void onAccepted(final Request request, final int inFlight)
        {
            capture.onAccepted(request, inFlight);
        }

        @Override
        public void onToken(final Request request, final int tokenId, final long atNs, final int running,
            final int prefillTokens, final boolean continuesChunk)
        {
            capture.onToken(request, tokenId, atNs, running, prefillTokens, continuesChunk);
        }

        @Override
        public void onFinished(final Request request)
        {
            current = request.requestId();
            capture.onFinished(request);
        }
    }
}
