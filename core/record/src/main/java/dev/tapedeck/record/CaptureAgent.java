package dev.tapedeck.record;

import java.io.IOException;
import java.util.function.Consumer;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;

/**
 * The capture writer: drains the observations the relay thread queued into the {@link CaptureRecorder}, so that
 * decoding, JSON and file flushes never delay relaying. Runs on its own thread (an Agrona {@code AgentRunner});
 * the queue is single-producer (the relay thread) single-consumer (this agent). When the queue runs dry it flushes
 * the step-stats sidecar. {@link #onClose()} drains what is left and closes the files.
 */
final class CaptureAgent implements Agent
{
    private static final System.Logger LOG = System.getLogger(CaptureAgent.class.getName());
    private static final int DRAIN_LIMIT = 256;

    private final OneToOneConcurrentArrayQueue<Observation> queue;
    private final CaptureRecorder recorder;
    private final Consumer<Observation> handler = this::handle;
    private volatile boolean closed;

    CaptureAgent(final OneToOneConcurrentArrayQueue<Observation> queue, final CaptureRecorder recorder)
    {
        this.queue = queue;
        this.recorder = recorder;
    }

    @Override
    public String roleName()
    {
        return "tapedeck-record-writer";
    }

    @Override
    public int doWork()
    {
        final int drained = queue.drain(handler, DRAIN_LIMIT);
        if (0 == drained)
        {
            recorder.flush();
        }
        return drained;
    }

    private void handle(final Observation observation)
    {
        if (Observation.OUTPUT == observation.type())
        {
            recorder.onOutput(observation.payload(), observation.atNs());
        }
        else
        {
            recorder.onInput(observation.type(), observation.payload(), observation.atNs());
        }
    }

    @Override
    public void onClose()
    {
        while (queue.drain(handler, DRAIN_LIMIT) > 0)
        {
            // everything the relay queued before it stopped is recorded
        }
        try
        {
            recorder.close();
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.ERROR, "closing the trace failed: " + ex.getMessage());
        }
        LOG.log(System.Logger.Level.INFO, "trace closed: {0} record(s), {1} aborted request(s) left out, {2} " +
            "still in flight left out", recorder.records(), recorder.dropped(), recorder.inFlight());
        closed = true;
    }

    /** @return true once the files are closed. */
    boolean isClosed()
    {
        return closed;
    }

    /** @return records written so far (read from another thread: approximate). */
    CaptureRecorder recorder()
    {
        return recorder;
    }
}
