package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

/**
 * A plane over {@code libkvbridge.so} ({@link KvBridgeNative}): the {@code ucx} and {@code nixl} planes differ only in
 * the shim's backend. One owner I/O thread per plane, {@code kv-io-<engineId>}, an Agrona {@link Agent}, makes every
 * native call: it opens the context and allocates the pool, runs the commands other threads queue (add or remove a
 * peer, post a read or a notification), progresses the worker, polls posted transfers (completing or failing their
 * futures, failing those older than {@code -Dkvbridge.readTimeoutMs}, default 5000), moves received notifications to
 * a queue {@link #drainNotifications} empties, and closes the context when the plane closes.
 * <p>
 * <b>Threading</b>: every public method may be called from any thread; futures complete on the I/O thread. The pool's
 * memory belongs to the native context: it must not be touched after {@link #close()}.
 */
abstract class NativeDataPlane implements KvDataPlane
{
    /** System property: how long a read or notification may take before its future fails, in milliseconds. */
    static final String READ_TIMEOUT_PROPERTY = "kvbridge.readTimeoutMs";

    private static final long DEFAULT_READ_TIMEOUT_MS = 5_000;
    private static final long OPEN_TIMEOUT_MS = 30_000;
    private static final int COMMAND_CAPACITY = 4_096;
    private static final int COMMANDS_PER_CYCLE = 64;
    private static final long MIN_PARK_NS = 1_000;
    private static final long MAX_PARK_NS = 100_000;
    private static final System.Logger LOG = System.getLogger(NativeDataPlane.class.getName());

    private final String kind;
    private final int backend;
    private final String engineId;
    private final int numBlocks;
    private final int blockBytes;
    private final long readTimeoutNs;
    private final ManyToOneConcurrentArrayQueue<Command> commands =
        new ManyToOneConcurrentArrayQueue<>(COMMAND_CAPACITY);
    private final NotificationQueue notifications = new NotificationQueue();
    private final Map<Long, RemotePeer> peers = new ConcurrentHashMap<>();
    private final AtomicLong peerGeneration = new AtomicLong();
    private final AgentRunner runner;
    private volatile boolean closed;
    private volatile KvPool pool;
    private volatile byte[] metadata;

    /** Owner-thread state. */
    private long ctx;
    private final List<Pending> pending = new ArrayList<>();

    private record Command(Runnable action, CompletableFuture<?> future)
    {
    }

    private record RemotePeer(String engineId, int numBlocks)
    {
    }

    private record Pending(long xfer, String what, int descriptors, long bytes, long startNanos, long postNanos,
        long deadlineNanos, CompletableFuture<PullResult> future)
    {
    }

