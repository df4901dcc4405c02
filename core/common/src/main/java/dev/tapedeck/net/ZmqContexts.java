package dev.tapedeck.net;

import java.util.function.BooleanSupplier;

import org.zeromq.ZContext;

/**
 * ZeroMQ contexts made the one way tapedeck makes them. JeroMQ reports the recoverable errors of its I/O threads (an
 * exception while it handles a socket's readiness or a command) by printing their stack traces on standard error.
 * Here each is one log line naming the context's owner: a warning while the context is in use, a debug line once
 * its owner has begun to close it. While a context terminates, JeroMQ's own teardown can race with a session's last
 * acknowledgement to a socket already gone ({@code ClosedChannelException} in {@code Signaler.send}); nothing is lost
 * then, and a clean shutdown should not print a stack trace for it.
 * <p>
 * Stateless; safe from any thread.
 */
public final class ZmqContexts
{
    private static final System.Logger LOG = System.getLogger(ZmqContexts.class.getName());

    private ZmqContexts()
    {
    }

    /**
     * @param ioThreads the context's I/O threads.
     * @param owner what the context serves, in log lines ("play", "KV events").
     * @param closing true once the owner has begun to close the context (read on the I/O threads).
     * @return a new context whose I/O threads' errors are logged as above.
     */
    public static ZContext create(final int ioThreads, final String owner, final BooleanSupplier closing)
    {
        final ZContext context = new ZContext(ioThreads);
        context.setNotificationExceptionHandler((thread, error) ->
        {
            final String line = owner + ": a ZeroMQ I/O thread reported " + error;
            if (closing.getAsBoolean())
            {
                LOG.log(System.Logger.Level.DEBUG, line + " while closing", error);
            }
            else
            {
                LOG.log(System.Logger.Level.WARNING, line);
            }
        });
        return context;
    }
}
