package dev.tapedeck.nixl;

/**
 * A KV transfer, handshake or notification failed; the message says which and why.
 */
public final class KvTransferException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, naming the peer.
     */
    public KvTransferException(final String message)
    {
        super(message);
    }

    /**
     * @param message what failed, naming the peer.
     * @param cause the underlying error.
     */
    public KvTransferException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