    /**
     * Starts the I/O thread and opens the native context and pool on it.
     *
     * @param kind the plane's kind.
     * @param backend {@link KvBridgeNative#BACKEND_UCX} or {@link KvBridgeNative#BACKEND_NIXL}, with its flags.
     * @param settings the engine id, pool shape.
     * @throws KvTransferException when the context or pool cannot be opened.
     */
    NativeDataPlane(final String kind, final int backend, final KvDataPlaneSettings settings)
    {
        this.kind = kind;
        this.backend = backend;
        this.engineId = settings.engineId();
        this.numBlocks = settings.numBlocks();
        this.blockBytes = settings.blockBytes();
        this.readTimeoutNs = TimeUnit.MILLISECONDS.toNanos(Long.getLong(READ_TIMEOUT_PROPERTY,
            DEFAULT_READ_TIMEOUT_MS));
        this.runner = new AgentRunner(new BackoffIdleStrategy(1, 10, MIN_PARK_NS, MAX_PARK_NS), this::onAgentError,
            null, new IoAgent());
        AgentRunner.startOnThread(runner);
        final CompletableFuture<Void> opened = call(() ->
        {
            open();
            return null;
        });
        try
        {
            opened.get(OPEN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        catch (final ExecutionException ex)
        {
            close();
            throw new KvTransferException("cannot open the " + kind + " plane of " + engineId + ": " +
                ex.getCause().getMessage(), ex.getCause());
        }
        catch (final InterruptedException | TimeoutException ex)
        {
            close();
            if (ex instanceof InterruptedException)
            {
                Thread.currentThread().interrupt();
            }
            throw new KvTransferException("cannot open the " + kind + " plane of " + engineId + ": " + ex, ex);
        }
    }

    /** Runs on the I/O thread. */
    private void open()
    {
        ctx = KvBridgeNative.nOpen(engineId, backend);
        final long base = KvBridgeNative.nPoolAlloc(ctx, (long)numBlocks * blockBytes);
        final int perRegion = KvPool.blocksPerRegion(numBlocks, blockBytes);
        final ByteBuffer[] regions = new ByteBuffer[(numBlocks + perRegion - 1) / perRegion];
        for (int r = 0; r < regions.length; r++)
        {
            final int blocks = Math.min(perRegion, numBlocks - r * perRegion);
            regions[r] = KvBridgeNative.nPoolBuffer(base, (long)r * perRegion * blockBytes, (long)blocks * blockBytes);
        }
        pool = KvPool.wrap(regions, numBlocks, blockBytes);
        metadata = KvBridgeNative.nLocalMd(ctx);
    }

    @Override
    public String kind()
    {
        return kind;
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
     * @return the KVB1 blob: agent name (the engine id), the native transport's address, the pool's key, base and
     *     length.
     */
    @Override
    public byte[] agentMetadata()
    {
        return metadata.clone();
    }

    @Override
    public CompletableFuture<KvPeer> addPeer(final String remoteEngineId, final byte[] agentMetadata)
    {
        final Kvb1Metadata remote;
        try
        {
            remote = Kvb1Metadata.parse(agentMetadata);
            if (!remote.agent().equals(remoteEngineId))
            {
                throw new KvTransferException("agent metadata is for engine " + remote.agent() + ", not " +
                    remoteEngineId);
            }
            if (remote.length() <= 0 || remote.length() % blockBytes != 0)
            {
                throw new KvTransferException("the pool of " + remoteEngineId + " (" + remote.length() +
                    " bytes) is not a whole number of " + blockBytes + "-byte blocks");
            }
        }
        catch (final KvTransferException ex)
        {
            return CompletableFuture.failedFuture(ex);
        }
        final byte[] blob = agentMetadata.clone();
        return call(() ->
        {
            final int slot = KvBridgeNative.nLoadRemoteMd(ctx, blob);
            final long handle = (peerGeneration.incrementAndGet() << 32) | slot;
            peers.put(handle, new RemotePeer(remoteEngineId, (int)(remote.length() / blockBytes)));
            return new KvPeer(remoteEngineId, handle, remote.agent());
        });
    }

    @Override
    public CompletableFuture<PullResult> read(final KvPeer peer, final int[] remoteBlockIds, final int[] localBlockIds,
        final byte[] notification)
    {
        final long startNanos = System.nanoTime();
        final RemotePeer remote = peers.get(peer.handle());
        if (remote == null)
        {
            return CompletableFuture.failedFuture(new KvTransferException("no peer " + peer.engineId() +
                " (handle " + peer.handle() + ") on the " + kind + " plane of " + engineId));
        }
        if (remoteBlockIds.length != localBlockIds.length || remoteBlockIds.length == 0)
        {
            return CompletableFuture.failedFuture(new KvTransferException("a read from " + peer.engineId() +
                " needs as many local as remote blocks, at least one; got " + remoteBlockIds.length + " and " +
                localBlockIds.length));
        }
        final long[] remoteOffsets = new long[remoteBlockIds.length];
        final long[] localOffsets = new long[localBlockIds.length];
        for (int i = 0; i < remoteBlockIds.length; i++)
        {
            if (remoteBlockIds[i] < 0 || remoteBlockIds[i] >= remote.numBlocks() || localBlockIds[i] < 0 ||
                localBlockIds[i] >= numBlocks)
            {
                return CompletableFuture.failedFuture(new KvTransferException("read from " + peer.engineId() +
                    ": remote block " + remoteBlockIds[i] + " (of " + remote.numBlocks() + ") or local block " +
                    localBlockIds[i] + " (of " + numBlocks + ") is out of range"));
            }
            remoteOffsets[i] = (long)remoteBlockIds[i] * blockBytes;
            localOffsets[i] = (long)localBlockIds[i] * blockBytes;
        }
        final byte[] notif = notification.clone();
        final String what = "read of " + remoteBlockIds.length + " blocks from " + peer.engineId();
        final CompletableFuture<PullResult> future = new CompletableFuture<>();
        submit(future, () ->
        {
            final long xfer = KvBridgeNative.nPostRead(ctx, (int)peer.handle(), remoteOffsets, localOffsets,
                blockBytes, notif);
            final long postedNanos = System.nanoTime();
            pending.add(new Pending(xfer, what, remoteBlockIds.length, (long)remoteBlockIds.length * blockBytes,
                startNanos, postedNanos - startNanos, startNanos + readTimeoutNs, future));
        });
        return future;
    }

    @Override
    public CompletableFuture<Void> notify(final KvPeer peer, final byte[] notification)
    {
        final long startNanos = System.nanoTime();
        if (!peers.containsKey(peer.handle()))
        {
            return CompletableFuture.failedFuture(new KvTransferException("no peer " + peer.engineId() +
                " on the " + kind + " plane of " + engineId));
        }
        final byte[] notif = notification.clone();
        final CompletableFuture<PullResult> sent = new CompletableFuture<>();
        submit(sent, () ->
        {
            final long xfer = KvBridgeNative.nPostNotif(ctx, (int)peer.handle(), notif);
            pending.add(new Pending(xfer, "notification to " + peer.engineId(), 0, 0, startNanos,
                System.nanoTime() - startNanos, startNanos + readTimeoutNs, sent));
        });
        return sent.thenApply(result -> null);
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
        if (peers.remove(peer.handle()) != null)
        {
            call(() ->
            {
                KvBridgeNative.nInvalidateRemote(ctx, (int)peer.handle());
                return null;
            });
        }
    }

    /**
     * Stops the I/O thread, which fails what is still pending and closes the native context (endpoints, pool,
     * worker). Idempotent.
     */
    @Override
    public void close()
    {
        closed = true;
        runner.close();
    }

    private <T> CompletableFuture<T> call(final Callable<T> task)
    {
        final CompletableFuture<T> future = new CompletableFuture<>();
        submit(future, () ->
        {
            try
            {
                future.complete(task.call());
            }
            catch (final Exception ex)
            {
                future.completeExceptionally(ex);
            }
        });
        return future;
    }

    private void submit(final CompletableFuture<?> future, final Runnable action)
    {
        if (closed || !commands.offer(new Command(action, future)))
        {
            future.completeExceptionally(new KvTransferException("the " + kind + " plane of " + engineId +
                (closed ? " is closed" : " has " + COMMAND_CAPACITY + " commands queued")));
        }
    }

    private void onAgentError(final Throwable error)
    {
        LOG.log(System.Logger.Level.ERROR, "kv-io-" + engineId + " failed", error);
    }

    /** Runs on the I/O thread. */
    private void runCommand(final Command command)
    {
        try
        {
            command.action().run();
        }
        catch (final RuntimeException | LinkageError ex)
        {
            command.future().completeExceptionally(ex instanceof KvTransferException ? ex :
                new KvTransferException(kind + " plane of " + engineId + ": " + ex, ex));
        }
    }

    /** Runs on the I/O thread: progress, notifications, transfer completion and timeouts. */
    private int poll()
    {
        int work = KvBridgeNative.nProgress(ctx);
        final byte[] drained = KvBridgeNative.nDrainNotifs(ctx);
        if (drained != null && drained.length >= Integer.BYTES)
        {
            final ByteBuffer records = ByteBuffer.wrap(drained).order(ByteOrder.LITTLE_ENDIAN);
            while (records.remaining() >= Integer.BYTES)
            {
                final int length = records.getInt();
                notifications.offer(new String(drained, records.position(), length, StandardCharsets.UTF_8));
                records.position(records.position() + length);
                work++;
            }
            notifications.wake();
        }
        final long now = System.nanoTime();
        for (int i = pending.size() - 1; i >= 0; i--)
        {
            final Pending transfer = pending.get(i);
            final int status = KvBridgeNative.nXferStatus(ctx, transfer.xfer());
            if (status == KvBridgeNative.XFER_IN_PROGRESS && now - transfer.deadlineNanos() < 0)
            {
                continue;
            }
            final String error = status == KvBridgeNative.XFER_DONE ? null :
                status == KvBridgeNative.XFER_IN_PROGRESS ? "timed out after " +
                TimeUnit.NANOSECONDS.toMillis(readTimeoutNs) + " ms" : KvBridgeNative.nXferError(ctx, transfer.xfer());
            KvBridgeNative.nReleaseXfer(ctx, transfer.xfer());
            pending.remove(i);
            work++;
            if (error == null)
            {
                transfer.future().complete(new PullResult(transfer.bytes(), transfer.descriptors(),
                    transfer.postNanos(), System.nanoTime() - transfer.startNanos() - transfer.postNanos()));
            }
            else
            {
                transfer.future().completeExceptionally(new KvTransferException(transfer.what() + " on the " + kind +
                    " plane of " + engineId + " failed: " + error));
            }
        }
        return work;
    }

    /** Runs on the I/O thread when it stops. */
    private void shutdown()
    {
        final KvTransferException closing = new KvTransferException("the " + kind + " plane of " + engineId +
            " closed");
        for (Command command = commands.poll(); command != null; command = commands.poll())
        {
            command.future().completeExceptionally(closing);
        }
        for (final Pending transfer : pending)
        {
            if (ctx != 0)
            {
                KvBridgeNative.nReleaseXfer(ctx, transfer.xfer());
            }
            transfer.future().completeExceptionally(closing);
        }
        pending.clear();
        peers.clear();
        if (ctx != 0)
        {
            KvBridgeNative.nClose(ctx);
            ctx = 0;
        }
    }

    private final class IoAgent implements Agent
    {
        @Override
        public int doWork()
        {
            int work = commands.drain(NativeDataPlane.this::runCommand, COMMANDS_PER_CYCLE);
            if (ctx != 0)
            {
                work += poll();
            }
            return work;
        }

        @Override
        public void onClose()
        {
            shutdown();
        }

        @Override
        public String roleName()
        {
            return "kv-io-" + engineId;
        }
    }

    @Override
    public String toString()
    {
        return kind + " plane of " + engineId + " (" + numBlocks + " x " + blockBytes + " B, peers " +
            Arrays.toString(peers.values().stream().map(RemotePeer::engineId).toArray()) + ")";
    }
}
