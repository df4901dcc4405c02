package dev.tapedeck.nixl;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Moves KV blocks between the {@link KvPool}s of two processes, the part of vLLM's NixlConnector that NIXL does: a
 * prefill exposes its pool ({@link #agentMetadata()}, served over the side channel); a decode loads that metadata
 * ({@link #addPeer}) and READs remote blocks straight into its own pool at its block offsets, and the prefill then
 * receives the decode's notification ({@link #drainNotifications}) and frees its blocks.
 * <p>
 * <b>Threading</b>: every method may be called from any thread. Work is done on the plane's own I/O thread (if it
 * has one) and results come back through the returned futures, completed on that thread; callers must not block it.
 */
public interface KvDataPlane extends AutoCloseable
{
    /**
     * @return the plane's name as {@code --kv-data-plane} spells it: {@code noop}, {@code tcp}, {@code ucx},
     *     {@code nixl}.
     */
    String kind();

    /**
     * @return false when the plane moves no bytes ({@code noop}): the transfer time is then modelled by the caller.
     */
    boolean movesBytes();

    /**
     * @return this process's block pool (the bytes a peer reads, or where reads land).
     */
    KvPool pool();

    /**
     * @return what a peer needs to reach this plane, NIXL's agent metadata: a KVB1 blob (worker address, packed
     *     rkey, base, length) for {@code ucx}, {@code host:port} for {@code tcp}, empty for {@code noop}.
     */
    byte[] agentMetadata();

    /**
     * Load a remote plane's metadata (NIXL's {@code loadRemoteMD}); the peer can then be read from.
     *
     * @param remoteEngineId the remote engine's id (NIXL's agent name).
     * @param agentMetadata the remote's {@link #agentMetadata()}.
     * @return the peer, or a future failed with {@link KvTransferException}.
     */
    CompletableFuture<KvPeer> addPeer(String remoteEngineId, byte[] agentMetadata);

    /**
     * READ remote blocks into local blocks, one block each, then deliver {@code notification} to the peer (NIXL's
     * READ with a notification message, delivered after the transfer completes).
     *
     * @param peer a peer from {@link #addPeer}.
     * @param remoteBlockIds blocks of the remote pool, in order.
     * @param localBlockIds where each lands in this pool; as many as {@code remoteBlockIds}.
     * @param notification bytes the peer receives once the read is done; empty for none.
     * @return the transfer's outcome, or a future failed with {@link KvTransferException}.
     */
    CompletableFuture<PullResult> read(KvPeer peer, int[] remoteBlockIds, int[] localBlockIds, byte[] notification);

    /**
     * Deliver a notification without a transfer (NIXL's {@code genNotif}: a full prefix hit, an abort).
     *
     * @param peer a peer from {@link #addPeer}.
     * @param notification the bytes.
     * @return done when sent, or failed with {@link KvTransferException}.
     */
    CompletableFuture<Void> notify(KvPeer peer, byte[] notification);

    /**
     * @param listener run on the plane's thread after each notification is queued, so its consumer can be woken to
     *     {@link #drainNotifications} (a plane that receives none may ignore it).
     */
    void notificationListener(Runnable listener);

    /**
     * Hand over the notifications received since the last call (NIXL's {@code getNotifs}), oldest first.
     *
     * @param sink takes each notification, decoded as UTF-8.
     * @return how many were handed over.
     */
    int drainNotifications(Consumer<String> sink);

    /**
     * Forget a peer (NIXL's {@code invalidateRemoteMD}); later reads from it fail.
     *
     * @param peer the peer.
     */
    void removePeer(KvPeer peer);

    /**
     * Stop the plane and release its pool.
     */
    @Override
    void close();
}
