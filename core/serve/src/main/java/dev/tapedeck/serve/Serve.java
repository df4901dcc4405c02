package dev.tapedeck.serve;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import dev.tapedeck.build.JvmAccess;
import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.http.HttpServer;
import dev.tapedeck.face.FaceResources;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.kvevents.KvEventStager;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.tokens.Tokenizer;

/**
 * A running {@code serve}: simulated vLLM instances, each an OpenAI-compatible HTTP port in front of its
 * data-parallel engines, with their KV event publishers and self-capture. Started by {@link #start(ServeContext)}, the
 * one way to build a server (the CLI, {@code demo}, the JUnit extension and the tests all go through it).
 * <p>
 * Threading: {@code start} and {@code close} may be called from any thread, once each; the accessors are safe from any
 * thread after {@code start} returned. The engines run on the server's event loops, never on the caller's thread.
 */
public final class Serve implements AutoCloseable
{
    private final ServeContext context;
    private final HttpServer server;
    private final FaceResources resources;
    private final List<EngineConfig> engineConfigs;
    private final List<URI> baseUrls;
    private boolean closed;

    private Serve(final ServeContext context, final HttpServer server, final FaceResources resources,
        final List<EngineConfig> engineConfigs)
    {
        this.context = context;
        this.server = server;
        this.resources = resources;
        this.engineConfigs = Collections.unmodifiableList(engineConfigs);
        final List<URI> urls = new ArrayList<>();
        for (final int port : server.ports())
        {
            urls.add(URI.create((context.serveOptions().tls().enabled() ? "https://" : "http://") +
                urlHost(context.host()) + ":" + port));
        }
        this.baseUrls = Collections.unmodifiableList(urls);
    }

    /**
     * Conclude the context, build every engine, bind every instance and start the KV event publishers.
     *
     * @param context the settings; concluded here if it was not.
     * @return the running server.
     * @throws IOException if the tokenizer or the trace file cannot be opened.
     * @throws InterruptedException if interrupted while binding.
     * @throws IllegalArgumentException if a setting is invalid, or a port or endpoint cannot be bound.
     * @throws IllegalStateException if the JVM lacks {@value dev.tapedeck.build.JvmAccess#OPTION}.
     */
    public static Serve start(final ServeContext context) throws IOException, InterruptedException
    {
        JvmAccess.requireAgronaAccess();
        context.conclude();
        final boolean ownsTokenizer = null == context.tokenizer();
        final Tokenizer tokenizer = ownsTokenizer ? Tokenizer.open(context.tokenizerFile()) :
            context.tokenizer();
        final int instances = context.instances();
        // one rank per process (--data-parallel-rank): --data-parallel-size is then the fleet's, not this process's
        final int ranks = context.dataParallelRank() >= 0 ? 1 : context.dataParallelSize();
        final KvEventsSettings kvSettings = context.kvEvents();
        // engine e = instance * ranks + rank: its seed offset and its KV event endpoint offset
        final List<EngineConfig> configs = new ArrayList<>(instances * ranks);
        final List<List<EngineConfig>> rankConfigs = new ArrayList<>(instances);
        final List<KvEventStager> stagers = new ArrayList<>();
        final FaceResources resources = new FaceResources(tokenizer, ownsTokenizer);
        HttpServer server = null;
        try
        {
            for (int i = 0; i < instances; i++)
            {
                final List<EngineConfig> instanceRanks = new ArrayList<>(ranks);
                for (int r = 0; r < ranks; r++)
                {
                    final EngineConfig template = context.engine();
                    final EngineConfig config = template.copy()
                        .seed(template.seed() + (long)i * ranks + r)
                        .tokenSpace(tokenizer.vocabulary().randomTokenIds(), tokenizer.eosTokenId());
                    if (null != kvSettings)
                    {
                        final KvEventStager stager = new KvEventStager(kvSettings.ringBytes(),
                            context.nanoClock(), context.epochClock());
                        config.kvEventSink(stager);
                        stagers.add(stager);
                    }
                    if (null != context.kvTransfer())
                    {
                        resources.startKvConnector(context.kvTransfer(), i * ranks + r, config,
                            context.vllmVersion(), context.model());
                    }
                    instanceRanks.add(config.conclude());
                    configs.add(config);
                }
                rankConfigs.add(instanceRanks);
            }
            resources.recorder(context.capture().start("tapedeck-serve", context.model(), configs,
                context.nanoClock().nanoTime()));
            server = HttpServer.startRanks(context.serveOptions(), rankConfigs, tokenizer);
            final List<Integer> ports = server.ports();
            for (int e = 0; e < stagers.size(); e++)
            {
                final int instance = e / ranks;
                // one rank per process (--data-parallel-rank): that rank's events port and rank, as llm-d's pods
                final int rank = context.dataParallelRank() >= 0 ? context.dataParallelRank() : e % ranks;
                final int replica = context.dataParallelRank() >= 0 ? context.dataParallelRank() : e;
                // the llm-d topic names the instance's HTTP port, known only once bound; every rank of an instance
                // shares it, as vLLM's ranks share one --kv-events-config, and writes its rank in each batch
                final String topic = context.llmdKvEventsTopic() ?
                    KvEventsSettings.llmdTopic(ServeContext.podAddress(context.host()), ports.get(instance),
                        context.model()) :
                    kvSettings.topic().replace("{rank}", Integer.toString(rank));
                resources.publishers().add(kvSettings.forReplica(replica).dataParallelRank(rank).topic(topic),
                    stagers.get(e));
            }
            resources.publishers().start();
            return new Serve(context, server, resources, configs);
        }
        catch (final IOException | InterruptedException | RuntimeException ex)
        {
            if (null != server)
            {
                server.shutdown(0);
            }
            resources.close();
            throw ex;
        }
    }

