package dev.tapedeck.nixl.sidechannel;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import org.agrona.collections.LongHashSet;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.nixl.KvTransferException;
import dev.tapedeck.nixl.NotificationQueue;

/**
 * The prefill's side channel, as vLLM's {@code NixlConnectorScheduler._nixl_handshake_listener} (vLLM @002a1057): a
 * ZeroMQ ROUTER bound on {@code tcp://host:port} that receives {@code [identity, "", msgpack((b"get_meta_msg",
 * tp_rank))]} and replies {@code [identity, "", payload of that rank]}, the payload being the msgpack of
 * {@code NixlHandshakePayload} ({@link HandshakeCodec#encodePayload}). It also answers tapedeck's
 * {@code (b"tapedeck_notif", "<remote_request_id>:<world size>")}: the string is queued for
 * {@link #drainNotifications} and the reply is the msgpack str {@code "ok"} (the {@code noop} plane's way of
 * delivering vLLM's done-notification). A notification sent again under a delivery id seen among the last
 * {@value #REMEMBERED_DELIVERIES} (its first reply was lost, so the client resent it) is acknowledged and not queued
 * twice. A request it cannot use gets an empty reply, so a REQ peer never hangs.
 * <p>
 * <b>Threading</b>: the socket lives on the server's own thread ({@code kv-side-channel}), an Agrona {@link Agent}
 * run by an {@link AgentRunner}, which waits in a ZeroMQ poll (up to 10 ms) when idle; the constructor waits until it
 * is bound. {@link #port()},
 * {@link #drainNotifications} and {@link #close()} may be called from any thread.
 */
