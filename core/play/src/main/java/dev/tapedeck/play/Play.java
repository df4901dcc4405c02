package dev.tapedeck.play;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import dev.tapedeck.build.JvmAccess;
import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.enginecore.EngineCoreAgent;
import dev.tapedeck.enginecore.PlayOptions;
import dev.tapedeck.enginecore.PlayServer;
import dev.tapedeck.face.FaceResources;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.kvevents.KvEventStager;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.tokens.Tokenizer;

/**
 * A running {@code play}: N simulated vLLM engine cores behind a real vLLM frontend, each an
 * {@link EngineCoreAgent} on its own thread, with their KV event publishers and self-capture. Started by
 * {@link #start(PlayContext)}, the one way to build it (the CLI and the tests go through it).
 * <p>
 * Threading: {@code start} and {@code close} may be called from any thread, once each; the accessors are safe from any
 * thread after {@code start} returned. Each engine runs on its own agent thread.
 */
public final class Play implements AutoCloseable
{
    private final PlayContext context;
    private final PlayServer server;
    private final FaceResources resources;
    private final List<EngineConfig> engineConfigs;
    private boolean closed;

    private Play(final PlayContext context, final PlayServer server, final FaceResources resources,
        final List<EngineConfig> engineConfigs)
    {
        this.context = context;
        this.server = server;
        this.resources = resources;
        this.engineConfigs = Collections.unmodifiableList(engineConfigs);
    }

    /**
     * Conclude the context, build every engine, open the KV event sockets and start each engine's agent, which
     * connects to the frontend and performs its handshake on its own thread.
     *
     * @param context the settings; concluded here if it was not.
     * @return the running engines.
     * @throws IOException if the tokenizer or the trace file cannot be opened.
     * @throws IllegalArgumentException if a setting is invalid or a KV event endpoint cannot be opened.
     * @throws IllegalStateException if the JVM lacks {@value dev.tapedeck.build.JvmAccess#OPTION}.
     */
    public static Play start(final PlayContext context) throws IOException
    {
        JvmAccess.requireAgronaAccess();
        context.conclude();
        final boolean ownsTokenizer = null == context.tokenizer() && null != context.tokenizerFile();
        final Tokenizer tokenizer = ownsTokenizer ? Tokenizer.open(context.tokenizerFile()) : context.tokenizer();
        final PlayOptions options = context.playOptions(tokenizer);
        final KvEventsSettings kvSettings = context.kvEvents();
        final List<EngineConfig> configs = new ArrayList<>();
        final FaceResources resources = new FaceResources(tokenizer, ownsTokenizer);
        try
        {
            for (int i = 0; i < context.engineCount(); i++)
            {
                final EngineConfig template = context.engine();
                final EngineConfig config = template.copy().seed(template.seed() + i);
                if (null == tokenizer)
                {
                    config.tokenSpace(new int[] {0}, -1);
                }
                else
                {
                    config.tokenSpace(tokenizer.vocabulary().randomTokenIds(), tokenizer.eosTokenId());
                }
                if (null != kvSettings)
                {
                    // engine i is data-parallel rank i of the frontend: its own port and rank, as vLLM's DP ranks
                    final KvEventStager stager = new KvEventStager(kvSettings.ringBytes(), context.nanoClock(),
                        context.epochClock());
                    resources.publishers().add(kvSettings.forReplica(i).dataParallelRank(i), stager);
                    config.kvEventSink(stager);
                }
                if (null != context.kvTransfer())
                {
                    resources.startKvConnector(context.kvTransfer(), i, config, context.vllmLine().version(),
                        context.kvTransferModel());
                }
                configs.add(config.conclude());
            }
            resources.publishers().start();
            resources.recorder(context.capture().start("tapedeck-play", null, configs,
                context.nanoClock().nanoTime()));
            final PlayServer server = PlayServer.start(options, configs);
            return new Play(context, server, resources, configs);
        }
        catch (final IOException | RuntimeException ex)
        {
            resources.close();
            throw ex;
        }
    }

    /**
     * @return the concluded settings these engines run with.
     */
    public PlayContext context()
    {
        return context;
    }

    /**
     * @return the engines, in identity order.
     */
    public List<EngineCoreAgent> agents()
    {
        return server.agents();
    }

    /**
     * @return true when every engine completed its handshake.
     */
    public boolean allReady()
    {
        return server.allReady();
    }

    /**
     * @return the first error an engine thread raised (a failed handshake above all), or null.
     */
    public Throwable failure()
    {
        return server.failure();
    }

    /**
     * @return why play cannot go on (an engine's error, a failed handshake above all, or every engine stopped), or
     *     null while it can or once a shutdown began.
     */
    public String fatal()
    {
        return server.fatal();
    }

    /**
     * @return every engine's concluded configuration, in identity order.
     */
    public List<EngineConfig> engineConfigs()
    {
        return engineConfigs;
    }

    /**
     * @return every engine's KV event publisher, in identity order; empty when KV events are off.
     */
    public List<KvEventPublisher> kvEventPublishers()
    {
        return resources.publishers().publishers();
    }

    /**
     * @return the tokenizer random output comes from, or null when output tokens come from the prompts.
     */
    public Tokenizer tokenizer()
    {
        return resources.tokenizer();
    }

    /**
     * @return the self-capture recorder, or null when no trace file is set.
     */
    public TraceRecorder traceRecorder()
    {
        return resources.recorder();
    }

    /**
     * Stop taking requests, let running ones finish for up to {@code drainTimeoutNs}, abort the rest, close every
     * socket, then stop the KV event publishers, close the trace and, if play opened it, the tokenizer. Later calls
     * do nothing.
     *
     * @param drainTimeoutNs how long running requests may finish.
     * @return requests aborted.
     */
    public synchronized int shutdown(final long drainTimeoutNs)
    {
        if (closed)
        {
            return 0;
        }
        closed = true;
        final int aborted = server.shutdown(drainTimeoutNs);
        resources.close();
        return aborted;
    }

    /**
     * Shut down at once: running requests are aborted. Use {@link #shutdown(long)} to let them finish.
     */
    @Override
    public void close()
    {
        shutdown(0);
    }
}
