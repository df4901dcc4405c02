package dev.tapedeck.protocol.enginecore;

/**
 * The first frame of every message on an engine's input socket: one byte naming the request type.
 */
public final class RequestType
{
    /** Add a request; payload {@code EngineCoreRequest}, then optional aux frames. */
    public static final byte ADD = 0x00;
    /** Abort requests; payload an array of request ids. */
    public static final byte ABORT = 0x01;
    /** Start a data-parallel wave; payload {@code [wave, exclude_engine_index]}. */
    public static final byte START_DP_WAVE = 0x02;
    /** A utility call; payload {@code [client_index, call_id, method, args]}. */
    public static final byte UTILITY = 0x03;

    private RequestType()
    {
    }
}
