package dev.tapedeck.nixl;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

/**
 * The {@code tcp} plane: KV blocks over plain TCP with Java NIO, for two processes without UCX. Its agent metadata is
 * the UTF-8 {@code host:port} it listens on. A decode keeps one data connection per peer and sends a request per READ
 * ({@link TcpWire}: the remote block ids and the notification); the prefill answers with the blocks' bytes in one
 * gathering write of its {@link KvPool#block} views, and the decode scatters them straight into its own pool at the
 * local blocks' views (no landing buffer). The prefill takes a request whose answer it wrote in full as the
 * notification ({@link #drainNotifications}); {@link #notify} is a request with no blocks.
 * <p>
 * A read not done within the read timeout (5 s by default) fails with {@link KvTransferException}, and so do the reads
 * queued behind it on the same connection, which is then closed; a peer that closes the connection fails its reads at
 * once; the next read from that peer connects again.
 * <p>
 * <b>Threading</b>: every public method may be called from any thread. All socket work happens on the plane's one
 * I/O thread, {@code kv-io-<engineId>}: an Agrona {@link Agent} run by an {@link AgentRunner}, polling a non-blocking
 * NIO {@link Selector} (it sleeps in {@code select} when idle). Other threads hand it commands through a queue and
 * get {@link CompletableFuture}s that it completes; their callbacks run on it, so they must not block.
 */
public final class TcpDataPlane implements KvDataPlane
{
    /** The default read timeout, in milliseconds (vcr's and vLLM's 5 s). */
    public static final int DEFAULT_READ_TIMEOUT_MS = 5_000;

    private static final System.Logger LOG = System.getLogger(TcpDataPlane.class.getName());
    private static final long IDLE_SELECT_MS = 10;

    private final KvDataPlaneSettings settings;
    private final KvPool pool;
    private final long readTimeoutNs;
    private final int readTimeoutMs;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final byte[] agentMetadata;
    private final ConcurrentLinkedQueue<Command> commands = new ConcurrentLinkedQueue<>();
    private final NotificationQueue notifications = new NotificationQueue();
    private final ConcurrentHashMap<Long, InetSocketAddress> peers = new ConcurrentHashMap<>();
    private final AtomicLong nextPeerHandle = new AtomicLong(1);
    private final AgentRunner runner;
    private volatile boolean closed;
    private volatile Thread ioThread;
    /** The decode's connections, by peer handle; I/O thread only. */
    private final Map<Long, TcpPullConnection> outbound = new HashMap<>();
    /** The prefill's accepted connections; I/O thread only. */
    private final List<TcpServeConnection> inbound = new ArrayList<>();

    /**
     * Open a plane with the default read timeout.
     *
     * @param settings the engine id, pool shape and the host to listen on.
     * @throws KvTransferException when it cannot listen on {@code settings.host()}.
     */
    public TcpDataPlane(final KvDataPlaneSettings settings)
    {
        this(settings, DEFAULT_READ_TIMEOUT_MS);
    }

