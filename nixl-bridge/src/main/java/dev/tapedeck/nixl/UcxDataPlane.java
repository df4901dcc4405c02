package dev.tapedeck.nixl;

/**
 * The {@code ucx} plane: KV blocks move by UCX one-sided GETs, as NIXL's UCX backend moves them, through
 * {@code libkvbridge.so}. The pool is allocated by UCX ({@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}), so a
 * same-host read over shared memory needs nothing from the peer; over TCP, UCX emulates the GET with active messages
 * and the peer's I/O thread serves them. A read is N {@code ucp_get_nbx} straight into this pool at the local block
 * offsets plus a flush; the done-notification is an active message sent after the flush. Endpoints use
 * {@code UCP_ERR_HANDLING_MODE_PEER}, so a dead peer fails reads instead of hanging them; a read still in flight after
 * {@code -Dkvbridge.readTimeoutMs} (default 5000) fails with {@link KvTransferException}.
 * <p>
 * <b>Threading</b>: every method may be called from any thread; all UCX calls run on the plane's I/O thread
 * {@code kv-io-<engineId>} (worker in {@code UCS_THREAD_MODE_SERIALIZED}), which completes the futures.
 */
public final class UcxDataPlane extends NativeDataPlane
{
    /**
     * Opens a UCX context, worker and pool for this engine.
     *
     * @param settings the engine id (the UCX agent's name) and the pool's shape.
     * @throws KvTransferException when the bridge or UCX is unavailable, or the pool cannot be mapped.
     */
    public UcxDataPlane(final KvDataPlaneSettings settings)
    {
        super("ucx", KvBridgeNative.BACKEND_UCX, requireUcx(settings));
    }

    private static KvDataPlaneSettings requireUcx(final KvDataPlaneSettings settings)
    {
        final String reason = KvBridgeNative.unavailableReason();
        if (reason != null)
        {
            throw new KvTransferException("kvbridge unavailable: " + reason);
        }
        return settings;
    }
}
