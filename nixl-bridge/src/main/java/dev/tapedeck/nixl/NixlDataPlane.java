package dev.tapedeck.nixl;

/**
 * The {@code nixl} plane: the same JNI shim as {@link UcxDataPlane} with its NIXL backend, which opens
 * {@code libnixl_capi.so} (NIXL's C API; {@code -Dkvbridge.nixl.lib}, else {@code $NIXL_PREFIX/lib*},
 * {@code /opt/nvidia/nvda_nixl/lib*}, the default search path). The agent is named after the engine id and uses
 * NIXL's UCX backend; the pool is page-aligned DRAM registered with it; a read is one NIXL READ over per-block
 * descriptors carrying the notification, polled with {@code get_xfer_status}; notifications come from
 * {@code get_notifs}. The agent metadata is a KVB1 blob with NIXL's own metadata in the address slot.
 * <p>
 * <b>Threading</b>: every method may be called from any thread; all NIXL calls run on the plane's I/O thread
 * {@code kv-io-<engineId>}, which completes the futures.
 */
public final class NixlDataPlane extends NativeDataPlane
{
    /**
     * Creates a NIXL agent, its UCX backend and a registered pool for this engine.
     *
     * @param settings the engine id (the NIXL agent's name) and the pool's shape.
     * @throws KvTransferException when the bridge or libnixl_capi is unavailable, or the agent cannot start.
     */
    public NixlDataPlane(final KvDataPlaneSettings settings)
    {
        super("nixl", KvBridgeNative.BACKEND_NIXL, requireNixl(settings));
    }

    private static KvDataPlaneSettings requireNixl(final KvDataPlaneSettings settings)
    {
        final String reason = KvBridgeNative.nixlUnavailableReason();
        if (reason != null)
        {
            throw new KvTransferException("NIXL unavailable: " + reason);
        }
        return settings;
    }
}
