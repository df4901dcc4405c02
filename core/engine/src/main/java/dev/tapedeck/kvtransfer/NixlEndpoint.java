package dev.tapedeck.kvtransfer;

import java.util.function.Consumer;

import dev.tapedeck.nixl.KvDataPlane;
import dev.tapedeck.nixl.KvDataPlaneSettings;
import dev.tapedeck.nixl.KvDataPlanes;
import dev.tapedeck.nixl.sidechannel.CompatibilityHash;
import dev.tapedeck.nixl.sidechannel.HandshakeCodec;
import dev.tapedeck.nixl.sidechannel.NixlAgentMetadata;
import dev.tapedeck.nixl.sidechannel.SideChannelServer;

/**
 * One engine's presence in a P/D deployment: its {@link KvDataPlane} (a pool of {@code kv-cache-blocks} blocks of
 * the model's KV bytes times the byte scale) and the NIXL side channel that serves its handshake
 * ({@code NixlHandshakePayload}: the compatibility hash and the {@code NixlAgentMetadata}) and takes notifications.
 * <p>
 * <b>Threading</b>: started and closed by the face that owns the engine; the plane and the side channel have their
 * own threads; {@link #drainSideChannelNotifications} may be called from any one thread.
 */
public final class NixlEndpoint implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(NixlEndpoint.class.getName());

    private final String engineId;
    private final KvDataPlane plane;
    private final SideChannelServer server;
    private final String compatibilityHash;
    private final double byteScale;

    private NixlEndpoint(final String engineId, final KvDataPlane plane, final SideChannelServer server,
        final String compatibilityHash, final double byteScale)
    {
        this.engineId = engineId;
        this.plane = plane;
        this.server = server;
        this.compatibilityHash = compatibilityHash;
        this.byteScale = byteScale;
    }

    /**
     * Open the data plane (failing over as {@link KvDataPlanes} does) and bind the side channel.
     *
     * @param settings this rank's settings ({@link KvTransferSettings#forRank}).
     * @param numBlocks the engine's KV blocks.
     * @param blockSize tokens per block.
     * @param compatibility what the handshake's compatibility hash is computed from.
     * @return the endpoint.
     * @throws IllegalStateException naming the address when the side-channel port is taken.
     */
    public static NixlEndpoint start(final KvTransferSettings settings, final int numBlocks, final int blockSize,
        final CompatibilityHash.Inputs compatibility)
    {
        final long realBlockBytes = settings.kvBytesPerToken() * blockSize;
        final double scale = settings.byteScale() > 0 ? settings.byteScale() :
            Math.min(1.0, (double)settings.poolMaxBytes() / ((double)numBlocks * realBlockBytes));
        final int blockBytes = (int)Math.max(Long.BYTES, Math.min(Integer.MAX_VALUE - 7,
            (long)(realBlockBytes * scale) / Long.BYTES * Long.BYTES));
        final KvDataPlanes.Opened opened = KvDataPlanes.open(new KvDataPlaneSettings(settings.dataPlane(),
            settings.engineId(), numBlocks, blockBytes, settings.sideChannelHost()));
        final KvDataPlane plane = opened.plane();
        final String hash = CompatibilityHash.compute(compatibility);
        final SideChannelServer server;
        try
        {
            server = SideChannelServer.start(settings.sideChannelHost(), settings.sideChannelPort(),
                HandshakeCodec.encodePayload(hash, NixlAgentMetadata.of(settings.engineId(), plane, blockSize)));
        }
        catch (final RuntimeException ex)
        {
            plane.close();
            throw new IllegalStateException("cannot bind the NIXL side channel on " + settings.sideChannelHost() + ":" +
                settings.sideChannelPort() + " (" + ex.getMessage() + "); pick another with --side-channel-port", ex);
        }
        final double actualScale = (double)blockBytes / realBlockBytes;
        LOG.log(System.Logger.Level.INFO, "KV transfer: engine {0}, {1} data plane, side channel {2}:{3}, " +
            "{4} blocks of {5} bytes (byte scale {6})", settings.engineId(), plane.kind(), settings.sideChannelHost(),
            Integer.toString(server.port()), numBlocks, blockBytes, actualScale);
        return new NixlEndpoint(settings.engineId(), plane, server, hash, actualScale);
    }

    /**
     * @return this engine's id ({@code remote_engine_id} to its decodes).
     */
    public String engineId()
    {
        return engineId;
    }

    /**
     * @return the data plane.
     */
    public KvDataPlane plane()
    {
        return plane;
    }

    /**
     * @return the side channel's host ({@code remote_host}).
     */
    public String sideChannelHost()
    {
        return server.host();
    }

    /**
     * @return the side channel's bound port ({@code remote_port}).
     */
    public int sideChannelPort()
    {
        return server.port();
    }

    /**
     * @return the compatibility hash this engine serves and, unless disabled, requires of its peers.
     */
    public String compatibilityHash()
    {
        return compatibilityHash;
    }

    /**
     * @return the fraction of the model's real KV bytes a block holds.
     */
    public double byteScale()
    {
        return byteScale;
    }

    /**
     * Hand over the notifications the side channel received (the {@code noop} plane's, and aborts').
     *
     * @param sink takes each.
     * @return how many.
     */
    public int drainSideChannelNotifications(final Consumer<String> sink)
    {
        return server.drainNotifications(sink);
    }

    /**
     * @param listener run on the side channel's thread after each notification it queues.
     */
    public void sideChannelNotificationListener(final Runnable listener)
    {
        server.notificationListener(listener);
    }

    @Override
    public void close()
    {
        server.close();
        plane.close();
    }
}
