package dev.tapedeck.engine;

import dev.tapedeck.kv.HostKvTier;
import dev.tapedeck.kv.KvEventSink;
import dev.tapedeck.metrics.OffloadMetrics;

/**
 * vLLM's {@code OffloadingConnector} with its CPU spec (LMCache's local CPU backend is modelled the same way): a
 * second KV tier in host memory ({@link HostKvTier}, LRU) behind the GPU's prefix cache.
 * <ul>
 *   <li>Stores are eager, as vLLM's: every full prompt block computed in a step ({@link #blocksComputed}) is copied
 *       to the host when the next step starts ({@link #stepStarted}), one offloaded block per
 *       {@code block_size / gpu block size} GPU blocks, named by the hash of its last GPU block; a hash the tier holds
 *       is not copied again. The copies queue on the GPU's device-to-host link ({@code bytes / bandwidth} each) and a
 *       block can be loaded once its copy ended; a block being copied or read is not evicted.</li>
 *   <li>Loads: at a request's first admission, the offloaded blocks that follow its GPU prefix hit, as far as they
 *       run unbroken in the tier, are loaded instead of computed ({@link #remoteTokens}); the request waits, holding
 *       its blocks and no step budget ({@code WAITING_FOR_REMOTE_KVS}), for the copy on the host-to-device link
 *       (queued behind earlier loads), while the other requests' steps go on, then computes the rest. A load of less
 *       than one offloaded block is not worth it and is not made, as in vLLM.</li>
 *   <li>KV events with {@code medium} {@code "CPU"}: {@code BlockStored} (no parent, no token ids, the offloaded block
 *       size) for each store, {@code BlockRemoved} for each block evicted to make room.</li>
 * </ul>
 * <b>Not thread safe</b>: every method is called on the engine's thread.
 */
final class CpuOffloadConnector implements KvConnector
{
    private final HostKvTier tier;
    private final int gpuBlockSize;
    private final int groupBlocks;
    private final int offloadedBlockTokens;
    private final long offloadedBlockBytesPerGpu;
    private final long kvBytesPerTokenPerGpu;
    private final double nsPerByte;
    private final KvEventSink events;
    private final OffloadMetrics metrics;
    private final long[] evicted = new long[1];
    /** Hashes of offloaded blocks computed since the last step started, to copy when the next one starts. */
    private long[] pendingHashes = new long[64];
    private int pendingCount;
    private int[] pinned = new int[256];
    private int pinnedHead;
    private int pinnedTail;
    private long[] loadEndNs = new long[16];
    private int[] loadPins = new int[16];
    private int loadsHead;
    private int loadsTail;
    private long storeLinkFreeNs = Long.MIN_VALUE;
    private long loadLinkFreeNs = Long.MIN_VALUE;
    private long stepStartNs;

    /**
     * @param settings the tier's size and link.
     * @param gpuBlockSize the GPU's block size in tokens.
     * @param events where the tier's KV events go, or null.
     * @param metrics where transfers are counted.
     */
    CpuOffloadConnector(final KvOffloadSettings settings, final int gpuBlockSize, final KvEventSink events,
        final OffloadMetrics metrics)
    {
        this.gpuBlockSize = gpuBlockSize;
        this.offloadedBlockTokens = settings.offloadedBlockTokens(gpuBlockSize);
        this.groupBlocks = offloadedBlockTokens / gpuBlockSize;
        this.tier = new HostKvTier(settings.capacityBlocks(gpuBlockSize));
        this.kvBytesPerTokenPerGpu = settings.kvBytesPerTokenPerGpu();
        this.offloadedBlockBytesPerGpu = kvBytesPerTokenPerGpu * offloadedBlockTokens;
        this.nsPerByte = 1e9 / settings.bytesPerSecond();
        this.events = events;
        this.metrics = metrics;
    }

    /**
     * @return the engine's connector: a host tier of its own (wired to its KV cache and metrics) when the
     *     configuration has one, else the configured connector, or null.
     */
    static KvConnector connectorOf(final EngineConfig config, final dev.tapedeck.metrics.EngineMetrics metrics,
        final KvCache kv)
    {
        final KvOffloadSettings offload = config.kvOffload();
        if (null == offload)
        {
            return config.kvConnector();
        }
        final OffloadMetrics offloadMetrics = new OffloadMetrics(offload.capacityBlocks(config.blockSize()));
        metrics.offload(offloadMetrics);
        final CpuOffloadConnector tier = new CpuOffloadConnector(offload, config.blockSize(), config.kvEventSink(),
            offloadMetrics);
        kv.offload(tier);
        return tier;
    }

    HostKvTier tier()
    {
        return tier;
    }

    /**
     * @param startNs the start of the step being scheduled: the copies of the blocks computed by the steps before it
     *     start now (vLLM defers a store to the next step, after that step's sampling transfers), and lookups see the
     *     copies that ended by then.
     */
    void stepStarted(final long startNs)
    {
        stepStartNs = startNs;
        if (0 == pendingCount)
        {
            return;
        }
        int stored = 0;
        final long copyNs = (long)(offloadedBlockBytesPerGpu * nsPerByte);
        for (int i = 0; i < pendingCount; i++)
        {
            final long readyNs = Math.max(storeLinkFreeNs, startNs) + copyNs;
            final int outcome = tier.store(pendingHashes[i], startNs, readyNs, evicted);
            if (outcome <= 0)
            {
                continue; // held already, or every block is being read or written (vLLM's manager skips it too)
            }
            storeLinkFreeNs = readyNs;
            if (2 == outcome && null != events)
            {
                events.offloadedBlockRemoved(evicted[0]);
            }
            pendingHashes[stored++] = pendingHashes[i];
        }
        pendingCount = 0;
        if (stored > 0)
        {
            metrics.onStore(stored * offloadedBlockBytesPerGpu, stored * copyNs, tier.used());
            if (null != events)
            {
                events.offloadedBlocksStored(pendingHashes, stored, offloadedBlockTokens);
            }
        }
    }

