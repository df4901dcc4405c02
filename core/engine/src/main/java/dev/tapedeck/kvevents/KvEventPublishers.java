package dev.tapedeck.kvevents;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.zeromq.ZContext;

import dev.tapedeck.net.ZmqContexts;

/**
 * Every KV event publisher of a process, run as one Agrona agent on one thread ({@code tapedeck-kv-events}) with one
 * ZeroMQ context (one I/O thread), however many engines publish. {@code serve --instances 24} used to run a thread
 * and a ZeroMQ context per engine; docs/performance.md has the measured difference.
 * <p>
 * Threading: {@link #add} and {@link #start()} on one thread, before any publishing; {@link #close()} from any
 * thread, once. The publishers' duty cycles all run on the runner's thread.
 */
public final class KvEventPublishers implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(KvEventPublishers.class.getName());
    private static final long BIND_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private final ZContext context = ZmqContexts.create(1, "KV events", () -> this.closed);
    private final List<KvEventPublisher> publishers = new ArrayList<>();
    private AgentRunner runner;
    /** Set when {@link #close()} begins (read on the context's I/O thread). */
    private volatile boolean closed;

    /**
     * Add a publisher for one engine (before {@link #start()}).
     *
     * @param settings endpoints, topic, encoding.
     * @param stager the engine's side of its events.
     * @return the publisher.
     */
    public KvEventPublisher add(final KvEventsSettings settings, final KvEventStager stager)
    {
        if (null != runner)
        {
            throw new IllegalStateException("add publishers before start()");
        }
        final KvEventPublisher publisher = new KvEventPublisher(settings, stager, context);
        publishers.add(publisher);
        return publisher;
    }

    /**
     * Open every publisher's sockets on the runner's thread and start publishing; events the engines staged before
     * are sent first. Returns once every socket is open.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first endpoint that could not be opened (everything is closed).
     */
    public KvEventPublishers start()
    {
        if (publishers.isEmpty() || null != runner)
        {
            return this;
        }
        final Agent agent = new AllPublishers(publishers.toArray(new KvEventPublisher[0]));
        // the agent parks itself when idle (AllPublishers.doWork), until an engine stages a batch
        runner = new AgentRunner(new NoOpIdleStrategy(), ex -> LOG.log(System.Logger.Level.ERROR,
            "KV events publisher failed: " + ex.getMessage(), ex), null, agent);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread thread = new Thread(r, "tapedeck-kv-events");
            thread.setDaemon(true);
            return thread;
        });
        final long deadlineNs = System.nanoTime() + BIND_TIMEOUT_NS;
        for (final KvEventPublisher publisher : publishers)
        {
            try
            {
                publisher.bound().get(Math.max(0, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            catch (final ExecutionException ex)
            {
                close();
                throw (IllegalArgumentException)ex.getCause();
            }
            catch (final InterruptedException ex)
            {
                close();
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while opening the KV events sockets", ex);
            }
            catch (final TimeoutException ex)
            {
                close();
                throw new IllegalStateException("the KV events sockets did not open within 10 s", ex);
            }
        }
        return this;
    }

    /**
     * @return the publishers, in the order they were added.
     */
    public List<KvEventPublisher> publishers()
    {
        return Collections.unmodifiableList(publishers);
    }

    /**
     * Send what the engines staged, close the sockets, stop the thread. Later calls do nothing.
     */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (null != runner)
        {
            runner.close();
        }
        context.close();
    }

    /**
     * The publishers' duty cycles in turn, under one role name (Agrona names the runner's thread after it).
     */
    private static final class AllPublishers implements Agent
    {
        private static final long MAX_PARK_NS = TimeUnit.MILLISECONDS.toNanos(50);

        private final KvEventPublisher[] publishers;

        AllPublishers(final KvEventPublisher[] publishers)
        {
            this.publishers = publishers;
        }

        @Override
        public void onStart()
        {
            for (final KvEventPublisher publisher : publishers)
            {
                publisher.onStart();
                publisher.wakeOnStage(Thread.currentThread());
            }
        }

        /**
         * Each publisher's duty cycle in turn; one that throws is logged once and left out from then on, so it
         * neither starves the others nor makes the runner spin on its error.
         */
        @Override
        public int doWork()
        {
            int work = 0;
            for (int i = 0; i < publishers.length; i++)
            {
                final KvEventPublisher publisher = publishers[i];
                if (null == publisher)
                {
                    continue;
                }
                try
                {
                    work += publisher.doWork();
                }
                catch (final RuntimeException ex)
                {
                    LOG.log(System.Logger.Level.ERROR, "KV events publisher " + publisher.settings().endpoint() +
                        " failed and stops publishing: " + ex.getMessage(), ex);
                    publisher.onClose();
                    publishers[i] = null;
                }
            }
            if (0 == work)
            {
                park();
            }
            return work;
        }

        /**
         * Nothing to send: sleep until an engine stages a batch (its stager unparks this thread), the first delayed
         * batch is due, or {@link #MAX_PARK_NS} passed (replay requests and a close are heard within it). The park
         * used to be a backoff of at most 1 ms: an idle publisher thread took 20 ms of CPU a second.
         */
        private void park()
        {
            final long nowNs = System.nanoTime();
            long parkNs = MAX_PARK_NS;
            for (final KvEventPublisher publisher : publishers)
            {
                if (null != publisher)
                {
                    parkNs = Math.min(parkNs, publisher.idleNs(nowNs));
                }
            }
            if (parkNs > 0)
            {
                LockSupport.parkNanos(this, parkNs);
            }
        }

        @Override
        public void onClose()
        {
            for (final KvEventPublisher publisher : publishers)
            {
                if (null == publisher)
                {
                    continue; // failed and closed already
                }
                try
                {
                    publisher.onClose();
                }
                catch (final RuntimeException ex)
                {
                    LOG.log(System.Logger.Level.WARNING, "KV events publisher " + publisher.settings().endpoint() +
                        ": closing failed: " + ex.getMessage(), ex);
                }
            }
        }

        @Override
        public String roleName()
        {
            return "tapedeck-kv-events";
        }
    }
}
