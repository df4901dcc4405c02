package dev.tapedeck.record;

/**
 * A relayed message handed from the relay thread to the capture writer: which way it went, when it reached the tap,
 * and its payload frame (the same array the relay gave JeroMQ to send; neither side modifies it). Immutable.
 *
 * @param type the request type byte of a frontend-to-engine message, or {@link #OUTPUT} for an engine output.
 * @param atNs {@link System#nanoTime()} when the relay received it.
 * @param payload the message's payload frame: frame 1 of an input, frame 0 of an output.
 */
record Observation(byte type, long atNs, byte[] payload)
{
    /** Marks an engine-to-frontend message. */
    static final byte OUTPUT = -1;
}
