package dev.tapedeck.testing;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.tapedeck.net.ZmqConnector;
import dev.tapedeck.kvevents.KvEventPublisher;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A KV-event subscriber as vLLM's consumers are meant to be: batches in sequence order from 0, live from a SUB
 * socket, and a gap filled from the publisher's replay socket. Live PUB/SUB drops what is published before the
 * subscription has reached the publisher, and nothing a SUB can observe says when it has; a clean-clone CI run once
 * lost a first batch that way. Each gap filled is printed, and {@link #liveBatches()} counts the batches that came
 * live. Confined to the test thread that made it (JeroMQ sockets are thread-confined).
 */
public final class KvEventSubscriber
{
    private static final byte[] END = {-1, -1, -1, -1, -1, -1, -1, -1};
    private static final int TIMEOUT_MS = 10_000;

    /** One batch: its sequence number and payload, and whether it came live or from the replay socket. */
    public record Batch(long sequence, byte[] payload, boolean live)
    {
    }

    private final ZContext context;
    private final String topic;
    private final ZMQ.Socket sub;
    private final String replayEndpoint;
    private final ArrayDeque<Batch> replayed = new ArrayDeque<>();
    private long nextSequence;
    private int liveBatches;

    /**
     * Subscribe to a publisher that has a replay socket.
     *
     * @param context the context for the SUB and the replay DEALER (one I/O thread).
     * @param publisher the publisher, started, with a replay endpoint.
     * @param topic the subscription; every live batch must carry exactly this topic.
     */
    public KvEventSubscriber(final ZContext context, final KvEventPublisher publisher, final String topic)
    {
        assertNotNull(publisher.replayEndpoint(), "the publisher needs a replay endpoint to fill gaps");
        this.context = context;
        this.topic = topic;
        this.replayEndpoint = publisher.replayEndpoint();
        this.sub = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS).open(context, SocketType.SUB, s ->
        {
            s.setReceiveTimeOut(TIMEOUT_MS);
            s.subscribe(topic.getBytes(StandardCharsets.UTF_8));
        }, publisher.endpoint(), System.nanoTime() + 10_000_000_000L);
    }

    /**
     * @return the next batch in sequence order; fails when it is neither live within 10 s nor in the replay.
     */
    public Batch next()
    {
        Batch batch = replayed.poll();
        while (null == batch)
        {
            final Batch live = receiveLive();
            if (null != live && live.sequence() < nextSequence)
            {
                continue; // already taken from the replay socket
            }
            if (null != live && live.sequence() == nextSequence)
            {
                liveBatches++;
                batch = live;
                break;
            }
            System.err.println("KvEventSubscriber: batch " + nextSequence + " missed live (" +
                (null == live ? "nothing within 10 s" : "got " + live.sequence()) + "), taken from the replay");
            replayed.addAll(replay(context, replayEndpoint, nextSequence));
            batch = replayed.poll();
            assertNotNull(batch, "batch " + nextSequence + " neither live nor in the replay");
        }
        assertEquals(nextSequence, batch.sequence(), "batches in sequence order");
        nextSequence = batch.sequence() + 1;
        return batch;
    }

    /**
     * @return batches that came live (the rest came from the replay socket).
     */
    public int liveBatches()
    {
        return liveBatches;
    }

    private Batch receiveLive()
    {
        final byte[] topicFrame = sub.recv(0);
        if (null == topicFrame)
        {
            return null;
        }
        assertEquals(topic, new String(topicFrame, StandardCharsets.UTF_8));
        assertTrue(sub.hasReceiveMore());
        final byte[] sequence = sub.recv(0);
        assertEquals(8, sequence.length, "the sequence frame");
        assertTrue(sub.hasReceiveMore());
        final byte[] payload = sub.recv(0);
        assertFalse(sub.hasReceiveMore(), "three frames");
        return new Batch(new BigInteger(1, sequence).longValueExact(), payload, true);
    }

    /**
     * Ask a publisher's replay socket for every batch from a sequence number, as vLLM's subscribers do.
     *
     * @param context the context for the DEALER (one I/O thread).
     * @param replayEndpoint the publisher's replay endpoint.
     * @param from the first sequence number wanted.
     * @return the batches it still holds from there, in order (none when {@code from} is past the newest).
     */
    public static List<Batch> replay(final ZContext context, final String replayEndpoint, final long from)
    {
        final ZMQ.Socket dealer = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS).open(context, SocketType.DEALER,
            s -> s.setReceiveTimeOut(TIMEOUT_MS), replayEndpoint, System.nanoTime() + 10_000_000_000L);
        try
        {
            dealer.sendMore(new byte[0]);
            dealer.send(ByteBuffer.allocate(8).putLong(from).array(), 0);
            final List<Batch> batches = new ArrayList<>();
            while (true)
            {
                final byte[] empty = dealer.recv(0);
                assertNotNull(empty, "a replay answer within 10 s");
                assertEquals(0, empty.length);
                final byte[] sequence = dealer.recv(0);
                final byte[] payload = dealer.recv(0);
                assertFalse(dealer.hasReceiveMore());
                if (Arrays.equals(END, sequence))
                {
                    assertEquals(0, payload.length, "the end marker has an empty payload");
                    return batches;
                }
                batches.add(new Batch(new BigInteger(1, sequence).longValueExact(), payload, false));
            }
        }
        finally
        {
            dealer.close();
        }
    }
}
