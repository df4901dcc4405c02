package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Reported, not gating: GB/s (1e9 B/s) of a 256 x 128 KiB read through the {@code ucx} plane against a Java copy of
 * the same bytes between two direct buffers, in the same run. Usage: {@code KvPullBench same} (two planes in this
 * JVM) or {@code KvPullBench two <UCX_TLS>} (the prefill in a child JVM with that transport); the system property
 * {@code kvbridge.lib} names the library when run from test classes. Single-threaded driver.
 */
public final class KvPullBench
{
    private static final int BLOCKS = 256;
    private static final int BLOCK_BYTES = 128 * 1024;
    private static final int WARMUP = 5;
    private static final int RUNS = 30;

    private KvPullBench()
    {
    }

    /**
     * @param args {@code same} or {@code two <UCX_TLS>}.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final String reason = KvBridgeNative.unavailableReason();
        if (reason != null)
        {
            System.out.println("kvbridge unavailable: " + reason);
            return;
        }
        System.out.println(KvBridgeNative.version() + ", mode " + String.join(" ", args) + ", error mode " +
            System.getProperty(UcxDataPlane.ERROR_MODE_PROPERTY, "auto"));
        final int[] remote = new int[BLOCKS];
        final int[] local = new int[BLOCKS];
        for (int i = 0; i < BLOCKS; i++)
        {
            remote[i] = BLOCKS - 1 - i;
            local[i] = i;
        }
        try (UcxDataPlane decode = new UcxDataPlane(settings("bench-decode")))
        {
            if ("two".equals(args[0]))
            {
                try (ChildJvm child = ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty()),
                    Map.of("UCX_TLS", args[1], "UCX_NET_DEVICES", "lo", "UCX_WARN_UNUSED_ENV_VARS", "n"), "prefill",
                    "ucx", "bench-prefill", Integer.toString(BLOCKS), Integer.toString(BLOCK_BYTES), "bench", "0"))
                {
                    final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", 30_000));
                    measure(decode, decode.addPeer("bench-prefill", metadata).get(30, TimeUnit.SECONDS), remote,
                        local);
                    child.closeStdin();
                    child.waitFor(30_000);
                }
            }
            else
            {
                try (UcxDataPlane prefill = new UcxDataPlane(settings("bench-prefill")))
                {
                    KvBlockPattern.fill(prefill.pool().block(0), KvBlockPattern.seed("bench", 0));
                    measure(decode, decode.addPeer("bench-prefill", prefill.agentMetadata()).get(30, TimeUnit.SECONDS),
                        remote, local);
                }
            }
        }
    }

    private static KvDataPlaneSettings settings(final String engineId)
    {
        return new KvDataPlaneSettings("ucx", engineId, BLOCKS, BLOCK_BYTES, "127.0.0.1");
    }

    private static void measure(final UcxDataPlane decode, final KvPeer peer, final int[] remote, final int[] local)
        throws Exception
    {
        final long bytes = (long)BLOCKS * BLOCK_BYTES;
        final double[] readGbps = new double[RUNS];
        for (int run = -WARMUP; run < RUNS; run++)
        {
            final long startNs = System.nanoTime();
            decode.read(peer, remote, local, new byte[0]).get(30, TimeUnit.SECONDS);
            final long tookNs = System.nanoTime() - startNs;
            if (run >= 0)
            {
                readGbps[run] = (double)bytes / tookNs;
            }
        }
        if (KvBlockPattern.firstMismatch(decode.pool().block(BLOCKS - 1), KvBlockPattern.seed("bench", 0)) != -1)
        {
            throw new IllegalStateException("block 0 of the prefill did not land in local block " + (BLOCKS - 1));
        }
        final ByteBuffer from = ByteBuffer.allocateDirect((int)bytes);
        final ByteBuffer to = ByteBuffer.allocateDirect((int)bytes);
        final double[] copyGbps = new double[RUNS];
        for (int run = -WARMUP; run < RUNS; run++)
        {
            final long startNs = System.nanoTime();
            for (int i = 0; i < BLOCKS; i++)
            {
                final int offset = (BLOCKS - 1 - i) * BLOCK_BYTES;
                to.put(i * BLOCK_BYTES, from, offset, BLOCK_BYTES);
            }
            final long tookNs = System.nanoTime() - startNs;
            if (run >= 0)
            {
                copyGbps[run] = (double)bytes / tookNs;
            }
        }
        System.out.printf("ucx read of %d x %d B: median %.2f GB/s, best %.2f GB/s%n", BLOCKS, BLOCK_BYTES,
            median(readGbps), Arrays.stream(readGbps).max().orElse(0));
        System.out.printf("java copy of the same bytes: median %.2f GB/s, best %.2f GB/s%n", median(copyGbps),
            Arrays.stream(copyGbps).max().orElse(0));
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
