package dev.tapedeck.engine;

/**
 * Watches requests go through an engine, for captures (trace files) that need more than a face sees: arrival with
 * the load at that moment, every token with the batch around it, the end.
 * <p>
 * Called on the engine's thread, after the state it reports has been updated; one observer may serve several engines
 * (each on its own thread), so an implementation keeps per-request state on the request
 * ({@link Request#observation(Object)}) and makes only its shared parts thread safe. Must not call back into the
 * engine.
 */
public interface RequestObserver
{
    /**
     * The engine accepted a request.
     *
     * @param request the request ({@link Request#arrivalNs()} is its arrival).
     * @param inFlight requests running or waiting in this engine, this one included.
     */
    void onAccepted(Request request, int inFlight);

    /**
     * The request produced a token.
     *
     * @param request the request.
     * @param tokenId the token.
     * @param atNs when (the end of the step that produced it, or the release of a held first token).
     * @param running requests running in that step.
     * @param prefillTokens prompt tokens computed in that step.
     * @param continuesChunk true when the token belongs to the same output as the previous one (the second and later
     *     tokens of a speculative-decoding burst): a capture counts it in that output, not as a new gap.
     */
    void onToken(Request request, int tokenId, long atNs, int running, int prefillTokens, boolean continuesChunk);

    /**
     * The request ended ({@link Request#finishReason()}); it was accepted before.
     *
     * @param request the request.
     */
    void onFinished(Request request);
}
