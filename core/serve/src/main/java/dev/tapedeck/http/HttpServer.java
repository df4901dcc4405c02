package dev.tapedeck.http;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.GlobalEventExecutor;
import org.agrona.concurrent.NanoClock;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.net.LoopThreads;
import dev.tapedeck.net.Transport;
import dev.tapedeck.tokens.Tokenizer;

/**
 * {@code tapedeck serve}: N independent simulated vLLM replicas, each on its own event loop with its own port, metrics
 * and seed, and each with one engine per data-parallel rank (all on the replica's loop). The HTTP child channels of a
 * replica are registered on the replica's loop, so a token becomes an SSE write with no thread hop. Native epoll when
 * available (sub-millisecond timers), NIO otherwise.
 * <p>
 * Start with {@link #start}; {@link #shutdown} drains and stops. Thread safe for those two calls.
 */
public final class HttpServer implements AutoCloseable
{
    static final String CODEC = "http";
    /** Threads that prepare large request bodies: half the cores, at least one. */
    private static final int PREPARER_THREADS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    /** Large bodies waiting for a preparer beyond which new ones get 503 (each connection has one at most). */
    private static final int PREPARER_QUEUE = 4096;
    private static final System.Logger LOG = System.getLogger(HttpServer.class.getName());

    private final MultiThreadIoEventLoopGroup group;
    private final List<Instance> instances;
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final ConnectionGuard.Census census;
    /** Parses and tokenizes large bodies off the event loops ({@link CompletionAdmission#OFFLOAD_BODY_BYTES}). */
    private final java.util.concurrent.ThreadPoolExecutor preparer = new java.util.concurrent.ThreadPoolExecutor(
        PREPARER_THREADS, PREPARER_THREADS, 30, TimeUnit.SECONDS,
        new java.util.concurrent.ArrayBlockingQueue<>(PREPARER_QUEUE), task ->
        {
            final Thread thread = new Thread(task, "tapedeck-admission");
            thread.setDaemon(true);
            return thread;
        });
    private final ServeOptions options;
    /** The TLS context every connection's handler comes from, or null for plain HTTP. */
    private final io.netty.handler.ssl.SslContext tls;
    private volatile boolean stopped;

    private HttpServer(final MultiThreadIoEventLoopGroup group, final List<Instance> instances,
        final ServeOptions options, final io.netty.handler.ssl.SslContext tls)
    {
        this.group = group;
        this.instances = instances;
        this.options = options;
        this.tls = tls;
        census = new ConnectionGuard.Census(options.nanoClock());
        preparer.allowCoreThreadTimeOut(true);
    }

