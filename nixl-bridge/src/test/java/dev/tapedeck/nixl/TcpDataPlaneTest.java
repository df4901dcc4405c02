package dev.tapedeck.nixl;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TcpDataPlaneTest
{
    private static final String HOST = "127.0.0.1";
    private static final int BLOCK_BYTES = 4096;

    static KvDataPlaneSettings settings(final String engineId, final int numBlocks, final int blockBytes)
    {
        return new KvDataPlaneSettings("tcp", engineId, numBlocks, blockBytes, HOST);
    }

    static void fill(final KvPool pool, final String requestId, final int[] blockIds)
    {
        for (int i = 0; i < blockIds.length; i++)
        {
            KvBlockPattern.fill(pool.block(blockIds[i]), KvBlockPattern.seed(requestId, i));
        }
    }

    static void verify(final KvPool pool, final String requestId, final int[] blockIds)
    {
        for (int i = 0; i < blockIds.length; i++)
        {
            assertEquals(-1, KvBlockPattern.firstMismatch(pool.block(blockIds[i]), KvBlockPattern.seed(requestId, i)),
                "block " + blockIds[i] + " (index " + i + ")");
        }
    }

    @Test
    void readsBlocksStraightIntoTheLocalPoolAndNotifiesThePrefill() throws Exception
    {
        try (TcpDataPlane prefill = new TcpDataPlane(settings("prefill", 16, BLOCK_BYTES));
            TcpDataPlane decode = new TcpDataPlane(settings("decode", 16, BLOCK_BYTES)))
        {
            assertEquals("tcp", prefill.kind());
            assertTrue(prefill.movesBytes());
            assertEquals(HOST + ":" + prefill.port(), new String(prefill.agentMetadata(), StandardCharsets.UTF_8));
            final int[] remote = {2, 5, 9};
            final int[] local = {0, 1, 2};
            fill(prefill.pool(), "req-1", remote);
            final KvPeer peer = decode.addPeer("prefill", prefill.agentMetadata()).get(5, TimeUnit.SECONDS);
            final PullResult result = decode.read(peer, remote, local, "req-1:1".getBytes(StandardCharsets.UTF_8))
                .get(10, TimeUnit.SECONDS);
            assertEquals(3L * BLOCK_BYTES, result.bytes());
            assertEquals(3, result.descriptors());
            verify(decode.pool(), "req-1", local);
            assertEquals(List.of("req-1:1"), awaitNotifications(prefill, 1));

            // the same connection again, a notification without a read, then a refused block id
            decode.notify(peer, "req-2:1".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
            assertEquals(List.of("req-2:1"), awaitNotifications(prefill, 1));
            final KvTransferException refused = failure(decode.read(peer, new int[] {16}, new int[] {3},
                new byte[0]));
            assertTrue(refused.getMessage().contains("block 16 is not in a pool of 16"), refused.getMessage());
            final PullResult again = decode.read(peer, remote, new int[] {5, 6, 7}, new byte[0])
                .get(10, TimeUnit.SECONDS);
            assertEquals(3L * BLOCK_BYTES, again.bytes());
            verify(decode.pool(), "req-1", new int[] {5, 6, 7});
        }
    }

    @Test
    void pipelinedReadsFromManyThreadsAllLand() throws Exception
    {
        final int reads = 32;
        try (TcpDataPlane prefill = new TcpDataPlane(settings("prefill", reads * 2, BLOCK_BYTES));
            TcpDataPlane decode = new TcpDataPlane(settings("decode", reads * 2, BLOCK_BYTES)))
        {
            final KvPeer peer = decode.addPeer("prefill", prefill.agentMetadata()).get(5, TimeUnit.SECONDS);
            final List<CompletableFuture<PullResult>> futures = new ArrayList<>();
            for (int r = 0; r < reads; r++)
            {
                fill(prefill.pool(), "req-" + r, new int[] {2 * r, 2 * r + 1});
            }
            final List<Thread> threads = new ArrayList<>();
            for (int r = 0; r < reads; r++)
            {
                final int read = r;
                final CompletableFuture<PullResult> future = new CompletableFuture<>();
                futures.add(future);
                final Thread thread = new Thread(() -> decode.read(peer, new int[] {2 * read, 2 * read + 1},
                    new int[] {2 * (reads - 1 - read), 2 * (reads - 1 - read) + 1},
                    ("req-" + read + ":1").getBytes(StandardCharsets.UTF_8)).whenComplete((result, error) ->
                    {
                        if (null == error)
                        {
                            future.complete(result);
                        }
                        else
                        {
                            future.completeExceptionally(error);
                        }
                    }));
                threads.add(thread);
                thread.start();
            }
            for (final CompletableFuture<PullResult> future : futures)
            {
                assertEquals(2L * BLOCK_BYTES, future.get(10, TimeUnit.SECONDS).bytes());
            }
            for (int r = 0; r < reads; r++)
            {
                verify(decode.pool(), "req-" + r, new int[] {2 * (reads - 1 - r), 2 * (reads - 1 - r) + 1});
            }
            assertEquals(reads, awaitNotifications(prefill, reads).size());
        }
    }

    @Test
    void aReadFromAClosedPlaneFailsFast() throws Exception
    {
        try (TcpDataPlane decode = new TcpDataPlane(settings("decode", 4, BLOCK_BYTES), 10_000))
        {
            final TcpDataPlane prefill = new TcpDataPlane(settings("prefill", 4, BLOCK_BYTES));
            final KvPeer peer = decode.addPeer("prefill", prefill.agentMetadata()).get(5, TimeUnit.SECONDS);
            decode.read(peer, new int[] {1}, new int[] {1}, new byte[0]).get(10, TimeUnit.SECONDS);
            prefill.close();
            // the open connection sees the close
            final long startNs = System.nanoTime();
            failure(decode.read(peer, new int[] {1}, new int[] {1}, new byte[0]));
            // and a new connection is refused
            final KvTransferException refused = failure(decode.read(peer, new int[] {1}, new int[] {1}, new byte[0]));
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertTrue(elapsedMs < 2_000, "took " + elapsedMs + " ms: " + refused.getMessage());
            assertTrue(refused.getMessage().contains("prefill"), refused.getMessage());
        }
    }

    @Test
    void aPrefillThatNeverAnswersFailsTheReadAfterTheTimeout() throws Exception
    {
        try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getByName(HOST));
            TcpDataPlane decode = new TcpDataPlane(settings("decode", 4, BLOCK_BYTES), 300))
        {
            final List<Socket> accepted = new ArrayList<>();
            final Thread acceptor = new Thread(() ->
            {
                try
                {
                    while (true)
                    {
                        accepted.add(silent.accept());
                    }
                }
                catch (final IOException ignored)
                {
                    // the server socket closed: the test is over
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            final KvPeer peer = decode.addPeer("silent", (HOST + ":" + silent.getLocalPort())
                .getBytes(StandardCharsets.UTF_8)).get(5, TimeUnit.SECONDS);
            final long startNs = System.nanoTime();
            final KvTransferException ex = failure(decode.read(peer, new int[] {0}, new int[] {0}, new byte[0]));
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertTrue(ex.getMessage().contains("not done within 300 ms"), ex.getMessage());
            assertTrue(elapsedMs >= 290 && elapsedMs < 3_000, "failed after " + elapsedMs + " ms");
            for (final Socket socket : accepted)
            {
                socket.close();
            }
        }
    }

    @Test
    void aPrefillThatClosesMidReadFailsTheReadAtOnce() throws Exception
    {
        try (ServerSocket halfway = new ServerSocket(0, 8, InetAddress.getByName(HOST));
            TcpDataPlane decode = new TcpDataPlane(settings("decode", 4, BLOCK_BYTES), 10_000))
        {
            final Thread server = new Thread(() ->
            {
                try (Socket socket = halfway.accept())
                {
                    socket.getInputStream().read(new byte[64]);
                    final ByteBuffer header = ByteBuffer.allocate(12).putInt(0).putLong(2L * BLOCK_BYTES);
                    socket.getOutputStream().write(header.array());
                    socket.getOutputStream().write(new byte[BLOCK_BYTES + 100]);
                    socket.getOutputStream().flush();
                }
                catch (final IOException ignored)
                {
                    // the test fails on its own if this side breaks
                }
            });
            server.setDaemon(true);
            server.start();
            final KvPeer peer = decode.addPeer("halfway", (HOST + ":" + halfway.getLocalPort())
                .getBytes(StandardCharsets.UTF_8)).get(5, TimeUnit.SECONDS);
            final long startNs = System.nanoTime();
            final KvTransferException ex = failure(decode.read(peer, new int[] {0, 1}, new int[] {0, 1}, new byte[0]));
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertTrue(ex.getMessage().contains("mid-read"), ex.getMessage());
            assertTrue(elapsedMs < 2_000, "failed after " + elapsedMs + " ms");
        }
    }

    @Test
    void closingFromACallbackOnTheIoThreadDoesNotHang() throws Exception
    {
        try (TcpDataPlane prefill = new TcpDataPlane(settings("prefill", 4, BLOCK_BYTES)))
        {
            final TcpDataPlane decode = new TcpDataPlane(settings("decode", 4, BLOCK_BYTES));
            final KvPeer peer = decode.addPeer("prefill", prefill.agentMetadata()).get(5, TimeUnit.SECONDS);
            decode.read(peer, new int[] {0}, new int[] {0}, new byte[0]).thenRun(decode::close)
                .get(10, TimeUnit.SECONDS);
            final KvTransferException closed = failure(decode.read(peer, new int[] {0}, new int[] {0}, new byte[0]));
            assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
        }
    }

    @Test
    void badArgumentsAndARemovedPeerFail() throws Exception
    {
        final TcpDataPlane decode = new TcpDataPlane(settings("decode", 4, BLOCK_BYTES));
        try (TcpDataPlane prefill = new TcpDataPlane(settings("prefill", 4, BLOCK_BYTES)))
        {
            failure(decode.addPeer("x", "no-port".getBytes(StandardCharsets.UTF_8)));
            final KvPeer peer = decode.addPeer("prefill", prefill.agentMetadata()).get(5, TimeUnit.SECONDS);
            failure(decode.read(peer, new int[] {0, 1}, new int[] {0}, new byte[0]));
            failure(decode.read(peer, new int[] {0}, new int[] {4}, new byte[0]));
            decode.read(peer, new int[] {0}, new int[] {0}, new byte[0]).get(10, TimeUnit.SECONDS);
            decode.removePeer(peer);
            final KvTransferException removed = failure(decode.read(peer, new int[] {0}, new int[] {0}, new byte[0]));
            assertTrue(removed.getMessage().contains("unknown peer"), removed.getMessage());
            decode.close();
            final KvTransferException closed = failure(decode.read(peer, new int[] {0}, new int[] {0}, new byte[0]));
            assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
        }
        finally
        {
            decode.close();
        }
    }

    /**
     * Not a pass/fail test: prints what this machine moves through the tcp plane (256 reads of one 128 KiB block)
     * next to a ByteBuffer copy of the same bytes.
     */
    @Test
    void throughput() throws Exception
    {
        final int blockBytes = 128 * 1024;
        final int blocks = 256;
        try (TcpDataPlane prefill = new TcpDataPlane(settings("prefill", blocks, blockBytes));
            TcpDataPlane decode = new TcpDataPlane(settings("decode", blocks, blockBytes)))
        {
            final int[] ids = new int[blocks];
            for (int i = 0; i < blocks; i++)
            {
                ids[i] = i;
            }
            fill(prefill.pool(), "bench", ids);
            final KvPeer peer = decode.addPeer("prefill", prefill.agentMetadata()).get(5, TimeUnit.SECONDS);
            for (int warm = 0; warm < 3; warm++)
            {
                decode.read(peer, ids, ids, new byte[0]).get(30, TimeUnit.SECONDS);
            }
            long startNs = System.nanoTime();
            final List<CompletableFuture<PullResult>> singles = new ArrayList<>();
            for (int i = 0; i < blocks; i++)
            {
                singles.add(decode.read(peer, new int[] {i}, new int[] {i}, new byte[0]));
            }
            for (final CompletableFuture<PullResult> single : singles)
            {
                single.get(30, TimeUnit.SECONDS);
            }
            final long singlesNs = System.nanoTime() - startNs;
            startNs = System.nanoTime();
            decode.read(peer, ids, ids, new byte[0]).get(30, TimeUnit.SECONDS);
            final long batchNs = System.nanoTime() - startNs;
            verify(decode.pool(), "bench", ids);
            startNs = System.nanoTime();
            for (int i = 0; i < blocks; i++)
            {
                decode.pool().block(i).put(prefill.pool().block(i));
            }
            final long copyNs = System.nanoTime() - startNs;
            final double bytes = (double)blocks * blockBytes;
            System.out.printf("tcp plane: 256 x 128 KiB single-block reads %.2f GB/s, one 256-block read %.2f GB/s, " +
                "ByteBuffer copy %.2f GB/s%n", bytes / singlesNs, bytes / batchNs, bytes / copyNs);
        }
    }

    static List<String> awaitNotifications(final KvDataPlane plane, final int count) throws InterruptedException
    {
        final List<String> received = new ArrayList<>();
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (received.size() < count && System.nanoTime() < deadlineNs)
        {
            if (0 == plane.drainNotifications(received::add))
            {
                Thread.sleep(1);
            }
        }
        assertEquals(count, received.size(), "notifications " + received);
        return received;
    }

    static KvTransferException failure(final CompletableFuture<?> future) throws InterruptedException
    {
        try
        {
            future.get(10, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure");
        }
        catch (final ExecutionException ex)
        {
            return assertInstanceOf(KvTransferException.class, ex.getCause());
        }
        catch (final TimeoutException ex)
        {
            throw new AssertionError("no outcome within 10 s", ex);
        }
    }

}
