package dev.tapedeck.nixl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two {@code ucx} planes in one JVM (vllm-vcr's nixl_loopback shape): each has its own UCX context, worker and I/O
 * thread.
 */
class UcxDataPlaneTest
{
    private static final int BLOCKS = 16;
    private static final int BLOCK_BYTES = 64 * 1024;
    private static final long WAIT_MS = 20_000;

    private UcxDataPlane prefill;
    private UcxDataPlane decode;

    @BeforeEach
    void open()
    {
        NativeAssumptions.assumeUcx();
        prefill = new UcxDataPlane(settings("prefill-a"));
        decode = new UcxDataPlane(settings("decode-a"));
    }

    @AfterEach
    void close()
    {
        if (decode != null)
        {
            decode.close();
        }
        if (prefill != null)
        {
            prefill.close();
        }
    }

    private static KvDataPlaneSettings settings(final String engineId)
    {
        return new KvDataPlaneSettings("ucx", engineId, BLOCKS, BLOCK_BYTES, "127.0.0.1");
    }

    @Test
    void readsBlocksIntoLocalSlotsAndNotifiesThePrefill() throws Exception
    {
        assertEquals("ucx", prefill.kind());
        assertTrue(prefill.movesBytes());
        final int[] remote = {2, 5, 9};
        for (int i = 0; i < remote.length; i++)
        {
            KvBlockPattern.fill(prefill.pool().block(remote[i]), KvBlockPattern.seed("req-1", i));
        }
        final KvPeer peer = decode.addPeer("prefill-a", prefill.agentMetadata()).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals("prefill-a", peer.engineId());

        final PullResult result = decode.read(peer, remote, new int[] {0, 1, 2},
            "req-1:1".getBytes(StandardCharsets.UTF_8)).get(WAIT_MS, TimeUnit.MILLISECONDS);

        assertEquals(3L * BLOCK_BYTES, result.bytes());
        assertEquals(3, result.descriptors());
        for (int i = 0; i < remote.length; i++)
        {
            assertEquals(-1, KvBlockPattern.firstMismatch(decode.pool().block(i), KvBlockPattern.seed("req-1", i)),
                "block " + i);
        }
        assertEquals(List.of("req-1:1"), awaitNotifications(prefill, 1));

        decode.notify(peer, "req-2:1".getBytes(StandardCharsets.UTF_8)).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(List.of("req-2:1"), awaitNotifications(prefill, 1));
    }

    @Test
    void aReadThatLandsTheWrongBlocksFailsVerification() throws Exception
    {
        KvBlockPattern.fill(prefill.pool().block(3), KvBlockPattern.seed("req-x", 0));
        KvBlockPattern.fill(prefill.pool().block(4), KvBlockPattern.seed("req-x", 1));
        final KvPeer peer = decode.addPeer("prefill-a", prefill.agentMetadata()).get(WAIT_MS, TimeUnit.MILLISECONDS);

        decode.read(peer, new int[] {4, 3}, new int[] {7, 8}, new byte[0]).get(WAIT_MS, TimeUnit.MILLISECONDS);

        assertTrue(KvBlockPattern.firstMismatch(decode.pool().block(7), KvBlockPattern.seed("req-x", 0)) >= 0);
        assertEquals(-1, KvBlockPattern.firstMismatch(decode.pool().block(7), KvBlockPattern.seed("req-x", 1)));
        assertEquals(-1, KvBlockPattern.firstMismatch(decode.pool().block(8), KvBlockPattern.seed("req-x", 0)));
        assertEquals(List.of(), awaitNotifications(prefill, 0), "a read without a notification sends none");
    }

    @Test
    void rejectsMetadataOfAnotherBlockSizeOrEngine()
    {
        try (UcxDataPlane odd = new UcxDataPlane(new KvDataPlaneSettings("ucx", "odd", 3, 24 * 1024, "127.0.0.1")))
        {
            final KvTransferException size = failure(decode.addPeer("odd", odd.agentMetadata()));
            assertTrue(size.getMessage().contains("not a whole number of 65536-byte blocks"), size.getMessage());
        }
        final KvTransferException engine = failure(decode.addPeer("someone-else", prefill.agentMetadata()));
        assertTrue(engine.getMessage().contains("is for engine prefill-a"), engine.getMessage());
        final byte[] truncated = Arrays.copyOf(prefill.agentMetadata(), 20);
        assertTrue(failure(decode.addPeer("prefill-a", truncated)).getMessage().contains("truncated"));
        assertTrue(failure(decode.addPeer("prefill-a", new byte[] {1, 2, 3, 4})).getMessage().contains("KVB1"));
    }

    @Test
    void rejectsReadsOutsideEitherPoolAndFromRemovedPeers() throws Exception
    {
        final KvPeer peer = decode.addPeer("prefill-a", prefill.agentMetadata()).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertTrue(failure(decode.read(peer, new int[] {BLOCKS}, new int[] {0}, new byte[0])).getMessage()
            .contains("out of range"));
        assertTrue(failure(decode.read(peer, new int[] {0}, new int[] {-1}, new byte[0])).getMessage()
            .contains("out of range"));
        assertTrue(failure(decode.read(peer, new int[] {0, 1}, new int[] {0}, new byte[0])).getMessage()
            .contains("as many local as remote"));
        decode.removePeer(peer);
        assertTrue(failure(decode.read(peer, new int[] {0}, new int[] {0}, new byte[0])).getMessage()
            .contains("no peer"));
        final KvPeer again = decode.addPeer("prefill-a", prefill.agentMetadata()).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals(BLOCK_BYTES, decode.read(again, new int[] {1}, new int[] {1}, new byte[0])
            .get(WAIT_MS, TimeUnit.MILLISECONDS).bytes());
    }

    @Test
    void closedPlanesFailNewWorkAndStopTheirIoThread() throws Exception
    {
        final KvPeer peer = decode.addPeer("prefill-a", prefill.agentMetadata()).get(WAIT_MS, TimeUnit.MILLISECONDS);
        assertTrue(ioThreadAlive("decode-a"));
        decode.close();
        decode.close();
        assertFalse(ioThreadAlive("decode-a"));
        assertTrue(failure(decode.read(peer, new int[] {0}, new int[] {0}, new byte[0])).getMessage()
            .contains("no peer"));
        assertTrue(failure(decode.addPeer("prefill-a", prefill.agentMetadata())).getMessage().contains("closed"));
        decode = null;
    }

    private static boolean ioThreadAlive(final String engineId)
    {
        return Thread.getAllStackTraces().keySet().stream()
            .anyMatch(thread -> thread.getName().equals("kv-io-" + engineId) && thread.isAlive());
    }

    private static KvTransferException failure(final CompletableFuture<?> future)
    {
        final ExecutionException ex = assertThrows(ExecutionException.class,
            () -> future.get(WAIT_MS, TimeUnit.MILLISECONDS));
        return assertInstanceOf(KvTransferException.class, ex.getCause());
    }

    static List<String> awaitNotifications(final KvDataPlane plane, final int count) throws InterruptedException
    {
        final List<String> received = new ArrayList<>();
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(count == 0 ? 200 : WAIT_MS);
        while ((count == 0 || received.size() < count) && System.nanoTime() < deadlineNs)
        {
            plane.drainNotifications(received::add);
            Thread.sleep(1);
        }
        return received;
    }
}
