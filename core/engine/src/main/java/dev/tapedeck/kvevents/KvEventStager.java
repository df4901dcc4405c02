package dev.tapedeck.kvevents;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import dev.tapedeck.kv.KvEventSink;

/**
 * The engine's side of KV-cache events: collects one step's events in a compact binary record and, at
 * {@link #endOfStep(long)}, hands the record to the publisher through a bounded single-producer ring (Agrona's
 * {@link OneToOneRingBuffer}). Never blocks: when the ring is full the step's batch is dropped and counted in
 * {@link #droppedBatches()} (the publisher logs it). Allocates nothing once its staging buffer has grown to the
 * largest step seen.
 * <p>
 * Record layout (native order): {@code long epochNs} (the step's end on the engine's clock, moved to the epoch by
 * the offset between the two clocks read once at construction), then events: {@code byte STORED, int blockCount,
 * int blockSize, byte hasParent, long parent, int loraId (0: none), int loraNameLength (-1: none),
 * int cacheSaltLength (-1: none, or not the request's first block), byte hasMedia, byte[loraNameLength] loraName,
 * byte[cacheSaltLength] cacheSalt, long[blockCount] hashes, int[blockCount * blockSize] tokens, and with media per
 * block {@code int keys} and that many {@code int length, byte[length] identifier}};
 * {@code byte REMOVED, long hash}; {@code byte CLEARED}; for the host tier
 * {@code byte OFFLOADED_STORED, int blockCount, int blockSize, long[blockCount] hashes} and
 * {@code byte OFFLOADED_REMOVED, long hash}.
 * <p>
 * <b>Threading</b>: the {@link KvEventSink} methods are called on the engine's thread only; {@link #ring()} is read
 * by the publisher's thread; {@link #droppedBatches()} from any thread.
 */
public final class KvEventStager implements KvEventSink
{
    /** The publishing thread, woken when a batch is staged; null until it runs. */
    private volatile Thread consumer;
    private volatile boolean faultDrop;
    private volatile long faultDelayNs;
    static final byte STORED = 1;
    static final byte REMOVED = 2;
    static final byte CLEARED = 3;
    static final byte OFFLOADED_STORED = 4;
    static final byte OFFLOADED_REMOVED = 5;
    static final int BATCH_MESSAGE = 1;
    static final int HEADER_BYTES = Long.BYTES;

    private final OneToOneRingBuffer ring;
    private final ExpandableArrayBuffer staging = new ExpandableArrayBuffer(64 * 1024);
    private final AtomicLong droppedBatches = new AtomicLong();
    private final long epochBaseNs;
    private final long nanoBase;
    private int length = HEADER_BYTES;

    /**
     * A stager for an engine on the system's clock.
     *
     * @param ringBytes ring capacity, a power of two.
     */
    public KvEventStager(final int ringBytes)
    {
        this(ringBytes, SystemNanoClock.INSTANCE, SystemEpochNanoClock.INSTANCE);
    }

