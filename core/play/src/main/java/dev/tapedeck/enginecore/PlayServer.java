package dev.tapedeck.enginecore;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.zeromq.ZContext;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.net.ZmqContexts;

/**
 * {@code tapedeck play}: N simulated engine cores, each an {@link EngineCoreAgent} on its own thread (Agrona
 * {@link AgentRunner} with a backoff idle strategy: spin briefly, then park for at most 50 us, so steps end on time
 * without burning a core while idle). Start with {@link #start}; {@link #shutdown} drains and stops.
 */
public final class PlayServer
{
    private static final System.Logger LOG = System.getLogger(PlayServer.class.getName());

    private final List<EngineCoreAgent> agents = new ArrayList<>();
    private final List<AgentRunner> runners = new ArrayList<>();
    private volatile Throwable failure;
    private volatile boolean stopping;
    /** The ZeroMQ context (I/O threads) every engine's sockets share. */
    private ZContext context;

    private PlayServer()
    {
    }

    /**
     * Start every engine; each connects to the frontend and performs its handshake on its own thread.
     *
     * @param options face settings.
     * @param configs one concluded engine config per engine.
     * @return the running server.
     */
    public static PlayServer start(final PlayOptions options, final List<EngineConfig> configs)
    {
        final PlayServer server = new PlayServer();
        final ErrorHandler errors = server::onError;
        server.context = ZmqContexts.create(ioThreads(options.engineCount()), "play", () -> server.stopping);
        for (int i = 0; i < options.engineCount(); i++)
        {
            final EngineCoreAgent agent = new EngineCoreAgent(i, options, configs.get(i), server.context);
            final AgentRunner runner = new AgentRunner(
                new BackoffIdleStrategy(100, 10, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(50)),
                errors, null, agent);
            server.agents.add(agent);
            server.runners.add(runner);
            AgentRunner.startOnThread(runner);
        }
        return server;
    }

    /**
     * @return the I/O threads the engines share: one per engine at most, and at most half the cores (ZeroMQ's I/O
     *     threads move bytes; an engine thread per core left for stepping).
     */
    static int ioThreads(final int engines)
    {
        return Math.max(1, Math.min(engines, Runtime.getRuntime().availableProcessors() / 2));
    }

    private void onError(final Throwable error)
    {
        if (error instanceof org.agrona.concurrent.AgentTerminationException)
        {
            LOG.log(System.Logger.Level.WARNING, error.getMessage()); // a die fault: the engine ends, play goes on
            return;
        }
        if (stopping)
        {
            LOG.log(System.Logger.Level.INFO, "engine stopped during shutdown: " + error.getMessage());
            return;
        }
        if (null == failure)
        {
            failure = error;
        }
        LOG.log(System.Logger.Level.ERROR, "engine failure: " + error.getMessage(), error);
    }

    /**
     * @return why play cannot go on, or null while it can: an engine's error (a failed handshake above all), or every
     *     engine stopped ({@code die} faults); null once a shutdown began.
     */
    public String fatal()
    {
        if (stopping)
        {
            return null;
        }
        if (null != failure)
        {
            return String.valueOf(failure.getMessage());
        }
        return agents.stream().allMatch(EngineCoreAgent::isStopped) ? "every engine stopped" : null;
    }

    /**
     * @return the first error an engine thread raised (a failed handshake above all), or null.
     */
    public Throwable failure()
    {
        return failure;
    }

    /**
     * @return the engines.
     */
    public List<EngineCoreAgent> agents()
    {
        return agents;
    }

    /**
     * @return true when every engine completed its handshake.
     */
    public boolean allReady()
    {
        return agents.stream().allMatch(EngineCoreAgent::isReady);
    }

    /**
     * Stop taking requests, let running ones finish for up to {@code drainTimeoutNs}, then abort the rest (their
     * clients get an ABORT finish) and close every socket.
     *
     * @param drainTimeoutNs how long requests may finish.
     * @return requests aborted at the end of the drain.
     */
    public int shutdown(final long drainTimeoutNs)
    {
        stopping = true;
        agents.forEach(EngineCoreAgent::stop);
        agents.forEach(EngineCoreAgent::beginDrain);
        final long deadline = System.nanoTime() + drainTimeoutNs;
        while (System.nanoTime() - deadline < 0 && agents.stream().anyMatch(a -> a.inFlight() > 0))
        {
            try
            {
                Thread.sleep(10);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                break;
            }
        }
        final int aborted = agents.stream().mapToInt(EngineCoreAgent::inFlight).sum();
        runners.forEach(AgentRunner::close);
        context.close(); // after every engine closed its sockets: waits for their last messages (linger)
        return aborted;
    }
}