    /**
     * @return the concluded settings this server runs with.
     */
    public ServeContext context()
    {
        return context;
    }

    /**
     * @return each instance's bound port, in instance order.
     */
    public List<Integer> ports()
    {
        return server.ports();
    }

    /**
     * @return each instance's base URL ({@code http://host:port}, no trailing slash), in instance order.
     */
    public List<URI> baseUrls()
    {
        return baseUrls;
    }

    /**
     * @return every engine's KV event PUB endpoint as bound, engine {@code instance * dataParallelSize + rank};
     *     empty when KV events are off.
     */
    public List<String> kvEventEndpoints()
    {
        return resources.publishers().publishers().stream().map(KvEventPublisher::endpoint).toList();
    }

    /**
     * @return every engine's KV event publisher, in engine order; empty when KV events are off.
     */
    public List<KvEventPublisher> kvEventPublishers()
    {
        return resources.publishers().publishers();
    }

    /**
     * @return every engine's concluded configuration, engine {@code instance * dataParallelSize + rank}.
     */
    public List<EngineConfig> engineConfigs()
    {
        return engineConfigs;
    }

    /**
     * @return the tokenizer every instance shares.
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
     * @return the HTTP server, for work on an engine's thread ({@link HttpServer#onEngine}).
     */
    public HttpServer httpServer()
    {
        return server;
    }

    /**
     * Stop accepting, let in-flight requests finish for up to {@code drainTimeoutNs}, abort the rest, then stop the
     * KV event publishers (so the last steps' events go out), close the trace and, if this server opened it, the
     * tokenizer. Later calls do nothing.
     *
     * @param drainTimeoutNs how long in-flight requests may finish.
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
     * Shut down at once: requests still in flight are aborted. Use {@link #shutdown(long)} to let them finish.
     */
    @Override
    public void close()
    {
        shutdown(0);
    }

    private static String urlHost(final String host)
    {
        final String connectable = "0.0.0.0".equals(host) || "*".equals(host) ? "127.0.0.1" : "::".equals(host) ?
            "::1" : host;
        return connectable.contains(":") && !connectable.startsWith("[") ? "[" + connectable + "]" : connectable;
    }
}
