package dev.tapedeck.trace;

/**
 * A trace or workload file that does not follow its format. The message names the file and line when known
 * ({@code trace.jsonl:7: itl_tokens must have itl_ms's length}).
 */
public final class TraceFormatException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong, with file and line when known.
     */
    public TraceFormatException(final String message)
    {
        super(message);
    }

    /**
     * @param message what is wrong, with file and line when known.
     * @param cause the underlying parse error.
     */
    public TraceFormatException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
