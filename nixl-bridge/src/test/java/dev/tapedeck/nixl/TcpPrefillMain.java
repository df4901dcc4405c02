package dev.tapedeck.nixl;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import dev.tapedeck.nixl.sidechannel.HandshakeCodec;
import dev.tapedeck.nixl.sidechannel.NixlAgentMetadata;
import dev.tapedeck.nixl.sidechannel.SideChannelServer;

/**
 * The prefill of {@link TwoProcessTest}, run in a child JVM: a tcp plane whose blocks [2, 5, 9] hold request
 * {@code req-1}'s pattern, and a side channel serving its handshake. Prints {@code READY <side-channel port>}, then
 * {@code NOTIF plane <n>} / {@code NOTIF side <n>} for each notification, and exits once it has {@code args[1]} of
 * them (or after 30 s, with status 2).
 */
public final class TcpPrefillMain
{
    /** The compatibility hash both sides use. */
    public static final String HASH = "test-hash";
    /** Blocks in each pool. */
    public static final int NUM_BLOCKS = 16;
    /** Bytes per block. */
    public static final int BLOCK_BYTES = 4096;

    private TcpPrefillMain()
    {
    }

    /**
     * @param args engine id, notifications to wait for.
     * @throws InterruptedException when interrupted.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        final String engineId = args[0];
        final int expected = Integer.parseInt(args[1]);
        try (TcpDataPlane plane = new TcpDataPlane(new KvDataPlaneSettings("tcp", engineId, NUM_BLOCKS, BLOCK_BYTES,
            "127.0.0.1"));
            SideChannelServer server = SideChannelServer.start("127.0.0.1", 0,
                HandshakeCodec.encodePayload(HASH, NixlAgentMetadata.of(engineId, plane, 16))))
        {
            final int[] blocks = {2, 5, 9};
            for (int i = 0; i < blocks.length; i++)
            {
                KvBlockPattern.fill(plane.pool().block(blocks[i]), KvBlockPattern.seed("req-1", i));
            }
            System.out.println("READY " + server.port() + " " + new String(plane.agentMetadata(),
                StandardCharsets.UTF_8));
            System.out.flush();
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int received = 0;
            while (received < expected && System.nanoTime() < deadlineNs)
            {
                final int before = received;
                received += plane.drainNotifications(n -> System.out.println("NOTIF plane " + n));
                received += server.drainNotifications(n -> System.out.println("NOTIF side " + n));
                System.out.flush();
                if (before == received)
                {
                    Thread.sleep(5);
                }
            }
            if (received < expected)
            {
                System.out.println("TIMEOUT after " + received + " notifications");
                System.exit(2);
            }
        }
    }
}