    /**
     * Bind every instance, each with its data-parallel ranks.
     *
     * @param options face settings.
     * @param rankConfigs per instance, one concluded engine config per data-parallel rank.
     * @param tokenizer shared tokenizer.
     * @return the running server.
     * @throws InterruptedException if interrupted while binding.
     */
    public static HttpServer startRanks(final ServeOptions options, final List<List<EngineConfig>> rankConfigs,
        final Tokenizer tokenizer) throws InterruptedException
    {
        if (rankConfigs.size() != options.instances())
        {
            throw new IllegalArgumentException("expected engine configs for " + options.instances() +
                " instances, got " + rankConfigs.size());
        }
        final Transport transport = options.transport();
        final IoHandlerFactory ioFactory = transport.ioHandlerFactory();
        final Class<? extends ServerChannel> channelClass = transport.serverChannel();
        final int threads = Math.min(options.instances(), Runtime.getRuntime().availableProcessors());
        final io.netty.handler.ssl.SslContext tls = options.tls().serverContext(); // a bad certificate: before loops
        final MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(threads,
            new LoopThreads("tapedeck-http"), ioFactory);
        final List<Instance> instances = new ArrayList<>(options.instances());
        final HttpServer server = new HttpServer(group, instances, options, tls);
        final long runStartNs = options.nanoClock().nanoTime();
        try
        {
            for (int i = 0; i < options.instances(); i++)
            {
                final EventLoop loop = group.next();
                final Instance instance = new Instance(i, loop, options, rankConfigs.get(i), tokenizer);
                instances.add(instance);

                final int port = 0 == options.port() ? 0 : options.port() + i;
                final ServerBootstrap bootstrap = new ServerBootstrap()
                    .group(loop, loop)
                    .channel(channelClass)
                    .option(ChannelOption.SO_BACKLOG, 4096)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(server.initializer(instance));
                if (options.socketSendBufferBytes() > 0)
                {
                    bootstrap.childOption(ChannelOption.SO_SNDBUF, options.socketSendBufferBytes());
                }
                final Channel channel = bind(bootstrap, options.host(), port);
                // after Netty's acceptor (added when the channel registered), which passes accept failures on
                channel.pipeline().addLast("accept-errors", server.census.acceptErrors());
                instance.serverChannel(channel, bootstrap);
                // on the loop that accepts, at once: a fault due at t=0 holds from the first request
                loop.submit(() ->
                {
                    instance.faults().startSchedule(runStartNs);
                    instance.lifecycle().start();
                }).sync();
            }
        }
        catch (final InterruptedException | RuntimeException ex)
        {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw ex;
        }
        if (Transport.NIO == transport)
        {
            LOG.log(System.Logger.Level.INFO, "native transports unavailable ({0}); using NIO (millisecond timers)",
                String.valueOf(io.netty.channel.epoll.Epoll.unavailabilityCause()));
        }
        return server;
    }

    /**
     * @return the bound server channel.
     * @throws IllegalStateException in one line naming the address and port when it cannot be bound.
     */
    private static Channel bind(final ServerBootstrap bootstrap, final String host, final int port)
        throws InterruptedException
    {
        try
        {
            return bootstrap.bind(host, port).sync().channel();
        }
        catch (final InterruptedException ex)
        {
            throw ex;
        }
        catch (final Exception ex) // sync() rethrows the bind failure as it is: a BindException or a native one
        {
            final String reason = String.valueOf(ex.getMessage());
            throw new IllegalStateException("cannot listen on " + host + ":" + port + ": " +
                (reason.contains("Address already in use") ? "the address is already in use (another server on " +
                "this port? choose one with --port)" : reason), ex);
        }
    }

    private ChannelInitializer<SocketChannel> initializer(final Instance instance)
    {
        final CompletionAdmission admission = new CompletionAdmission(instance, preparer);
        final HttpDecoderConfig decoderConfig = decoderConfig();
        return new ChannelInitializer<>()
        {
            @Override
            protected void initChannel(final SocketChannel channel)
            {
                channels.add(channel);
                instance.connected(channel);
                addHandlers(channel.pipeline(), decoderConfig, instance, admission, census);
                if (null != tls)
                {
                    channel.pipeline().addFirst("tls", tls.newHandler(channel.alloc()));
                }
            }
        };
    }

    /**
     * @return the HTTP decoder limits of every connection.
     */
    static HttpDecoderConfig decoderConfig()
    {
        return new HttpDecoderConfig()
            .setMaxInitialLineLength(8192)
            .setMaxHeaderSize(32 * 1024)
            .setMaxChunkSize(64 * 1024);
    }

    /**
     * Install the handlers of one HTTP connection of an instance: its limits ({@link ConnectionGuard}, unless
     * {@link ConnectionLimits#NONE}), the codec, the body-size limit and the OpenAI handler. Package-private so that
     * unit tests build the same pipeline on an {@code EmbeddedChannel}.
     *
     * @param pipeline the connection's pipeline.
     * @param decoderConfig the decoder limits, from {@link #decoderConfig()}.
     * @param instance the instance the connection belongs to.
     * @param admission the instance's request admission.
     * @param census the server's open connections (for {@code --max-connections}).
     */
    static void addHandlers(final ChannelPipeline pipeline, final HttpDecoderConfig decoderConfig,
        final Instance instance, final CompletionAdmission admission, final ConnectionGuard.Census census)
    {
        final ConnectionLimits limits = instance.options().connectionLimits();
        final ConnectionGuard guard = ConnectionLimits.NONE.equals(limits) ? null : new ConnectionGuard(limits, census,
            instance.connectionSweep());
        if (null != guard)
        {
            pipeline.addLast("guard", guard.bytes());
        }
        pipeline.addLast(CODEC, new HttpServerCodec(decoderConfig));
        if (null != guard)
        {
            pipeline.addLast("exchanges", guard.exchanges());
        }
        pipeline
            .addLast("aggregator", new BodyLimitAggregator(instance.options().maxRequestBodyBytes()))
            .addLast("openai", new OpenAiHandler(instance, admission));
    }

