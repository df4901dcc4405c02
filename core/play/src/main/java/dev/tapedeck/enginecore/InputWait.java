package dev.tapedeck.enginecore;

import java.util.concurrent.TimeUnit;

import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Where an engine with nothing to do waits: blocked on its input sockets (a ZeroMQ poll) until a message arrives or
 * its next step or release is due, at most {@link #MAX_WAIT_NS}, so that an idle engine takes no CPU where the agent's
 * backoff would wake it every 50 us (an idle engine thread used 18% of a core). Waits shorter than a millisecond, the
 * poll's unit, are left to the backoff idle strategy, which keeps step timing exact.
 * <p>
 * Confined to the engine's thread.
 */
final class InputWait implements AutoCloseable
{
    /** The longest wait: the fault schedule and a shutdown are noticed within it. */
    static final long MAX_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(50);

    private final ZMQ.Poller poller;

    /**
     * @param context the engine's ZeroMQ context.
     * @param sockets the sockets whose messages end a wait (null entries are skipped).
     */
    InputWait(final ZContext context, final ZMQ.Socket... sockets)
    {
        poller = context.createPoller(sockets.length);
        for (final ZMQ.Socket socket : sockets)
        {
            if (null != socket)
            {
                poller.register(socket, ZMQ.Poller.POLLIN);
            }
        }
    }

    /**
     * Wait for input for up to {@code idleNs} (whole milliseconds, at most {@link #MAX_WAIT_NS}); return at once when
     * that is less than a millisecond.
     *
     * @param idleNs how long nothing is due, {@link Long#MAX_VALUE} when nothing is.
     */
    void await(final long idleNs)
    {
        final long waitMs = Math.min(idleNs, MAX_WAIT_NS) / 1_000_000;
        if (waitMs > 0)
        {
            poller.poll(waitMs);
        }
    }

    @Override
    public void close()
    {
        poller.close();
    }
}