    /**
     * @param ringBytes ring capacity, a power of two.
     * @param engineClock the engine's clock, whose times {@link #endOfStep(long)} receives.
     * @param epochClock the wall clock batches are dated by.
     */
    public KvEventStager(final int ringBytes, final NanoClock engineClock, final EpochNanoClock epochClock)
    {
        ring = new OneToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(ringBytes + RingBufferDescriptor.TRAILER_LENGTH)));
        nanoBase = engineClock.nanoTime();
        epochBaseNs = epochClock.nanoTime();
    }

    @Override
    public void blockStored(final long[] blockHashes, final int firstBlock, final int blockCount,
        final int[] tokenIds, final int blockSize, final int loraId, final byte[] loraNameUtf8,
        final byte[] cacheSaltUtf8, final dev.tapedeck.kv.MediaSpans media)
    {
        // the salt is an extra key of the request's first block only
        final byte[] salt = 0 == firstBlock ? cacheSaltUtf8 : null;
        staging.putByte(length, STORED);
        staging.putInt(length + 1, blockCount);
        staging.putInt(length + 5, blockSize);
        staging.putByte(length + 9, (byte)(firstBlock > 0 ? 1 : 0));
        staging.putLong(length + 10, firstBlock > 0 ? blockHashes[firstBlock - 1] : 0L);
        staging.putInt(length + 18, loraId);
        staging.putInt(length + 22, null == loraNameUtf8 ? -1 : loraNameUtf8.length);
        staging.putInt(length + 26, null == salt ? -1 : salt.length);
        staging.putByte(length + 30, (byte)(null == media ? 0 : 1));
        length += 31;
        if (null != loraNameUtf8)
        {
            staging.putBytes(length, loraNameUtf8);
            length += loraNameUtf8.length;
        }
        if (null != salt)
        {
            staging.putBytes(length, salt);
            length += salt.length;
        }
        for (int i = 0; i < blockCount; i++)
        {
            staging.putLong(length, blockHashes[firstBlock + i]);
            length += Long.BYTES;
        }
        final int from = firstBlock * blockSize;
        final int tokens = blockCount * blockSize;
        for (int i = 0; i < tokens; i++)
        {
            staging.putInt(length, tokenIds[from + i]);
            length += Integer.BYTES;
        }
        if (null != media)
        {
            for (int b = firstBlock; b < firstBlock + blockCount; b++)
            {
                final long keys = media.keysOfBlock(b * blockSize, (b + 1) * blockSize);
                final int first = (int)(keys >>> 32);
                staging.putInt(length, (int)keys);
                length += Integer.BYTES;
                for (int m = first; m < first + (int)keys; m++)
                {
                    final byte[] identifier = media.identifierUtf8(m);
                    staging.putInt(length, identifier.length);
                    staging.putBytes(length + Integer.BYTES, identifier);
                    length += Integer.BYTES + identifier.length;
                }
            }
        }
    }

    @Override
    public void blockRemoved(final long blockHash)
    {
        staging.putByte(length, REMOVED);
        staging.putLong(length + 1, blockHash);
        length += 1 + Long.BYTES;
    }

    @Override
    public void offloadedBlocksStored(final long[] blockHashes, final int blockCount, final int blockSize)
    {
        staging.putByte(length, OFFLOADED_STORED);
        staging.putInt(length + 1, blockCount);
        staging.putInt(length + 5, blockSize);
        length += 9;
        for (int i = 0; i < blockCount; i++)
        {
            staging.putLong(length, blockHashes[i]);
            length += Long.BYTES;
        }
    }

    @Override
    public void offloadedBlockRemoved(final long blockHash)
    {
        staging.putByte(length, OFFLOADED_REMOVED);
        staging.putLong(length + 1, blockHash);
        length += 1 + Long.BYTES;
    }

    @Override
    public void allBlocksCleared()
    {
        staging.putByte(length++, CLEARED);
    }

    @Override
    public void endOfStep(final long nowNs)
    {
        if (HEADER_BYTES == length)
        {
            return;
        }
        staging.putLong(0, epochBaseNs + (nowNs - nanoBase));
        if (length > ring.maxMsgLength() || !ring.write(BATCH_MESSAGE, staging, 0, length))
        {
            droppedBatches.incrementAndGet();
        }
        else if (null != consumer)
        {
            LockSupport.unpark(consumer); // the publisher's thread may be parked while nothing is staged
        }
        length = HEADER_BYTES;
    }

    /**
     * @param thread the thread that reads the ring, unparked when a batch is staged (it may wait parked for one).
     */
    void consumer(final Thread thread)
    {
        consumer = thread;
    }

    /**
     * @return batches dropped because the ring was full (or one step's events exceeded a ring message).
     */
    public long droppedBatches()
    {
        return droppedBatches.get();
    }

    /**
     * Inject a fault into what the publisher sends: from now on its batches are dropped (still numbered and kept for
     * replay, so a subscriber sees the gap), or held back. Any thread.
     *
     * @param drop true to drop batches.
     * @param delayNs how long to hold each batch back (0: none).
     */
    public void fault(final boolean drop, final long delayNs)
    {
        faultDelayNs = delayNs;
        faultDrop = drop;
    }

    boolean faultDrop()
    {
        return faultDrop;
    }

    long faultDelayNs()
    {
        return faultDelayNs;
    }

    OneToOneRingBuffer ring()
    {
        return ring;
    }
}
