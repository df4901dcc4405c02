package dev.tapedeck.nixl.sidechannel;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.nixl.KvTransferException;

/**
 * The decode's side of the side channel, as vLLM's {@code NixlConnectorWorker._nixl_handshake} (vLLM @002a1057): a
 * ZeroMQ REQ socket (vLLM opens one per handshake; this client keeps one per endpoint) connected to
 * {@code tcp://host:port}, sending {@code msgpack((b"get_meta_msg", tp_rank))} and waiting at most the timeout (vLLM:
 * {@code RCVTIMEO} 5000 ms) for the {@code NixlHandshakePayload}. Like vLLM it checks the compatibility hash
 * <i>before</i> decoding the agent metadata (unless the check is disabled, vLLM's
 * {@code enforce_handshake_compat=false}) and, when asked, that the metadata's {@code engine_id} is the
 * expected one. {@link #notify} sends tapedeck's {@code (b"tapedeck_notif", notification)} extension.
 * <p>
 * <b>Threading</b>: every method may be called from any thread and returns at once; the sockets (one REQ socket per
 * endpoint, kept while it answers) are used only on
 * the client's own thread ({@code kv-side-channel-client}), where the futures complete; requests run one at a time,
 * as vLLM's single handshake-initiator thread does. Callers must not block that thread in a callback.
 */
public final class SideChannelClient implements AutoCloseable
{
    /** vLLM's handshake receive timeout. */
    public static final int DEFAULT_TIMEOUT_MS = 5_000;
    /** A waiting request checks for {@link #close()} this often, in milliseconds. */
    static final int POLL_SLICE_MS = 100;
    /**
     * A request not answered within this many milliseconds is sent again on a fresh socket, until the timeout:
     * JeroMQ 0.6.0 loses about 1 in 400 requests sent on a new connection (the ROUTER never sees them), whoever the
     * server is. Fetches are idempotent; a notification carries a delivery id, the same in each resend, so a server
     * that got it but whose reply was lost (or came after this) takes it once.
     */
    static final long ATTEMPT_MS = 1_000;

