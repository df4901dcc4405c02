package dev.tapedeck.engine;

/**
 * Where an engine's outputs go: a face (HTTP streams, engine-core wire, a trace file, metrics only).
 * <p>
 * Called on the engine's thread. Per step the engine calls {@link #onToken} once for every request that generated a
 * token, and {@link #onFinished} for every request that ended, right after its last token; then {@link #onBatchEnd},
 * which is where a face flushes: after every step when {@link #batchPerStep()} says so (the engine-core wire, one
 * message per step), otherwise once per {@link Engine#doWork(long)} call that produced output (several steps when the
 * engine catches up with its clock). A request the face ends with {@link Engine#abort(Request, FinishReason, long)}
 * gets its {@code onFinished} inside that call, outside any batch ({@link Engine#abortAll(long)} ends with an
 * {@code onBatchEnd}). Implementations must not call back into the engine from {@code onToken}/{@code onFinished}: a
 * face that ends a request at a token (a stop string) says so by returning true from {@code onToken}, and the engine
 * finishes it.
 */
public interface OutputSink
{
    /**
     * For runs whose result is not the outputs (a captured trace, the requests' own times): keeps nothing and never
     * stops a request. Stateless; shared by every engine that uses it.
     */
    OutputSink DISCARD = new OutputSink()
    {
        @Override
        public boolean onToken(final Request request, final int tokenId)
        {
            return false;
        }

        @Override
        public void onFinished(final Request request)
        {
        }

        @Override
        public void onBatchEnd(final long nowNs)
        {
        }
    };

    /**
     * A request generated a token.
     *
     * @param request the request; {@link Request#lastTokenId()} is the new token.
     * @param tokenId the new token id.
     * @return true to stop the request at this token (the engine finishes it with {@link FinishReason#STOP}, as for a
     *     stop string), false to let it go on.
     */
    boolean onToken(Request request, int tokenId);

    /**
     * A request ended; {@link Request#finishReason()} says why.
     *
     * @param request the request.
     */
    void onFinished(Request request);

    /**
     * Every output of this batch has been delivered.
     *
     * @param nowNs the engine's time of the batch: the end of its step when batches are per step, else the time of
     *     the {@link Engine#doWork(long)} call.
     */
    void onBatchEnd(long nowNs);

    /**
     * @return true to get {@link #onBatchEnd} after every step; read once when the engine is created.
     */
    default boolean batchPerStep()
    {
        return false;
    }
}