    /**
     * Allocate the pool, listen on {@code settings.host()} at an ephemeral port and start the I/O thread.
     *
     * @param settings the engine id, pool shape and the host to listen on.
     * @param readTimeoutMs how long a read may take, in milliseconds.
     * @throws KvTransferException when it cannot listen on {@code settings.host()}.
     */
    public TcpDataPlane(final KvDataPlaneSettings settings, final int readTimeoutMs)
    {
        if (readTimeoutMs <= 0)
        {
            throw new IllegalArgumentException("readTimeoutMs must be positive, got " + readTimeoutMs);
        }
        this.settings = settings;
        this.readTimeoutMs = readTimeoutMs;
        this.readTimeoutNs = TimeUnit.MILLISECONDS.toNanos(readTimeoutMs);
        this.pool = KvPool.allocateDirect(settings.numBlocks(), settings.blockBytes());
        Selector openedSelector = null;
        ServerSocketChannel openedServer = null;
        try
        {
            openedSelector = Selector.open();
            openedServer = ServerSocketChannel.open();
            openedServer.bind(new InetSocketAddress(settings.host(), 0));
            openedServer.configureBlocking(false);
            openedServer.register(openedSelector, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException | RuntimeException ex)
        {
            closeQuietly(openedServer);
            closeQuietly(openedSelector);
            throw new KvTransferException("tcp plane: cannot listen on " + settings.host() + ": " + ex, ex);
        }
        this.selector = openedSelector;
        this.server = openedServer;
        this.agentMetadata = (settings.host() + ":" + server.socket().getLocalPort())
            .getBytes(StandardCharsets.UTF_8);
        this.runner = new AgentRunner(new SelectorIdleStrategy(), ex -> LOG.log(System.Logger.Level.ERROR,
            "tcp plane " + settings.engineId() + ": " + ex.getMessage(), ex), null, new IoAgent());
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread thread = new Thread(r, "kv-io-" + settings.engineId());
            thread.setDaemon(true);
            return thread;
        });
    }

    @Override
    public String kind()
    {
        return "tcp";
    }

    @Override
    public boolean movesBytes()
    {
        return true;
    }

    @Override
    public KvPool pool()
    {
        return pool;
    }

    /**
     * @return the UTF-8 {@code host:port} this plane listens on.
     */
    @Override
    public byte[] agentMetadata()
    {
        return agentMetadata.clone();
    }

    /**
     * @return the port this plane listens on.
     */
    public int port()
    {
        return server.socket().getLocalPort();
    }

    /**
     * No I/O: the connection is opened by the first read.
     *
     * @param remoteEngineId the remote engine's id.
     * @param remoteMetadata the remote's UTF-8 {@code host:port}.
     * @return the peer, or a future failed with {@link KvTransferException} when the metadata is no
     *     {@code host:port}.
     */
    @Override
    public CompletableFuture<KvPeer> addPeer(final String remoteEngineId, final byte[] remoteMetadata)
    {
        final String address = new String(remoteMetadata, StandardCharsets.UTF_8);
        final int colon = address.lastIndexOf(':');
        final int port;
        try
        {
            port = colon <= 0 ? -1 : Integer.parseInt(address.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            return failed("tcp plane: agent metadata of " + remoteEngineId + " is not host:port: '" + address + "'");
        }
        if (port < 1 || port > 65_535)
        {
            return failed("tcp plane: agent metadata of " + remoteEngineId + " is not host:port: '" + address + "'");
        }
        final long handle = nextPeerHandle.getAndIncrement();
        peers.put(handle, InetSocketAddress.createUnresolved(address.substring(0, colon), port));
        return CompletableFuture.completedFuture(new KvPeer(remoteEngineId, handle, address));
    }

    @Override
    public CompletableFuture<PullResult> read(final KvPeer peer, final int[] remoteBlockIds, final int[] localBlockIds,
        final byte[] notification)
    {
        final long submitNs = System.nanoTime();
        if (remoteBlockIds.length != localBlockIds.length)
        {
            return failed("tcp read from " + peer.engineId() + ": " + remoteBlockIds.length + " remote blocks but " +
                localBlockIds.length + " local ones");
        }
        final ByteBuffer[] targets = new ByteBuffer[localBlockIds.length];
        for (int i = 0; i < localBlockIds.length; i++)
        {
            if (localBlockIds[i] < 0 || localBlockIds[i] >= pool.numBlocks())
            {
                return failed("tcp read from " + peer.engineId() + ": local block " + localBlockIds[i] +
                    " is not in a pool of " + pool.numBlocks());
            }
            targets[i] = pool.block(localBlockIds[i]);
        }
        final TcpTransfer transfer = new TcpTransfer(peer, TcpWire.request(remoteBlockIds, notification), targets,
            (long)targets.length * pool.blockBytes(), submitNs, submitNs + readTimeoutNs);
        submit(new Command(transfer.future, () -> startTransfer(transfer)));
        return transfer.future;
    }

    @Override
    public CompletableFuture<Void> notify(final KvPeer peer, final byte[] notification)
    {
        return read(peer, new int[0], new int[0], notification).thenApply(result -> null);
    }

    @Override
    public void notificationListener(final Runnable listener)
    {
        notifications.listener(listener);
    }

    @Override
    public int drainNotifications(final Consumer<String> sink)
    {
        return notifications.drain(sink);
    }

    @Override
    public void removePeer(final KvPeer peer)
    {
        if (null != peers.remove(peer.handle()))
        {
            submit(new Command(new CompletableFuture<Void>(), () -> dropConnection(peer.handle(),
                "peer " + peer.engineId() + " was removed")));
        }
    }

    /**
     * Stop the I/O thread (waiting for it, unless called on it), close every connection and the listener; pending
     * reads fail. Later calls do nothing.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        selector.wakeup();
        if (Thread.currentThread() == ioThread)
        {
            // a future's callback on the I/O thread: that thread cannot wait for itself, so another one does
            final Thread closer = new Thread(this::stop, "kv-io-close-" + settings.engineId());
            closer.setDaemon(true);
            closer.start();
            return;
        }
        stop();
    }

    private void stop()
    {
        runner.close();
        failQueuedCommands();
    }

    private void submit(final Command command)
    {
        if (closed)
        {
            command.future.completeExceptionally(closedException());
            return;
        }
        commands.add(command);
        selector.wakeup();
        if (closed)
        {
            failQueuedCommands();
        }
    }

    private void failQueuedCommands()
    {
        Command command;
        while (null != (command = commands.poll()))
        {
            command.future.completeExceptionally(closedException());
        }
    }

    private KvTransferException closedException()
    {
        return new KvTransferException("tcp plane " + settings.engineId() + " is closed");
    }

    private static <T> CompletableFuture<T> failed(final String message)
    {
        return CompletableFuture.failedFuture(new KvTransferException(message));
    }

    private static void closeQuietly(final AutoCloseable closeable)
    {
        if (null != closeable)
        {
            try
            {
                closeable.close();
            }
            catch (final Exception ignored)
            {
                // closing on a failure path: the first error is the one reported
            }
        }
    }

    private void startTransfer(final TcpTransfer transfer)
    {
        final long handle = transfer.peer.handle();
        final InetSocketAddress address = peers.get(handle);
        if (null == address)
        {
            transfer.future.completeExceptionally(new KvTransferException("tcp read from " +
                transfer.peer.engineId() + ": unknown peer (removed, or not from this plane's addPeer)"));
            return;
        }
        TcpPullConnection connection = outbound.get(handle);
        if (null == connection)
        {
            try
            {
                connection = new TcpPullConnection(transfer.peer, address, selector,
                    closed -> outbound.remove(closed.peer().handle(), closed));
            }
            catch (final IOException | RuntimeException ex)
            {
                transfer.future.completeExceptionally(new KvTransferException("tcp read from " +
                    transfer.peer.engineId() + ": cannot connect to " + transfer.peer.address() + ": " + ex, ex));
                return;
            }
            outbound.put(handle, connection);
        }
        connection.enqueue(transfer);
    }

    private void dropConnection(final long handle, final String reason)
    {
        final TcpPullConnection connection = outbound.remove(handle);
        if (null != connection)
        {
            connection.failAll(reason);
        }
    }

    private final class IoAgent implements Agent
    {
        private long nextTimeoutCheckNs;

        @Override
        public void onStart()
        {
            ioThread = Thread.currentThread();
            nextTimeoutCheckNs = System.nanoTime();
        }

        @Override
        public String roleName()
        {
            return "kv-io-" + settings.engineId();
        }

        @Override
        public int doWork() throws IOException
        {
            int work = 0;
            Command command;
            while (null != (command = commands.poll()))
            {
                try
                {
                    command.action.run();
                }
                catch (final RuntimeException ex)
                {
                    command.future.completeExceptionally(new KvTransferException("tcp plane " +
                        settings.engineId() + ": " + ex, ex));
                }
                work++;
            }
            selector.selectNow();
            final Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
            while (keys.hasNext())
            {
                final SelectionKey key = keys.next();
                keys.remove();
                work++;
                if (!key.isValid())
                {
                    continue;
                }
                final Object attachment = key.attachment();
                if (attachment instanceof TcpPullConnection connection)
                {
                    connection.onReady(key);
                }
                else if (attachment instanceof TcpServeConnection connection)
                {
                    connection.onReady(key);
                }
                else if (key.isAcceptable())
                {
                    accept();
                }
            }
            final long nowNs = System.nanoTime();
            if (nowNs - nextTimeoutCheckNs >= 0)
            {
                nextTimeoutCheckNs = nowNs + TimeUnit.MILLISECONDS.toNanos(1);
                checkTimeouts(nowNs);
            }
            return work;
        }

        @Override
        public void onClose()
        {
            for (final TcpPullConnection connection : new ArrayList<>(outbound.values()))
            {
                connection.failAll("tcp plane " + settings.engineId() + " is closed");
            }
            outbound.clear();
            for (final TcpServeConnection connection : new ArrayList<>(inbound))
            {
                connection.close();
            }
            closeQuietly(server);
            closeQuietly(selector);
            failQueuedCommands();
        }
    }

    private void accept() throws IOException
    {
        SocketChannel channel;
        while (null != (channel = server.accept()))
        {
            try
            {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                inbound.add(new TcpServeConnection(channel, selector, pool, notifications::add, inbound::remove,
                    settings.engineId()));
            }
            catch (final IOException ex)
            {
                closeQuietly(channel);
                LOG.log(System.Logger.Level.WARNING, "tcp plane {0}: dropped an incoming connection: {1}",
                    settings.engineId(), ex.toString());
            }
        }
    }

    private void checkTimeouts(final long nowNs)
    {
        for (final TcpPullConnection connection : new ArrayList<>(outbound.values()))
        {
            final TcpTransfer head = connection.oldest();
            if (null != head && nowNs - head.deadlineNs > 0)
            {
                connection.failAll("not done within " + readTimeoutMs + " ms");
            }
        }
    }

    /**
     * Sleeps in {@link Selector#select(long)} when a duty cycle did nothing, so an idle plane costs no CPU; a command
     * or a ready socket wakes it.
     */
    private final class SelectorIdleStrategy implements IdleStrategy
    {
        @Override
        public void idle(final int workCount)
        {
            if (workCount <= 0)
            {
                idle();
            }
        }

        @Override
        public void idle()
        {
            try
            {
                if (selector.isOpen() && commands.isEmpty())
                {
                    selector.select(IDLE_SELECT_MS);
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.log(System.Logger.Level.DEBUG, "tcp plane select: {0}", ex.toString());
            }
        }

        @Override
        public void reset()
        {
        }
    }

    /**
     * A command for the I/O thread.
     *
     * @param future failed if the plane closes before the command runs.
     * @param action what to do, on the I/O thread.
     */
    private record Command(CompletableFuture<?> future, Runnable action)
    {
    }
}
