package dev.tapedeck.capture;

import java.util.function.Consumer;

import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.RequestObserver;
import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.RequestCapture;
import dev.tapedeck.trace.TraceRecord;

/**
 * Turns what an engine reports of each request into a trace record: arrival (ms since the capture started), the
 * requests in flight when it arrived, the prompt's block fingerprints, cached tokens, the gap before each token with
 * the batch around it, arrival to finish ({@code e2e_ms}), the finish reason and, with {@code recordTokens}, the
 * token ids. Each finished record goes to
 * a consumer, in finish order; {@link TraceRecorder} queues them to a writer thread, {@code inspect gen-demo} writes
 * them at once.
 * <p>
 * Called on the engines' threads (see {@link RequestObserver}); per-request state lives on the request, so one
 * instance may serve several engines when its consumer is thread safe.
 */
public final class CaptureObserver implements RequestObserver
{
    private final long startNs;
    private final boolean recordTokens;
    private final int blockSize;
    private final Consumer<TraceRecord> finished;

    /**
     * @param startNs the engine time that is {@code arrival_ms} 0.
     * @param recordTokens true to keep output token ids.
     * @param blockSize tokens per block of {@code block_hashes} (0 for none).
     * @param finished gets each finished record on the engine's thread.
     */
    public CaptureObserver(final long startNs, final boolean recordTokens, final int blockSize,
        final Consumer<TraceRecord> finished)
    {
        this.startNs = startNs;
        this.recordTokens = recordTokens;
        this.blockSize = blockSize;
        this.finished = finished;
    }

    @Override
    public void onAccepted(final Request request, final int inFlight)
    {
        final RequestCapture capture = new RequestCapture(millisSinceStart(request.arrivalNs()),
            request.promptLength(), inFlight, recordTokens);
        capture.blockHashes(PromptBlockHashes.of(request.promptTokenIds(), request.promptLength(), blockSize));
        request.observation(capture);
    }

    @Override
    public void onToken(final Request request, final int tokenId, final long atNs, final int running,
        final int prefillTokens, final boolean continuesChunk)
    {
        if (request.observation() instanceof RequestCapture capture)
        {
            if (continuesChunk)
            {
                capture.extendChunk();
            }
            else
            {
                capture.onChunk(millisSinceStart(atNs), 1, running, prefillTokens);
            }
            capture.onTokenId(tokenId);
        }
    }

    @Override
    public void onFinished(final Request request)
    {
        if (request.observation() instanceof RequestCapture capture)
        {
            request.observation(null);
            capture.cachedTokens(request.numCachedTokens());
            finished.accept(capture.toRecord(request.finishReason().wireName(),
                millisSinceStart(request.finishedNs())));
        }
    }

    private double millisSinceStart(final long nanoTime)
    {
        return (nanoTime - startNs) / 1e6;
    }
}
