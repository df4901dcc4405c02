package dev.tapedeck.nixl;

/**
 * The {@code ucx} plane: KV blocks move by UCX one-sided GETs, as NIXL's UCX backend moves them, through
 * {@code libkvbridge.so}. The pool is allocated by UCX ({@code ucp_mem_map} with {@code UCP_MEM_MAP_ALLOCATE}), so a
 * same-host read over shared memory needs nothing from the peer; over TCP, UCX emulates the GET with active messages
 * and the peer's I/O thread serves them. A read is N {@code ucp_get_nbx} straight into this pool at the local block
 * offsets plus a flush; the done-notification is an active message sent after the flush.
 * <p>
 * Dead peers ({@code -Dkvbridge.ucx.errorMode}): by default ({@code auto}) a peer whose pool this process can map
 * (same host, shared memory; reads are then plain memory copies a dead peer cannot hang) gets an endpoint without peer
 * failure detection, because in UCX 1.13 asking for it excludes shared memory and routes reads over TCP (measured
 * 1.3-2 GB/s instead of 16-20 GB/s). Any other peer gets {@code UCP_ERR_HANDLING_MODE_PEER} with an error callback,
 * so a killed peer fails its reads; without a transport that supports it, none. {@code peer} always asks for it
 * (refusing peers it cannot reach so), {@code none} never does. Either way a read or notification still in flight
 * after {@code -Dkvbridge.readTimeoutMs} (default 5000) fails with {@link KvTransferException}.
 * <p>
 * <b>Threading</b>: every method may be called from any thread; all UCX calls run on the plane's I/O thread
 * {@code kv-io-<engineId>} (worker in {@code UCS_THREAD_MODE_SERIALIZED}), which completes the futures.
 */
public final class UcxDataPlane extends NativeDataPlane
{
    /** System property: {@code auto} (default), {@code peer} or {@code none}, the endpoints' error handling. */
    public static final String ERROR_MODE_PROPERTY = "kvbridge.ucx.errorMode";

    /**
     * Opens a UCX context, worker and pool for this engine.
     *
     * @param settings the engine id (the UCX agent's name) and the pool's shape.
     * @throws KvTransferException when the bridge or UCX is unavailable, or the pool cannot be mapped.
     */
    public UcxDataPlane(final KvDataPlaneSettings settings)
    {
        super("ucx", KvBridgeNative.BACKEND_UCX | errorModeFlag(), requireUcx(settings));
    }

    private static int errorModeFlag()
    {
        final String mode = System.getProperty(ERROR_MODE_PROPERTY, "auto");
        switch (mode)
        {
            case "auto":
                return 0;
            case "peer":
                return KvBridgeNative.EP_ERR_PEER;
            case "none":
                return KvBridgeNative.EP_ERR_NONE;
            default:
                throw new KvTransferException("-D" + ERROR_MODE_PROPERTY + "=" + mode +
                    ": expected auto, peer or none");
        }
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
