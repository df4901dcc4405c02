package dev.tapedeck.kvevents;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.MessageHandler;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Publishes one engine's KV-cache events as vLLM's {@code ZmqEventPublisher} does: a ZeroMQ PUB socket sending, per
 * engine step that changed blocks, the three frames {@code [topic, sequence (8 bytes big-endian, from 0), msgpack
 * KVEventBatch]}, and optionally a ROUTER replay socket: a client sends {@code ["", start sequence (8 bytes
 * big-endian)]} and gets {@code ["", sequence, batch]} for every batch still in the history from that sequence on,
 * then the end marker {@code ["", ff ff ff ff ff ff ff ff, ""]}. The history keeps the last
 * {@link KvEventsSettings#bufferSteps()} batches.
 * <p>
 * <p>
 * It is an Agrona {@link Agent}: {@link KvEventPublishers} runs every publisher of a process on one thread with an
 * {@code AgentRunner}; a test may drive one with an {@code AgentInvoker} on its own thread.
 * <p>
 * <b>Threading</b>: the engine hands events over through {@link #sink()} (its thread only, never blocking); both
 * sockets are opened in {@link #onStart()} and used only by the agent's duty cycle (ZeroMQ sockets are confined to one
 * thread), which drains the ring, encodes, sends and answers replays. {@link #endpoint()} and
 * {@link #replayEndpoint()} may be read from any thread once {@link #onStart()} ran (before, they wait for it); the
 * counters from any thread at any time.
 */
public final class KvEventPublisher implements Agent
{
    private static final System.Logger LOG = System.getLogger(KvEventPublisher.class.getName());
    private static final byte[] END_MARKER = {-1, -1, -1, -1, -1, -1, -1, -1};
    private static final byte[] EMPTY = new byte[0];
    private static final int HIGH_WATER_MARK = 100_000;
    private static final int BATCHES_PER_POLL = 64;

    private final KvEventsSettings settings;
    private final KvEventStager stager;
    private final KvEventBatchEncoder encoder;
    private final byte[][] history;
    private final byte[] topic;
    private final ZContext context;
    private final CompletableFuture<String[]> bound = new CompletableFuture<>();
    private final MessageHandler batchHandler = this::onBatch;
    private volatile long publishedBatches;
    private ZMQ.Socket publisher;
    private ZMQ.Socket replay;
    private long nextSequence;
    private long droppedLogged;
    private volatile long faultDroppedBatches;
    /** Batches held back by a delay fault: {due time (System.nanoTime), sequence}, in order. */
    private final ArrayDeque<long[]> delayed = new ArrayDeque<>();

    /**
     * A publisher for events an engine stages.
     *
     * @param settings endpoints, topic, encoding.
     * @param stager the engine's side (given to the engine as its {@code EngineConfig.kvEventSink}).
     * @param context the ZeroMQ context its sockets are made in (shared by a process's publishers).
     */
    public KvEventPublisher(final KvEventsSettings settings, final KvEventStager stager, final ZContext context)
    {
        this.settings = settings;
        this.context = context;
        this.stager = stager;
        this.encoder = new KvEventBatchEncoder(settings.eventsAsMaps(), settings.extraKeys(),
            settings.dataParallelRank());
        this.history = new byte[settings.bufferSteps()][];
        this.topic = settings.topic().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @return the engine's side: give it to the engine ({@code EngineConfig.kvEventSink}).
     */
    public KvEventStager sink()
    {
        return stager;
    }

    /**
     * @return the settings.
     */
    public KvEventsSettings settings()
    {
        return settings;
    }

    /**
     * @return the PUB endpoint as bound (a wildcard port resolved), or as connected.
     */
    public String endpoint()
    {
        return bound.join()[0];
    }

    /**
     * @return the replay endpoint as bound, or null when there is none.
     */
    public String replayEndpoint()
    {
        return bound.join()[1];
    }

    /**
     * @return batches sent so far.
     */
    public long publishedBatches()
    {
        return publishedBatches;
    }

    /**
     * @return batches dropped because the engine-to-publisher ring was full.
     */
    public long droppedBatches()
    {
        return stager.droppedBatches();
    }

    /**
     * @return the sockets' endpoints once {@link #onStart()} ran: completes with {@code [pub, replay or null]}, or
     *     exceptionally with an {@link IllegalArgumentException} naming the endpoint that could not be opened.
     */
    CompletableFuture<String[]> bound()
    {
        return bound;
    }

    @Override
    public String roleName()
    {
        return "tapedeck-kv-events";
    }

    /**
     * Open the sockets. Never throws: a socket that cannot be opened fails {@link #bound()} and the publisher then
     * does nothing, so the other publishers on the same thread keep working.
     */
    @Override
    public void onStart()
    {
        try
        {
            publisher = context.createSocket(SocketType.PUB);
            publisher.setSndHWM(HIGH_WATER_MARK);
            publisher.setLinger(1_000);
            if (settings.bindsPublisher())
            {
                publisher.bind(settings.endpoint());
            }
            else
            {
                publisher.connect(settings.endpoint());
            }
            replay = null == settings.replayEndpoint() ? null : context.createSocket(SocketType.ROUTER);
            if (null != replay)
            {
                replay.setLinger(0);
                replay.bind(settings.replayEndpoint());
            }
            bound.complete(new String[] {
                settings.bindsPublisher() ? publisher.getLastEndpoint() : settings.endpoint(),
                null == replay ? null : replay.getLastEndpoint()});
        }
        catch (final RuntimeException ex)
        {
            closeSockets();
            bound.completeExceptionally(new IllegalArgumentException("KV events: cannot open " +
                settings.endpoint() + (null == settings.replayEndpoint() ? "" : " / " +
                settings.replayEndpoint()) + ": " + ex.getMessage(), ex));
        }
    }

    /**
     * One duty cycle: send the batches the engine staged, answer one replay request, report drops.
     *
     * @return work done (0 when idle).
     */
    @Override
    public int doWork()
    {
        if (null == publisher)
        {
            return 0;
        }
        int work = stager.ring().read(batchHandler, BATCHES_PER_POLL);
        if (!delayed.isEmpty())
        {
            work += sendDelayed(false);
        }
        if (null != replay)
        {
            work += serveReplay(replay);
        }
        reportDrops();
        return work;
    }

    /**
     * @param nowNs {@link System#nanoTime()}.
     * @return how long this publisher has nothing to do unless the engine stages a batch (which wakes the thread):
     *     until its first delayed batch is due, else {@link Long#MAX_VALUE}.
     */
    long idleNs(final long nowNs)
    {
        return delayed.isEmpty() ? Long.MAX_VALUE : Math.max(0, delayed.peekFirst()[0] - nowNs);
    }

    /**
     * Wake {@code thread} whenever the engine stages a batch.
     *
     * @param thread the thread running this publisher's duty cycle.
     */
    void wakeOnStage(final Thread thread)
    {
        stager.consumer(thread);
    }

    /**
     * Send what the engine staged, then close the sockets.
     */
    @Override
    public void onClose()
    {
        if (null != publisher)
        {
            while (stager.ring().read(batchHandler, BATCHES_PER_POLL) > 0)
            {
                reportDrops();
            }
            sendDelayed(true);
        }
        closeSockets();
    }

    private void closeSockets()
    {
        if (null != publisher)
        {
            publisher.close();
            publisher = null;
        }
        if (null != replay)
        {
            replay.close();
            replay = null;
        }
    }

    private void onBatch(final int messageType, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final byte[] payload = encoder.encode(buffer, index, length);
        final long sequence = nextSequence++;
        history[(int)(sequence % history.length)] = payload;
        publishedBatches = sequence + 1;
        if (stager.faultDrop())
        {
            faultDroppedBatches++; // numbered and kept for replay: the subscriber sees a gap, as after a lost batch
            return;
        }
        final long delayNs = stager.faultDelayNs();
        if (delayNs > 0 || !delayed.isEmpty())
        {
            delayed.addLast(new long[] {System.nanoTime() + delayNs, sequence});
            return;
        }
        send(sequence, payload);
    }

    private void send(final long sequence, final byte[] payload)
    {
        publisher.sendMore(topic);
        publisher.sendMore(sequenceBytes(sequence));
        publisher.send(payload, 0);
    }

    /** Send the batches held back by a delay fault whose time has come, in order. */
    private int sendDelayed(final boolean all)
    {
        int sent = 0;
        final long nowNs = System.nanoTime();
        while (!delayed.isEmpty() && (all || delayed.peekFirst()[0] - nowNs <= 0))
        {
            final long sequence = delayed.pollFirst()[1];
            if (sequence >= nextSequence - history.length)
            {
                send(sequence, history[(int)(sequence % history.length)]);
            }
            sent++;
        }
        return sent;
    }

    /**
     * @return batches not sent because of a {@code kv-events drop} fault (they stay available for replay).
     */
    public long faultDroppedBatches()
    {
        return faultDroppedBatches;
    }

    private int serveReplay(final ZMQ.Socket replay)
    {
        final byte[] identity = replay.recv(ZMQ.DONTWAIT);
        if (null == identity)
        {
            return 0;
        }
        final List<byte[]> frames = new ArrayList<>();
        while (replay.hasReceiveMore())
        {
            frames.add(replay.recv(0));
        }
        final byte[] start = frames.isEmpty() ? null : frames.get(frames.size() - 1);
        if (null == start || 8 != start.length)
        {
            LOG.log(System.Logger.Level.WARNING, "KV events replay: ignored a request without an 8-byte start " +
                "sequence ({0} frames)", frames.size());
            return 1;
        }
        final long from = Math.max(toLong(start), Math.max(0, nextSequence - history.length));
        for (long sequence = from; sequence < nextSequence; sequence++)
        {
            replay.sendMore(identity);
            replay.sendMore(EMPTY);
            replay.sendMore(sequenceBytes(sequence));
            replay.send(history[(int)(sequence % history.length)], 0);
        }
        replay.sendMore(identity);
        replay.sendMore(EMPTY);
        replay.sendMore(END_MARKER);
        replay.send(EMPTY, 0);
        return 1;
    }

    private void reportDrops()
    {
        final long dropped = stager.droppedBatches();
        if (dropped != droppedLogged)
        {
            LOG.log(System.Logger.Level.WARNING, "KV events: {0} batch(es) dropped in all (the publisher fell " +
                "behind the engine; the ring holds {1} bytes)", dropped, settings.ringBytes());
            droppedLogged = dropped;
        }
    }

    static byte[] sequenceBytes(final long sequence)
    {
        final byte[] bytes = new byte[8];
        for (int i = 7, shift = 0; i >= 0; i--, shift += 8)
        {
            bytes[i] = (byte)(sequence >>> shift);
        }
        return bytes;
    }

    static long toLong(final byte[] bytes)
    {
        long value = 0;
        for (final byte b : bytes)
        {
            value = (value << 8) | (b & 0xff);
        }
        return value;
    }
}
