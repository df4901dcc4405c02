package dev.tapedeck.nixl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A prefill {@code ucx} plane in a child JVM, a decode plane in this one: over shared memory ({@code sm,self}) and
 * over loopback TCP. The child's environment carries the transport; this JVM's UCX picks what both sides share.
 */
class UcxTwoProcessTest
{
    private static final int BLOCKS = 32;
    private static final int BLOCK_BYTES = 128 * 1024;
    private static final long WAIT_MS = 30_000;

    private static Map<String, String> env(final String tls)
    {
        return Map.of("UCX_TLS", tls, "UCX_NET_DEVICES", "lo", "UCX_WARN_UNUSED_ENV_VARS", "n");
    }

    private static ChildJvm startPrefill(final String tls, final String engineId) throws Exception
    {
        return ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty()), env(tls), "prefill", "ucx", engineId,
            Integer.toString(BLOCKS), Integer.toString(BLOCK_BYTES), "req-1", "2,5,9");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sm,self", "tcp"})
    void readsFromAPrefillInAnotherProcess(final String tls) throws Exception
    {
        NativeAssumptions.assumeUcx();
        try (ChildJvm child = startPrefill(tls, "prefill-p");
            UcxDataPlane decode = new UcxDataPlane(new KvDataPlaneSettings("ucx", "decode-p", BLOCKS, BLOCK_BYTES,
                "127.0.0.1")))
        {
            final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", WAIT_MS));
            final KvPeer peer = decode.addPeer("prefill-p", metadata).get(WAIT_MS, TimeUnit.MILLISECONDS);

            final PullResult result = decode.read(peer, new int[] {2, 5, 9}, new int[] {0, 1, 2},
                "req-1:1".getBytes(StandardCharsets.UTF_8)).get(WAIT_MS, TimeUnit.MILLISECONDS);

            assertEquals(3L * BLOCK_BYTES, result.bytes());
            for (int i = 0; i < 3; i++)
            {
                assertEquals(-1, KvBlockPattern.firstMismatch(decode.pool().block(i),
                    KvBlockPattern.seed("req-1", i)), "block " + i + " over " + tls);
            }
            assertEquals("req-1:1", child.awaitLine("NOTIF ", WAIT_MS), child.describe());
            decode.notify(peer, "req-9:1".getBytes(StandardCharsets.UTF_8)).get(WAIT_MS, TimeUnit.MILLISECONDS);
            assertEquals("req-9:1", child.awaitLine("NOTIF ", WAIT_MS), child.describe());
            System.out.println("two-process read over " + tls + ": " + result);
            child.closeStdin();
            assertEquals("", child.awaitLine("CLOSED", WAIT_MS));
            assertEquals(0, child.waitFor(WAIT_MS), child.describe());
        }
    }

    @Test
    void aKilledPrefillFailsTheReadOverTcp() throws Exception
    {
        NativeAssumptions.assumeUcx();
        try (ChildJvm child = startPrefill("tcp", "prefill-k");
            UcxDataPlane decode = new UcxDataPlane(new KvDataPlaneSettings("ucx", "decode-k", BLOCKS, BLOCK_BYTES,
                "127.0.0.1")))
        {
            final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", WAIT_MS));
            final KvPeer peer = decode.addPeer("prefill-k", metadata).get(WAIT_MS, TimeUnit.MILLISECONDS);
            child.kill();
            final long startNs = System.nanoTime();

            final CompletableFuture<PullResult> read = decode.read(peer, new int[] {2, 5, 9}, new int[] {0, 1, 2},
                "req-1:1".getBytes(StandardCharsets.UTF_8));

            final ExecutionException ex = assertThrows(ExecutionException.class,
                () -> read.get(WAIT_MS, TimeUnit.MILLISECONDS));
            final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertInstanceOf(KvTransferException.class, ex.getCause());
            System.out.println("read from a killed prefill over tcp failed after " + tookMs + " ms: " +
                ex.getCause().getMessage());
            assertTrue(tookMs < 6_000, "took " + tookMs + " ms");
        }
    }

    @Test
    void aPrefillKilledMidPullFailsTheReadOverTcp() throws Exception
    {
        NativeAssumptions.assumeUcx();
        final int blocks = 512;
        final int[] all = new int[blocks];
        for (int i = 0; i < blocks; i++)
        {
            all[i] = i;
        }
        try (ChildJvm child = ChildJvm.start(List.of(ChildJvm.bridgeLibraryProperty()), env("tcp"), "prefill", "ucx",
            "prefill-m", Integer.toString(blocks), Integer.toString(BLOCK_BYTES), "req-m", "0");
            UcxDataPlane decode = new UcxDataPlane(new KvDataPlaneSettings("ucx", "decode-m", blocks, BLOCK_BYTES,
                "127.0.0.1")))
        {
            final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", WAIT_MS));
            final KvPeer peer = decode.addPeer("prefill-m", metadata).get(WAIT_MS, TimeUnit.MILLISECONDS);
            final long startNs = System.nanoTime();

            final CompletableFuture<PullResult> read = decode.read(peer, all, all, new byte[0]);
            Thread.sleep(2);
            child.kill();

            assumeTrue(!read.isDone() || read.isCompletedExceptionally(), "the 64 MiB read finished before the kill");
            final ExecutionException ex = assertThrows(ExecutionException.class,
                () -> read.get(WAIT_MS, TimeUnit.MILLISECONDS));
            final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertInstanceOf(KvTransferException.class, ex.getCause());
            System.out.println("read from a prefill killed mid-pull over tcp failed after " + tookMs + " ms: " +
                ex.getCause().getMessage());
            assertTrue(tookMs < 6_000, "took " + tookMs + " ms");
        }
    }

    /**
     * Over shared memory the decode has the prefill's pool mapped, and the mapping outlives the prefill: the read
     * copies what the prefill wrote and completes; what matters is that it does not hang.
     */
    @Test
    void aKilledPrefillOverSharedMemoryDoesNotHangTheRead() throws Exception
    {
        NativeAssumptions.assumeUcx();
        try (ChildJvm child = startPrefill("sm,self", "prefill-s");
            UcxDataPlane decode = new UcxDataPlane(new KvDataPlaneSettings("ucx", "decode-s", BLOCKS, BLOCK_BYTES,
                "127.0.0.1")))
        {
            final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", WAIT_MS));
            final KvPeer peer = decode.addPeer("prefill-s", metadata).get(WAIT_MS, TimeUnit.MILLISECONDS);
            child.kill();

            final CompletableFuture<PullResult> read = decode.read(peer, new int[] {2, 5, 9}, new int[] {0, 1, 2},
                "req-1:1".getBytes(StandardCharsets.UTF_8));

            String outcome;
            try
            {
                outcome = "completed: " + read.get(6_000, TimeUnit.MILLISECONDS) + ", block 0 intact: " +
                    (KvBlockPattern.firstMismatch(decode.pool().block(0), KvBlockPattern.seed("req-1", 0)) == -1);
            }
            catch (final ExecutionException ex)
            {
                assertInstanceOf(KvTransferException.class, ex.getCause());
                outcome = "failed: " + ex.getCause().getMessage();
            }
            System.out.println("read from a killed prefill over sm,self " + outcome);
        }
    }

    @Test
    void aStoppedPrefillTimesTheReadOut() throws Exception
    {
        NativeAssumptions.assumeUcx();
        System.setProperty(NativeDataPlane.READ_TIMEOUT_PROPERTY, "1000");
        try (ChildJvm child = startPrefill("tcp", "prefill-t");
            UcxDataPlane decode = new UcxDataPlane(new KvDataPlaneSettings("ucx", "decode-t", BLOCKS, BLOCK_BYTES,
                "127.0.0.1")))
        {
            final byte[] metadata = Base64.getDecoder().decode(child.awaitLine("KVB1 ", WAIT_MS));
            final KvPeer peer = decode.addPeer("prefill-t", metadata).get(WAIT_MS, TimeUnit.MILLISECONDS);
            decode.read(peer, new int[] {2}, new int[] {0}, new byte[0]).get(WAIT_MS, TimeUnit.MILLISECONDS);
            child.signal("STOP");
            try
            {
                final long startNs = System.nanoTime();
                final CompletableFuture<PullResult> read = decode.read(peer, new int[] {2, 5, 9},
                    new int[] {0, 1, 2}, new byte[0]);
                final ExecutionException ex = assertThrows(ExecutionException.class,
                    () -> read.get(WAIT_MS, TimeUnit.MILLISECONDS));
                final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                assertTrue(ex.getCause().getMessage().contains("timed out after 1000 ms"), ex.getCause().getMessage());
                assertTrue(tookMs >= 1_000 && tookMs < 5_000, "took " + tookMs + " ms");
            }
            finally
            {
                child.signal("CONT");
            }
        }
        finally
        {
            System.clearProperty(NativeDataPlane.READ_TIMEOUT_PROPERTY);
        }
    }
}