    /**
     * Full prompt blocks {@code [fromBlock, toBlock)} of the request are computed (or, at its admission, found in the
     * GPU's cache) in the step being scheduled: the offloaded blocks they complete are copied to the host tier when
     * the next step starts, unless the tier holds them.
     */
    void blocksComputed(final Request request, final int fromBlock, final int toBlock)
    {
        final long[] hashes = request.blockHashes;
        if (null == hashes)
        {
            return;
        }
        // offloaded block g ends with GPU block (g + 1) * groupBlocks - 1
        for (int g = fromBlock / groupBlocks; (g + 1) * groupBlocks <= toBlock; g++)
        {
            final int last = (g + 1) * groupBlocks - 1;
            if (last < fromBlock || tier.contains(hashes[last]))
            {
                continue;
            }
            if (pendingCount == pendingHashes.length)
            {
                pendingHashes = java.util.Arrays.copyOf(pendingHashes, 2 * pendingCount);
            }
            pendingHashes[pendingCount++] = hashes[last];
        }
    }

    @Override
    public int remoteTokens(final Request request, final int localHitTokens)
    {
        final long[] hashes = request.blockHashes;
        if (null == hashes)
        {
            return 0;
        }
        // whole offloaded blocks of the prompt; a load that reaches the prompt's end has its last token recomputed
        final int fullBlocks = hashes.length / groupBlocks;
        final int start = localHitTokens / offloadedBlockTokens;
        int hits = 0;
        for (int g = start; g < fullBlocks; g++)
        {
            if (HostKvTier.NONE == tier.lookup(hashes[(g + 1) * groupBlocks - 1], stepStartNs))
            {
                break;
            }
            hits++;
        }
        final int hitTokens = (start + hits) * offloadedBlockTokens - localHitTokens;
        return hitTokens < offloadedBlockTokens ? 0 : hitTokens;
    }

    @Override
    public long startLoad(final Request request, final int fromBlock, final int toBlock, final long nowNs)
    {
        final long[] hashes = request.blockHashes;
        final int firstGroup = fromBlock / groupBlocks;
        final int endGroup = toBlock / groupBlocks;
        int pins = 0;
        for (int g = firstGroup; g < endGroup; g++)
        {
            final int block = tier.lookup(hashes[(g + 1) * groupBlocks - 1], nowNs);
            if (HostKvTier.NONE != block)
            {
                tier.pin(block);
                pushPin(block);
                pins++;
            }
        }
        final long bytes = (long)(toBlock - fromBlock) * gpuBlockSize * kvBytesPerTokenPerGpu;
        final long copyNs = (long)(bytes * nsPerByte);
        final long doneNs = Math.max(loadLinkFreeNs, nowNs) + copyNs;
        loadLinkFreeNs = doneNs;
        pushLoad(doneNs, pins);
        metrics.onLoad(bytes, copyNs, (toBlock - fromBlock) * gpuBlockSize);
        return doneNs;
    }

    @Override
    public boolean requestFinished(final Request request, final long nowNs)
    {
        return false;
    }

    @Override
    public void poll(final Completions completions, final long nowNs)
    {
        // loads end in the order they started (one link): unpin the blocks of those that ended
        while (loadsHead != loadsTail && loadEndNs[loadsHead] - nowNs <= 0)
        {
            for (int i = loadPins[loadsHead]; i > 0; i--)
            {
                tier.unpin(pinned[pinnedHead]);
                pinnedHead = (pinnedHead + 1) % pinned.length;
            }
            loadsHead = (loadsHead + 1) % loadEndNs.length;
        }
    }

    @Override
    public long nextDeadlineNs()
    {
        return Long.MAX_VALUE; // unpinning waits for the next poll; the load's end has its own timer
    }

    private void pushPin(final int block)
    {
        if ((pinnedTail + 1) % pinned.length == pinnedHead)
        {
            final int[] grown = new int[2 * pinned.length];
            int n = 0;
            for (int i = pinnedHead; i != pinnedTail; i = (i + 1) % pinned.length)
            {
                grown[n++] = pinned[i];
            }
            pinned = grown;
            pinnedHead = 0;
            pinnedTail = n;
        }
        pinned[pinnedTail] = block;
        pinnedTail = (pinnedTail + 1) % pinned.length;
    }

    private void pushLoad(final long doneNs, final int pins)
    {
        if ((loadsTail + 1) % loadEndNs.length == loadsHead)
        {
            final long[] ends = new long[2 * loadEndNs.length];
            final int[] counts = new int[2 * loadEndNs.length];
            int n = 0;
            for (int i = loadsHead; i != loadsTail; i = (i + 1) % loadEndNs.length)
            {
                ends[n] = loadEndNs[i];
                counts[n++] = loadPins[i];
            }
            loadEndNs = ends;
            loadPins = counts;
            loadsHead = 0;
            loadsTail = n;
        }
        loadEndNs[loadsTail] = doneNs;
        loadPins[loadsTail] = pins;
        loadsTail = (loadsTail + 1) % loadEndNs.length;
    }
}
