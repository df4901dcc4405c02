package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * One READ (or notification) of a {@link TcpDataPlane} in flight on a data connection.
 * <p>
 * Made on the caller's thread, then used only on the plane's I/O thread; its future completes there.
 */
final class TcpTransfer
{
    final CompletableFuture<PullResult> future = new CompletableFuture<>();
    final KvPeer peer;
    final ByteBuffer request;
    final ByteBuffer[] targets;
    final long expectedBytes;
    final long submitNs;
    final long deadlineNs;
    long postedNs;

    TcpTransfer(final KvPeer peer, final ByteBuffer request, final ByteBuffer[] targets, final long expectedBytes,
        final long submitNs, final long deadlineNs)
    {
        this.peer = peer;
        this.request = request;
        this.targets = targets;
        this.expectedBytes = expectedBytes;
        this.submitNs = submitNs;
        this.deadlineNs = deadlineNs;
    }
}
