package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Reported, not gating: GB/s (1e9 B/s) of a 256 x 128 KiB read through a data plane against a Java copy of the same
 * bytes between two direct buffers, in the same run. Usage: {@code KvPullBench same} (two ucx planes in this JVM),
 * {@code KvPullBench two <UCX_TLS>} (the ucx prefill in a child JVM with that transport), or {@code KvPullBench tcp}
 * (the Java tcp plane, the prefill in a child JVM); {@code bench/scripts/kv-pull.sh} runs all three. The system
 * property {@code kvbridge.lib} names the library when run from test classes. {@code -Dkvbench.poolBlocks=N} (a
 * multiple of 256, default 256) makes both pools N blocks and moves each run's 256 blocks to the next slice of them, so
 * that with pools well beyond the last-level cache the bytes come from DRAM. Single-threaded driver.
 */
public final class KvPullBench
{
    private static final int BLOCKS = 256;
    private static final int POOL_BLOCKS = Integer.getInteger("kvbench.poolBlocks", BLOCKS);
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
        if ("tcp".equals(args[0]))
        {
            try (TcpDataPlane decode = new TcpDataPlane(new KvDataPlaneSettings("tcp", "bench-decode", POOL_BLOCKS,
                BLOCK_BYTES, "127.0.0.1"));
                ChildJvm child = ChildJvm.start(List.of(), Map.of(), "prefill", "tcp", "bench-prefill",
                    Integer.toString(POOL_BLOCKS), Integer.toString(BLOCK_BYTES), "bench",
                    Integer.toString(BLOCKS - 1)))
            {
                System.out.println("java tcp plane, prefill in a child JVM, pools of " + POOL_BLOCKS + " blocks");
                final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", 30_000));
                measure("tcp", decode, decode.addPeer("bench-prefill", metadata).get(30, TimeUnit.SECONDS));
                child.closeStdin();
                child.waitFor(30_000);
            }
            return;
        }
        final String reason = KvBridgeNative.unavailableReason();
        if (reason != null)
        {
            System.out.println("kvbridge unavailable: " + reason);
            return;
        }
        System.out.println(KvBridgeNative.version() + ", mode " + String.join(" ", args) + ", error mode " +
            System.getProperty(UcxDataPlane.ERROR_MODE_PROPERTY, "auto") + ", pools of " + POOL_BLOCKS + " blocks");
        try (UcxDataPlane decode = new UcxDataPlane(settings("bench-decode")))
        {
            if ("two".equals(args[0]))
            {
                try (ChildJvm child = ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty()),
                    Map.of("UCX_TLS", args[1], "UCX_NET_DEVICES", "lo", "UCX_WARN_UNUSED_ENV_VARS", "n"), "prefill",
                    "ucx", "bench-prefill", Integer.toString(POOL_BLOCKS), Integer.toString(BLOCK_BYTES), "bench",
                    Integer.toString(BLOCKS - 1)))
                {
                    final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", 30_000));
                    measure("ucx", decode, decode.addPeer("bench-prefill", metadata).get(30, TimeUnit.SECONDS));
                    child.closeStdin();
                    child.waitFor(30_000);
                }
            }
            else
            {
                try (UcxDataPlane prefill = new UcxDataPlane(settings("bench-prefill")))
                {
                    KvBlockPattern.fill(prefill.pool().block(BLOCKS - 1), KvBlockPattern.seed("bench", 0));
                    measure("ucx", decode,
                        decode.addPeer("bench-prefill", prefill.agentMetadata()).get(30, TimeUnit.SECONDS));
                }
            }
        }
    }

    private static KvDataPlaneSettings settings(final String engineId)
    {
        return new KvDataPlaneSettings("ucx", engineId, POOL_BLOCKS, BLOCK_BYTES, "127.0.0.1");
    }

    /** Run {@code run}'s blocks: the {@code run}-th slice of 256, remote in reverse order. */
    private static int[] slice(final int run, final boolean reversed)
    {
        final int first = Math.floorMod(run, POOL_BLOCKS / BLOCKS) * BLOCKS;
        final int[] ids = new int[BLOCKS];
        for (int i = 0; i < BLOCKS; i++)
        {
            ids[i] = first + (reversed ? BLOCKS - 1 - i : i);
        }
        return ids;
    }

    private static void measure(final String plane, final KvDataPlane decode, final KvPeer peer) throws Exception
    {
        final long bytes = (long)BLOCKS * BLOCK_BYTES;
        final double[] readGbps = new double[RUNS];
        for (int run = -WARMUP; run < RUNS; run++)
        {
            final int[] remote = slice(run, true);
            final int[] local = slice(run + 1, false);
            final long startNs = System.nanoTime();
            decode.read(peer, remote, local, new byte[0]).get(30, TimeUnit.SECONDS);
            final long tookNs = System.nanoTime() - startNs;
            if (run >= 0)
            {
                readGbps[run] = (double)bytes / tookNs;
            }
            if (remote[0] == BLOCKS - 1 && KvBlockPattern.firstMismatch(decode.pool().block(local[0]),
                KvBlockPattern.seed("bench", 0)) != -1)
            {
                throw new IllegalStateException("prefill block " + remote[0] + " did not land in block " + local[0]);
            }
        }
        final ByteBuffer from = ByteBuffer.allocateDirect(POOL_BLOCKS * BLOCK_BYTES);
        final ByteBuffer to = ByteBuffer.allocateDirect(POOL_BLOCKS * BLOCK_BYTES);
        final double[] copyGbps = new double[RUNS];
        for (int run = -WARMUP; run < RUNS; run++)
        {
            final int[] remote = slice(run, true);
            final int[] local = slice(run + 1, false);
            final long startNs = System.nanoTime();
            for (int i = 0; i < BLOCKS; i++)
            {
                to.put(local[i] * BLOCK_BYTES, from, remote[i] * BLOCK_BYTES, BLOCK_BYTES);
            }
            final long tookNs = System.nanoTime() - startNs;
            if (run >= 0)
            {
                copyGbps[run] = (double)bytes / tookNs;
            }
        }
        System.out.printf("%s read of %d x %d B: median %.2f GB/s, best %.2f GB/s%n", plane, BLOCKS, BLOCK_BYTES,
            median(readGbps), Arrays.stream(readGbps).max().orElse(0));
        System.out.printf("java copy of the same bytes: median %.2f GB/s, best %.2f GB/s%n", median(copyGbps),
            Arrays.stream(copyGbps).max().orElse(0));
        System.out.printf("ratio %s read / copy: %.2f%n", plane, median(readGbps) / median(copyGbps));
    }

    private static double median(final double[] values)
    {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
