package dev.tapedeck.engine;

/**
 * Outcome of {@link Engine#submit(Request, long)}. Only {@link #ACCEPTED} means the engine now owns the request and
 * will finish it (with tokens, an error or an abort).
 */
public enum SubmitResult
{
    /** Queued; the engine will report its tokens and its finish. */
    ACCEPTED,
    /** The waiting queue is at {@code --max-waiting-queue-length}; the client should get a 429. */
    QUEUE_FULL,
    /** Prompt plus requested output exceed {@code --max-model-len}; the client should get a 400. */
    TOO_LONG,
    /** The engine is draining for shutdown and takes no new work; the client should get a 503. */
    SHUTTING_DOWN,
    /** The request is malformed for the engine (empty prompt, negative limits); the client should get a 400. */
    INVALID
}