    private final ZContext context = new ZContext(1);
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r ->
    {
        final Thread thread = new Thread(r, "kv-side-channel-client");
        thread.setDaemon(true);
        return thread;
    });
    private final int timeoutMs;
    private final String localCompatibilityHash;
    private volatile boolean closing;
    /** One REQ socket per endpoint, kept while it answers; client thread only. */
    private final Map<String, ZMQ.Socket> sockets = new HashMap<>();

    /**
     * @param timeoutMs how long a request may wait for its reply (and for its send), in milliseconds.
     * @param localCompatibilityHash this engine's {@link CompatibilityHash}, which a remote must match; null disables
     *     the check ({@code enforce_handshake_compat=false}).
     */
    public SideChannelClient(final int timeoutMs, final String localCompatibilityHash)
    {
        if (timeoutMs <= 0)
        {
            throw new IllegalArgumentException("timeoutMs must be positive, got " + timeoutMs);
        }
        this.timeoutMs = timeoutMs;
        this.localCompatibilityHash = localCompatibilityHash;
    }

    /**
     * Fetch a prefill's handshake (TP rank 0), without checking its engine id.
     *
     * @param host the prefill's side-channel host ({@code remote_host}).
     * @param port its port ({@code remote_port}).
     * @return the handshake, or a future failed with {@link KvTransferException} naming {@code host:port}.
     */
    public CompletableFuture<Handshake> fetch(final String host, final int port)
    {
        return fetch(host, port, 0, null);
    }

    /**
     * Fetch a prefill's handshake.
     *
     * @param host the prefill's side-channel host ({@code remote_host}).
     * @param port its port ({@code remote_port}).
     * @param tpRank the remote TP rank to ask for.
     * @param expectedEngineId the {@code remote_engine_id} the metadata must carry, or null for any.
     * @return the handshake, or a future failed with {@link KvTransferException} naming {@code host:port}.
     */
    public CompletableFuture<Handshake> fetch(final String host, final int port, final int tpRank,
        final String expectedEngineId)
    {
        return submit(() ->
        {
            final byte[] reply = request(host, port, HandshakeCodec.encodeGetMeta(tpRank));
            final String where = " from " + host + ":" + port;
            final byte[][] payload;
            try
            {
                payload = HandshakeCodec.decodePayload(reply);
            }
            catch (final KvTransferException ex)
            {
                throw new KvTransferException(ex.getMessage() + where, ex);
            }
            final String remoteHash = new String(payload[0], StandardCharsets.UTF_8);
            if (null != localCompatibilityHash && !localCompatibilityHash.equals(remoteHash))
            {
                throw new KvTransferException("NIXL compatibility hash mismatch" + where + ". Local: " +
                    localCompatibilityHash + ", Remote: " + remoteHash + ". Prefill and decode instances have " +
                    "incompatible configurations (vLLM version, model, dtype, attention backend, ...)");
            }
            final NixlAgentMetadata metadata;
            try
            {
                metadata = HandshakeCodec.decodeMetadata(payload[1]);
            }
            catch (final KvTransferException ex)
            {
                throw new KvTransferException(ex.getMessage() + where, ex);
            }
            if (null != expectedEngineId && !expectedEngineId.equals(metadata.engineId()))
            {
                throw new KvTransferException("remote NIXL agent engine ID mismatch" + where + ": expected " +
                    expectedEngineId + ", received " + metadata.engineId());
            }
            return new Handshake(remoteHash, metadata);
        });
    }

    /**
     * Deliver a done-notification over the side channel (tapedeck's extension; the {@code noop} plane's path).
     *
     * @param host the prefill's side-channel host.
     * @param port its port.
     * @param notification e.g. {@code "<remote_request_id>:1"}.
     * @return done when the server acknowledged it, or failed with {@link KvTransferException}.
     */
    public CompletableFuture<Void> notify(final String host, final int port, final String notification)
    {
        return submit(() ->
        {
            final byte[] reply = request(host, port, HandshakeCodec.encodeNotif(notification, deliveryId()));
            if (!Arrays.equals(SideChannelServer.ACK, reply))
            {
                throw new KvTransferException("side channel " + host + ":" + port + " did not acknowledge the " +
                    "notification (" + reply.length + "-byte reply)");
            }
            return null;
        });
    }

    /**
     * Stop the client: requests not yet started fail, a running one is abandoned within {@value #POLL_SLICE_MS} ms
     * (and fails); waits for the client's thread.
     */
    @Override
    public void close()
    {
        closing = true;
        executor.shutdown();
        try
        {
            executor.awaitTermination(timeoutMs + 1_000L, TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        finally
        {
            executor.shutdownNow();
            context.close();
        }
    }

    private static long deliveryId()
    {
        long id;
        do
        {
            id = ThreadLocalRandom.current().nextLong();
        }
        while (0 == id);
        return id;
    }

    private interface Call<T>
    {
        T run();
    }

    private <T> CompletableFuture<T> submit(final Call<T> call)
    {
        final CompletableFuture<T> future = new CompletableFuture<>();
        try
        {
            executor.execute(() ->
            {
                try
                {
                    if (closing)
                    {
                        throw new KvTransferException("side channel client is closed");
                    }
                    future.complete(call.run());
                }
                catch (final RuntimeException ex)
                {
                    future.completeExceptionally(ex instanceof KvTransferException ? ex :
                        new KvTransferException("side channel: " + ex.getMessage(), ex));
                }
            });
        }
        catch (final RejectedExecutionException ex)
        {
            future.completeExceptionally(new KvTransferException("side channel client is closed", ex));
        }
        return future;
    }

    private byte[] request(final String host, final int port, final byte[] message)
    {
        final String endpoint = "tcp://" + host + ":" + port;
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        boolean sent = false;
        while (!closing)
        {
            final long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime());
            if (remainingMs <= 0)
            {
                break;
            }
            ZMQ.Socket socket = sockets.remove(endpoint);
            if (null == socket)
            {
                socket = context.createSocket(SocketType.REQ);
                socket.setLinger(0);
                // immediate: a request is queued only once the connection is up (send waits for it)
                socket.setImmediate(true);
                socket.connect(endpoint);
            }
            final long attemptMs = Math.min(ATTEMPT_MS, remainingMs);
            socket.setSendTimeOut((int)attemptMs);
            if (socket.send(message, 0))
            {
                sent = true;
                final byte[] reply = awaitReply(socket, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(attemptMs));
                if (null != reply)
                {
                    sockets.put(endpoint, socket);
                    return reply;
                }
            }
            socket.close();
        }
        throw new KvTransferException("side channel " + host + ":" + port + (closing ?
            ": the client was closed while waiting" : (sent ? ": no reply within " : ": could not send within ") +
            timeoutMs + " ms (is the prefill's side channel up?)"));
    }

    private byte[] awaitReply(final ZMQ.Socket socket, final long deadlineNs)
    {
        // poll in slices, so close() is noticed, then take the reply without waiting
        try (ZMQ.Poller poller = context.createPoller(1))
        {
            poller.register(socket, ZMQ.Poller.POLLIN);
            while (!closing && System.nanoTime() - deadlineNs < 0)
            {
                if (poller.poll(POLL_SLICE_MS) > 0 && poller.pollin(0))
                {
                    return socket.recv(ZMQ.DONTWAIT);
                }
            }
        }
        return null;
    }
}
