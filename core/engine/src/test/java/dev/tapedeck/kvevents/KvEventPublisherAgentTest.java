package dev.tapedeck.kvevents;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The publisher as an Agrona agent driven by an {@link AgentInvoker} on the test's thread, with clocks set by hand:
 * nothing is published until the test runs a duty cycle, and each batch is dated by the engine's step time.
 */
class KvEventPublisherAgentTest
{
    private static final long EPOCH_AT_START_NS = 1_700_000_000_000_000_000L;

    @Test
    void shouldPublishOnlyInItsDutyCycleAndDateBatchesByTheEnginesClock() throws Exception
    {
        final CachedNanoClock engineClock = new CachedNanoClock();
        engineClock.update(5_000L);
        final long[] epochNs = {EPOCH_AT_START_NS};
        final KvEventStager stager = new KvEventStager(64 * 1024, engineClock, () -> epochNs[0]);
        epochNs[0] += TimeUnit.HOURS.toNanos(1); // the wall clock moving on does not date a batch: the step's end does
        try (ZContext zmq = new ZContext(1))
        {
            final KvEventPublisher publisher = new KvEventPublisher(KvEventsSettings.publishOn("tcp://127.0.0.1:*")
                .replayEndpoint("tcp://127.0.0.1:*").topic("kv@test").bufferSteps(10).ringBytes(64 * 1024), stager,
                zmq);
            final AgentInvoker invoker = new AgentInvoker(Throwable::printStackTrace, null, publisher);
            invoker.start();
            assertTrue(publisher.endpoint().matches("tcp://127\\.0\\.0\\.1:\\d+"), publisher.endpoint());
            assertEquals(0, invoker.invoke(), "nothing staged, nothing to do");

            stager.blockStored(new long[] {11L, 22L}, 0, 2, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, 0, null, null, null);
            stager.endOfStep(5_000L + 250_000_000L);
            assertEquals(0, publisher.publishedBatches(), "staged, not yet published: no duty cycle ran");
            assertTrue(invoker.invoke() > 0);
            assertEquals(1, publisher.publishedBatches());

            stager.blockRemoved(11L);
            stager.endOfStep(5_000L + 500_000_000L);
            invoker.invoke();
            assertEquals(2, publisher.publishedBatches());

            final List<byte[][]> replayed = replay(zmq, publisher.replayEndpoint(), invoker);
            assertEquals(3, replayed.size(), "two batches and the end marker");
            assertEquals(1_700_000_000.25, timestampSeconds(replayed.get(0)[2]), 1e-6);
            assertEquals(1_700_000_000.5, timestampSeconds(replayed.get(1)[2]), 1e-6);
            assertArrayEquals(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1}, replayed.get(2)[1]);

            invoker.close();
            assertTrue(invoker.isClosed());
        }
    }

    @Test
    void shouldDropOrHoldBackBatchesUnderAFaultAndKeepThemForReplay() throws Exception
    {
        final KvEventStager stager = new KvEventStager(64 * 1024);
        try (ZContext zmq = new ZContext(1))
        {
            final KvEventPublisher publisher = new KvEventPublisher(KvEventsSettings.publishOn("tcp://127.0.0.1:*")
                .replayEndpoint("tcp://127.0.0.1:*").topic("kv@test").bufferSteps(10).ringBytes(64 * 1024), stager,
                zmq);
            final AgentInvoker invoker = new AgentInvoker(Throwable::printStackTrace, null, publisher);
            invoker.start();
            final ZMQ.Socket subscriber = zmq.createSocket(SocketType.SUB);
            subscriber.subscribe(new byte[0]);
            subscriber.connect(publisher.endpoint());
            long sequence = -1;
            for (int i = 0; i < 1000 && -1 == sequence; i++) // a SUB joins late: publish until one arrives
            {
                stager.blockRemoved(i);
                stager.endOfStep(i);
                invoker.invoke();
                sequence = receiveSequence(subscriber, 10);
            }
            assertTrue(sequence >= 0, "the subscriber is connected");
            while (receiveSequence(subscriber, 50) >= 0)
            {
                sequence++;
            }

            stager.fault(true, 0); // drop
            stager.blockRemoved(7L);
            stager.endOfStep(1);
            invoker.invoke();
            assertEquals(-1, receiveSequence(subscriber, 200), "a dropped batch is not sent");
            assertEquals(1, publisher.faultDroppedBatches());

            stager.fault(false, TimeUnit.MILLISECONDS.toNanos(300)); // delay
            stager.blockRemoved(8L);
            stager.endOfStep(2);
            invoker.invoke();
            assertEquals(-1, receiveSequence(subscriber, 100), "held back for 300 ms");
            stager.fault(false, 0);
            long delayed = -1;
            for (int i = 0; i < 2000 && -1 == delayed; i++) // a bound on a hang, not a timing check
            {
                invoker.invoke();
                delayed = receiveSequence(subscriber, 5);
            }
            assertEquals(sequence + 2, delayed, "the delayed batch comes later; the dropped one left a gap");
            final List<byte[][]> replayed = replay(zmq, publisher.replayEndpoint(), invoker);
            boolean droppedReplayed = false;
            for (final byte[][] message : replayed)
            {
                droppedReplayed |= java.nio.ByteBuffer.wrap(message[1]).getLong() == sequence + 1;
            }
            assertTrue(droppedReplayed, "the dropped batch can be replayed, as after a real loss");
            invoker.close();
        }
    }

    /** The sequence number of the next message, or -1 if none comes within the wait. */
    private static long receiveSequence(final ZMQ.Socket subscriber, final int waitMs)
    {
        subscriber.setReceiveTimeOut(waitMs);
        final byte[] topic = subscriber.recv(0);
        if (null == topic)
        {
            return -1;
        }
        final byte[] sequence = subscriber.recv(0);
        subscriber.recv(0);
        return java.nio.ByteBuffer.wrap(sequence).getLong();
    }

    @Test
    void shouldFailItsBindFutureAndStayIdleWhenTheEndpointIsTaken()
    {
        try (ZContext zmq = new ZContext(1))
        {
            final ZMQ.Socket squatter = zmq.createSocket(SocketType.PUB);
            squatter.bind("tcp://127.0.0.1:*");
            final String taken = squatter.getLastEndpoint();
            // the replay socket always binds (a PUB endpoint without a wildcard would connect instead, as vLLM's)
            final KvEventPublisher publisher = new KvEventPublisher(KvEventsSettings.publishOn("tcp://127.0.0.1:*")
                .replayEndpoint(taken).topic("t"), new KvEventStager(64 * 1024), zmq);
            final AgentInvoker invoker = new AgentInvoker(Throwable::printStackTrace, null, publisher);
            invoker.start();
            final Exception ex = assertThrows(Exception.class, publisher::endpoint);
            assertTrue(ex.getCause() instanceof IllegalArgumentException, ex.toString());
            assertTrue(ex.getCause().getMessage().startsWith("KV events: cannot open tcp://127.0.0.1:* / " + taken),
                ex.getMessage());
            assertEquals(0, invoker.invoke(), "a publisher without sockets does nothing");
            invoker.close();
        }
    }

    @Test
    void shouldRunManyPublishersOnOneThreadAndNameTheEndpointThatCannotOpen()
    {
        try (KvEventPublishers publishers = new KvEventPublishers())
        {
            for (int i = 0; i < 3; i++)
            {
                publishers.add(KvEventsSettings.publishOn("tcp://127.0.0.1:*").topic("t").dataParallelRank(i),
                    new KvEventStager(64 * 1024));
            }
            publishers.start();
            final long distinct = publishers.publishers().stream().map(KvEventPublisher::endpoint).distinct().count();
            assertEquals(3, distinct, "each publisher has its own socket");
            final long threads = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> "tapedeck-kv-events".equals(t.getName())).count();
            assertEquals(1, threads, "one thread for all three");
        }
        try (ZContext zmq = new ZContext(1); KvEventPublishers publishers = new KvEventPublishers())
        {
            final ZMQ.Socket squatter = zmq.createSocket(SocketType.PUB);
            squatter.bind("tcp://127.0.0.1:*");
            publishers.add(KvEventsSettings.publishOn("tcp://127.0.0.1:*"), new KvEventStager(64 * 1024));
            publishers.add(KvEventsSettings.publishOn("tcp://127.0.0.1:*").replayEndpoint(squatter.getLastEndpoint())
                .dataParallelRank(1), new KvEventStager(64 * 1024));
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, publishers::start);
            assertTrue(ex.getMessage().contains(squatter.getLastEndpoint()), ex.getMessage());
        }
    }

    private static List<byte[][]> replay(final ZContext zmq, final String endpoint, final AgentInvoker invoker)
        throws InterruptedException
    {
        final ZMQ.Socket dealer = zmq.createSocket(SocketType.DEALER);
        dealer.connect(endpoint);
        dealer.sendMore(new byte[0]);
        dealer.send(KvEventPublisher.sequenceBytes(0), 0);
        final List<byte[][]> messages = new ArrayList<>();
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadlineNs)
        {
            invoker.invoke();
            final byte[] delimiter = dealer.recv(ZMQ.DONTWAIT);
            if (null == delimiter)
            {
                Thread.sleep(1);
                continue;
            }
            assertEquals(0, delimiter.length);
            final byte[] sequence = dealer.recv(0);
            final byte[] payload = dealer.recv(0);
            messages.add(new byte[][] {delimiter, sequence, payload});
            if (0 == payload.length)
            {
                return messages;
            }
        }
        assertNull(messages, "no end marker within 10 s");
        return messages;
    }

    private static double timestampSeconds(final byte[] batch) throws Exception
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(batch))
        {
            assertEquals(3, unpacker.unpackArrayHeader(), "[ts, events, data_parallel_rank]");
            return unpacker.unpackDouble();
        }
    }
}