public final class SideChannelServer implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(SideChannelServer.class.getName());
    private static final long BIND_TIMEOUT_MS = 10_000;
    private static final int MESSAGES_PER_CYCLE = 64;
    private static final long POLL_MS = 10;
    /** How many notification delivery ids the server remembers to drop a resent notification. */
    static final int REMEMBERED_DELIVERIES = 4_096;
    /** The reply to a notification: msgpack str "ok". */
    static final byte[] ACK = {(byte)0xa2, 'o', 'k'};

    private final ZContext context = new ZContext(1);
    private final NotificationQueue notifications = new NotificationQueue();
    private final AgentRunner runner;
    private final int port;
    private final String host;

    /**
     * Bind and start answering.
     *
     * @param host the address to bind ({@code VLLM_NIXL_SIDE_CHANNEL_HOST}).
     * @param port the port ({@code VLLM_NIXL_SIDE_CHANNEL_PORT} + DP rank), or 0 for any free one.
     * @param payloadByTpRank the encoded {@code NixlHandshakePayload} of each TP rank ({@link HandshakeCodec}).
     * @throws KvTransferException when the socket cannot be bound (naming host and port).
     */
    public SideChannelServer(final String host, final int port, final Map<Integer, byte[]> payloadByTpRank)
    {
        this.host = host;
        final Listener listener = new Listener("tcp://" + host + ":" + (0 == port ? "*" : Integer.toString(port)),
            Map.copyOf(payloadByTpRank));
        runner = new AgentRunner(new NoOpIdleStrategy(), ex -> LOG.log(System.Logger.Level.ERROR,
            "side channel failed: " + ex.getMessage(), ex), null, listener);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread thread = new Thread(r, "kv-side-channel");
            thread.setDaemon(true);
            return thread;
        });
        try
        {
            this.port = listener.bound.get(BIND_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        catch (final ExecutionException ex)
        {
            close();
            throw new KvTransferException("side channel: cannot bind " + host + ":" + port + ": " +
                ex.getCause().getMessage(), ex.getCause());
        }
        catch (final InterruptedException ex)
        {
            close();
            Thread.currentThread().interrupt();
            throw new KvTransferException("side channel: interrupted while binding " + host + ":" + port, ex);
        }
        catch (final TimeoutException ex)
        {
            close();
            throw new KvTransferException("side channel: " + host + ":" + port + " not bound within " +
                BIND_TIMEOUT_MS + " ms", ex);
        }
    }

    /**
     * A server for one TP rank (rank 0).
     *
     * @param host the address to bind.
     * @param port the port, or 0 for any free one.
     * @param payload the encoded {@code NixlHandshakePayload}.
     * @return the started server.
     */
    public static SideChannelServer start(final String host, final int port, final byte[] payload)
    {
        return new SideChannelServer(host, port, Map.of(0, payload));
    }

    /**
     * @return the bound port (the one picked when 0 was asked).
     */
    public int port()
    {
        return port;
    }

    /**
     * @return the bound address as given.
     */
    public String host()
    {
        return host;
    }

    /**
     * @param listener run on the server's thread after each notification is queued (a consumer's wake-up).
     */
    public void notificationListener(final Runnable listener)
    {
        notifications.listener(listener);
    }

    /**
     * Hand over the notifications received since the last call, oldest first.
     *
     * @param sink takes each {@code "<remote_request_id>:<world size>"}.
     * @return how many were handed over.
     */
    public int drainNotifications(final Consumer<String> sink)
    {
        return notifications.drain(sink);
    }

    /**
     * Stop answering and close the socket; waits for the server's thread.
     */
    @Override
    public void close()
    {
        runner.close();
        context.close();
    }

    private final class Listener implements Agent
    {
        private final String endpoint;
        private final Map<Integer, byte[]> payloadByTpRank;
        private final CompletableFuture<Integer> bound = new CompletableFuture<>();
        private ZMQ.Socket socket;
        private ZMQ.Poller poller;
        /** The last {@link #REMEMBERED_DELIVERIES} delivery ids, as a set and in arrival order (a ring). */
        private final LongHashSet seenDeliveryIds = new LongHashSet();
        private final long[] deliveryIdRing = new long[REMEMBERED_DELIVERIES];
        private int deliveryIdCount;

        Listener(final String endpoint, final Map<Integer, byte[]> payloadByTpRank)
        {
            this.endpoint = endpoint;
            this.payloadByTpRank = payloadByTpRank;
        }

        @Override
        public String roleName()
        {
            return "kv-side-channel";
        }

        @Override
        public void onStart()
        {
            try
            {
                socket = context.createSocket(SocketType.ROUTER);
                socket.setLinger(0);
                socket.bind(endpoint);
                poller = context.createPoller(1);
                poller.register(socket, ZMQ.Poller.POLLIN);
                final String last = socket.getLastEndpoint();
                bound.complete(Integer.parseInt(last.substring(last.lastIndexOf(':') + 1)));
            }
            catch (final RuntimeException ex)
            {
                if (null != socket)
                {
                    socket.close();
                    socket = null;
                }
                bound.completeExceptionally(ex);
            }
        }

        @Override
        public int doWork()
        {
            if (null == socket)
            {
                return 0;
            }
            // wait in poll (the duty cycle's idle time), then read what is ready with blocking calls: polling with
            // recv(DONTWAIT) lost about 1 in 500 requests under JeroMQ 0.6.0
            int work = 0;
            while (work < MESSAGES_PER_CYCLE && poller.poll(0 == work ? POLL_MS : 0) > 0 && poller.pollin(0))
            {
                final byte[] identity = socket.recv(0);
                final List<byte[]> frames = new ArrayList<>(2);
                while (socket.hasReceiveMore())
                {
                    frames.add(socket.recv(0));
                }
                final byte[] reply = frames.isEmpty() ? new byte[0] : answer(frames.get(frames.size() - 1));
                socket.sendMore(identity);
                socket.sendMore(new byte[0]);
                socket.send(reply, 0);
                work++;
            }
            return work;
        }

        private byte[] answer(final byte[] message)
        {
            final HandshakeCodec.Request request;
            try
            {
                request = HandshakeCodec.decodeRequest(message);
            }
            catch (final KvTransferException ex)
            {
                LOG.log(System.Logger.Level.WARNING, "side channel: ignored a request: {0}", ex.getMessage());
                return new byte[0];
            }
            if (HandshakeCodec.TAPEDECK_NOTIF.equals(request.tag()) && null != request.notification())
            {
                if (firstDelivery(request.deliveryId()))
                {
                    notifications.add(request.notification());
                }
                return ACK.clone();
            }
            if (!HandshakeCodec.GET_META_MSG.equals(request.tag()))
            {
                LOG.log(System.Logger.Level.WARNING, "side channel: unexpected message {0}",
                    new String(message, StandardCharsets.ISO_8859_1));
            }
            final byte[] payload = payloadByTpRank.get(request.tpRank());
            if (null == payload)
            {
                LOG.log(System.Logger.Level.WARNING, "side channel: no metadata for tp rank {0}", request.tpRank());
                return new byte[0];
            }
            return payload;
        }

        /** @return false when the id (non-zero) was seen among the last ones remembered; remembers it. */
        private boolean firstDelivery(final long deliveryId)
        {
            if (0 == deliveryId)
            {
                return true;
            }
            if (!seenDeliveryIds.add(deliveryId))
            {
                return false;
            }
            final int slot = deliveryIdCount++ % REMEMBERED_DELIVERIES;
            if (deliveryIdCount > REMEMBERED_DELIVERIES)
            {
                seenDeliveryIds.remove(deliveryIdRing[slot]);
            }
            deliveryIdRing[slot] = deliveryId;
            return true;
        }

        @Override
        public void onClose()
        {
            if (null != poller)
            {
                poller.close();
                poller = null;
            }
            if (null != socket)
            {
                socket.close();
                socket = null;
            }
        }
    }
}