    /**
     * Run a task on an instance's event loop against its first (rank 0) engine and wait for its result. For tests and
     * tools that need to look at an engine; not for the request path.
     *
     * @param instance instance index.
     * @param task what to run against the engine.
     * @param <T> result type.
     * @return the task's result.
     * @throws Exception if the task fails or the wait is interrupted.
     */
    public <T> T onEngine(final int instance, final java.util.function.Function<dev.tapedeck.engine.Engine, T> task)
        throws Exception
    {
        return onEngine(instance, 0, task);
    }

    /**
     * As {@link #onEngine(int, java.util.function.Function)}, for one data-parallel rank of an instance.
     *
     * @param instance instance index.
     * @param rank data-parallel rank.
     * @param task what to run against the rank's engine.
     * @param <T> result type.
     * @return the task's result.
     * @throws Exception if the task fails or the wait is interrupted.
     */
    public <T> T onEngine(final int instance, final int rank,
        final java.util.function.Function<dev.tapedeck.engine.Engine, T> task) throws Exception
    {
        final Instance target = instances.get(instance);
        return target.loop().submit(() -> task.apply(target.rank(rank).engine())).get();
    }

    /**
     * @return the port each instance listens on, in instance order.
     */
    public List<Integer> ports()
    {
        final List<Integer> ports = new ArrayList<>(instances.size());
        for (final Instance instance : instances)
        {
            ports.add(instance.boundPort());
        }
        return ports;
    }

    /**
     * Stop taking requests (new ones get 503), let in-flight requests finish for up to {@code drainTimeoutNs}, abort
     * what is left, close every connection and stop the event loops.
     *
     * @param drainTimeoutNs how long to let requests finish.
     * @return requests aborted because they were still in flight at the end of the drain.
     */
    public int shutdown(final long drainTimeoutNs)
    {
        if (stopped)
        {
            return 0;
        }
        stopped = true;
        int aborted = 0;
        try
        {
            for (final Instance instance : instances)
            {
                instance.loop().submit(() ->
                {
                    instance.beginShutdown();
                    instance.lifecycle().onShutdown(); // held requests are refused, frozen ones may finish
                }).get();
            }
            final NanoClock clock = options.nanoClock();
            final long deadline = clock.nanoTime() + drainTimeoutNs;
            while (clock.nanoTime() - deadline < 0 && inFlight() > 0)
            {
                Thread.sleep(10);
            }
            aborted = inFlight();
            for (final Instance instance : instances)
            {
                instance.loop().submit(instance::abortAll).get();
                instance.serverChannel().close().sync();
            }
            channels.close().await(2, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        catch (final ExecutionException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "error during shutdown", ex.getCause());
        }
        finally
        {
            preparer.shutdownNow();
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        return aborted;
    }

    private int inFlight() throws InterruptedException, ExecutionException
    {
        int total = 0;
        for (final Instance instance : instances)
        {
            total += instance.loop().submit(instance::requestsInFlight).get();
        }
        return total;
    }

    @Override
    public void close()
    {
        final int aborted = shutdown(options.shutdownTimeoutNs());
        if (aborted > 0)
        {
            LOG.log(System.Logger.Level.WARNING, "shutdown aborted {0} request(s) still in flight", aborted);
        }
    }
}
