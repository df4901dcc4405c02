package dev.tapedeck.nixl;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The control-plane-only plane ({@code --kv-data-plane noop}), vllm-vcr's default: it moves no bytes and holds no
 * pool memory; reads complete at once with nothing moved, and the caller models the transfer time. Notifications
 * travel elsewhere (the side channel), so this plane never receives any.
 * <p>
 * Stateless apart from its placeholder pool; thread safe.
 */
public final class NoopDataPlane implements KvDataPlane
{
    private static final byte[] NO_METADATA = new byte[0];

    private final KvPool placeholder = KvPool.allocateDirect(1, Long.BYTES);

    @Override
    public String kind()
    {
        return "noop";
    }

    @Override
    public boolean movesBytes()
    {
        return false;
    }

    /**
     * @return a one-block placeholder: this plane keeps no KV bytes.
     */
    @Override
    public KvPool pool()
    {
        return placeholder;
    }

    @Override
    public byte[] agentMetadata()
    {
        return NO_METADATA.clone();
    }

    @Override
    public CompletableFuture<KvPeer> addPeer(final String remoteEngineId, final byte[] agentMetadata)
    {
        return CompletableFuture.completedFuture(new KvPeer(remoteEngineId, 0, ""));
    }

    @Override
    public CompletableFuture<PullResult> read(final KvPeer peer, final int[] remoteBlockIds, final int[] localBlockIds,
        final byte[] notification)
    {
        return CompletableFuture.completedFuture(new PullResult(0, remoteBlockIds.length, 0, 0));
    }

    @Override
    public CompletableFuture<Void> notify(final KvPeer peer, final byte[] notification)
    {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void notificationListener(final Runnable listener)
    {
        // notifications of the noop plane travel over the side channel
    }

    @Override
    public int drainNotifications(final Consumer<String> sink)
    {
        return 0;
    }

    @Override
    public void removePeer(final KvPeer peer)
    {
    }

    @Override
    public void close()
    {
    }
}
