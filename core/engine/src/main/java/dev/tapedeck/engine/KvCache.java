package dev.tapedeck.engine;

import java.util.Arrays;

import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kv.BlockPool;
import dev.tapedeck.kv.KvEventSink;
import dev.tapedeck.kv.KvResidency;
import dev.tapedeck.lora.LoraAdapter;

/**
 * The engine's KV-cache manager, after vLLM V1's: each request holds a block table of
 * {@code ceil(tokens / block-size)} blocks from the {@link BlockPool}; at admission the longest run of its full
 * prompt blocks already cached is shared instead of computed (never the whole prompt: the last token is always
 * computed); blocks are allocated when a prefill chunk or a decode token is scheduled, full prompt blocks are cached
 * by their chained hash ({@link BlockHasher}) as soon as they are scheduled, and a request frees its blocks last
 * block first when it finishes or is preempted (so its tail is evicted before its shared prefix).
 * <p>
 * Only prompt blocks are hashed (once, at submission); blocks of generated tokens are allocated but not cached. A
 * request's LoRA adapter name is an extra key of every block hash and its cache salt one of the first block, so
 * requests of different adapters (or salts) never share blocks, as in vLLM.
 * <p>
 * <b>Not thread safe</b>: owned by the engine's thread; nothing here allocates except {@link #prepare(Request)} and
 * the rare doubling of a long-running request's block table.
 */
final class KvCache
{
    private static final int INITIAL_OUTPUT_TOKENS = 1024;

    private final BlockPool pool;
    private final BlockHasher hasher;
    private final KvResidency residency;
    private final int blockSize;
    private final boolean prefixCaching;
    private final KvEventSink events;
    /** The host tier blocks are copied to as they are computed, or null. */
    private CpuOffloadConnector offload;
    /** Prompt blocks are hashed: for the prefix cache, or for a host tier (vLLM hashes whenever a connector is set). */
    private final boolean hashing;
    /**
     * The blocks the last {@link #findCachedBlocks} found, in order, for the {@link #allocate} that follows it and,
     * while the pool's watch on them holds, for the next lookup of the same request (a waiting request refused for
     * want of blocks is looked up again every step).
     */
    private int[] foundBlocks = new int[64];
    private int foundCount;
    private int foundLimit;
    private Request foundFor;

    /**
     * @param metrics where the residency sample goes ({@code --kv-cache-metrics}, with prefix caching only: without
     *     it vLLM's pool never notes an eviction).
     */
    KvCache(final EngineConfig config, final dev.tapedeck.metrics.EngineMetrics metrics)
    {
        pool = new BlockPool(config.kvCacheBlocks());
        events = config.kvEventSink();
        pool.eventSink(events);
        blockSize = config.blockSize();
        prefixCaching = config.enablePrefixCaching();
        hashing = prefixCaching || null != config.kvOffload();
        hasher = hashing ? new BlockHasher(config.prefixCachingHashSeed(), config.prefixCachingHashAlgo()) :
            null;
        residency = prefixCaching && config.kvCacheMetricsSample() > 0 ? new KvResidency(config.kvCacheBlocks(),
            config.kvCacheMetricsSample(), config.seed(), metrics) : null;
        pool.residency(residency);
    }

    /**
     * @param startNs the start of the step being scheduled: the time of the allocations, hits and evictions in it.
     */
    void stepStarted(final long startNs)
    {
        if (null != offload)
        {
            offload.stepStarted(startNs);
        }
        if (null != residency)
        {
            residency.stepStarted(startNs);
        }
    }

    /**
     * @param value the host tier computed prompt blocks are copied to.
     */
    void offload(final CpuOffloadConnector value)
    {
        offload = value;
    }

    BlockPool pool()
    {
        return pool;
    }

    int blockSize()
    {
        return blockSize;
    }

    boolean prefixCaching()
    {
        return prefixCaching;
    }

    double usage()
    {
        return pool.usage();
    }

    /**
     * Size the request's block table for its prompt and a first stretch of output, and hash its full prompt blocks
     * unless the caller handed them over ({@link Request#blockHashes(long[])}) (the allocations of a request; a long
     * answer doubles the table a few times, never per token).
     */
    void prepare(final Request request)
    {
        final long tokens = Math.min((long)request.promptLength() + request.outputLimit,
            (long)request.promptLength() + INITIAL_OUTPUT_TOKENS);
        request.blockTable = new int[blocksFor((int)tokens)];
        request.numBlocks = 0;
        request.numRegisteredBlocks = 0;
        if (!hashing)
        {
            request.blockHashes = null; // handed over by the caller, of no use
        }
        else if (null == request.blockHashes)
        {
            final LoraAdapter lora = request.lora();
            request.blockHashes = hasher.blockHashes(request.promptTokenIds(), blockSize,
                null == lora ? null : lora.name(), request.cacheSalt(), request.media());
        }
        request.numHashedBlocks = null == request.blockHashes ? 0 : request.blockHashes.length;
    }

    /**
     * How many prompt tokens of a request not yet submitted the cache holds now, in whole leading blocks, without
     * touching the cache (a frontend's admission check, such as llm-d's {@code cache_hit_threshold}). The prompt's
     * block hashes are computed and kept on the request for its admission.
     *
     * @return cached prompt tokens.
     */
    int peekCachedTokens(final Request request)
    {
        if (!prefixCaching)
        {
            return 0;
        }
        if (null == request.blockHashes)
        {
            final LoraAdapter lora = request.lora();
            request.blockHashes = hasher.blockHashes(request.promptTokenIds(), blockSize,
                null == lora ? null : lora.name(), request.cacheSalt(), request.media());
        }
        final long[] hashes = request.blockHashes;
        final int limit = Math.min(hashes.length, (request.promptLength() - 1) / blockSize);
        int blocks = 0;
        while (blocks < limit && pool.cachedBlock(hashes[blocks]) >= 0)
        {
            blocks++;
        }
        return blocks * blockSize;
    }

    /**
     * @return how many leading full prompt blocks of a request with nothing computed are cached, leaving at least the
     *     last token to compute.
     */
    int findCachedBlocks(final Request request)
    {
        final long[] hashes = request.blockHashes;
        if (!prefixCaching || null == hashes)
        {
            return 0;
        }
        final int limit = Math.min(hashes.length, (request.numTokens() - 1) / blockSize);
        if (foundFor == request && foundLimit == limit && pool.watchHolds())
        {
            // no block found last time was evicted and the hash that missed is still missing: the same blocks
            return foundCount;
        }
        if (foundBlocks.length < limit)
        {
            foundBlocks = new int[Math.max(limit, 2 * foundBlocks.length)];
        }
        int blocks = 0;
        int block;
        while (blocks < limit && (block = pool.cachedBlock(hashes[blocks])) >= 0)
        {
            foundBlocks[blocks++] = block;
        }
        foundFor = request;
        foundCount = blocks;
        foundLimit = limit;
        pool.watch(foundBlocks, blocks, blocks < limit, blocks < limit ? hashes[blocks] : 0);
        return blocks;
    }

    /**
     * Give the request the blocks its next {@code newTokens} need, after sharing its first {@code hitBlocks} cached
     * blocks (only for a request with no blocks yet). Nothing changes when the pool cannot supply them.
     *
     * @return false when too few blocks are free.
     */
    boolean allocate(final Request request, final int hitBlocks, final int newTokens)
    {
        if (!allocateBlocks(request, hitBlocks, newTokens))
        {
            return false;
        }
        cacheFullBlocks(request, request.numComputedTokens + hitBlocks * blockSize + newTokens);
        return true;
    }

    /**
     * Give the request blocks for {@code newTokens} after its first {@code hitBlocks} cached blocks, without caching
     * them: they are to be filled by a pull from a remote engine, and cached ({@link #cacheFullBlocks}) once it
     * succeeded, as vLLM caches them.
     *
     * @return false when too few blocks are free.
     */
    boolean allocateForLoad(final Request request, final int hitBlocks, final int newTokens)
    {
        return allocateBlocks(request, hitBlocks, newTokens);
    }

    private boolean allocateBlocks(final Request request, final int hitBlocks, final int newTokens)
    {
        // the hits are the blocks findCachedBlocks just found for this request (nothing changed the pool since)
        final int[] hits = foundFor == request ? foundBlocks : null;
        if (0 == hitBlocks && null == hits
            && request.numComputedTokens + newTokens <= (long)request.numBlocks * blockSize)
        {
            return true; // most decode steps: the request's last block has room for the new token
        }
        final long[] hashes = request.blockHashes;
        int hitsOnFreeBlocks = 0;
        if (null != hits && hitBlocks == foundCount && pool.watchHolds())
        {
            hitsOnFreeBlocks = pool.watchedFreeBlocks();
        }
        else
        {
            for (int i = 0; i < hitBlocks; i++)
            {
                if (0 == pool.refCount(null != hits ? hits[i] : pool.cachedBlock(hashes[i])))
                {
                    hitsOnFreeBlocks++;
                }
            }
        }
        final int tokensAfter = request.numComputedTokens + hitBlocks * blockSize + newTokens;
        final int newBlocks = Math.max(0, blocksFor(tokensAfter) - request.numBlocks - hitBlocks);
        if (newBlocks + hitsOnFreeBlocks > pool.freeBlocks())
        {
            return false;
        }
        if (request.numBlocks + hitBlocks + newBlocks > request.blockTable.length)
        {
            final long most = blocksFor((int)Math.min(Integer.MAX_VALUE,
                (long)request.promptLength() + request.outputLimit));
            final long doubled = Math.min(2L * request.blockTable.length, most);
            request.blockTable = Arrays.copyOf(request.blockTable,
                (int)Math.max(doubled, request.numBlocks + hitBlocks + newBlocks));
        }
        final int[] table = request.blockTable;
        for (int i = 0; i < hitBlocks; i++)
        {
            final int block = null != hits ? hits[i] : pool.cachedBlock(hashes[i]);
            pool.acquire(block);
            table[request.numBlocks++] = block;
        }
        if (null != hits)
        {
            foundFor = null;
            pool.unwatch();
        }
        if (null != offload && hitBlocks > 0)
        {
            offload.blocksComputed(request, 0, hitBlocks); // vLLM's store index starts at 0: missing hits are copied
        }
        request.numRegisteredBlocks = Math.max(request.numRegisteredBlocks, hitBlocks);
        for (int i = 0; i < newBlocks; i++)
        {
            table[request.numBlocks++] = pool.allocate();
        }
        return true;
    }

    /**
     * Cache the request's full prompt blocks up to {@code tokens}, publishing {@code BlockStored} for the new ones.
     */
    void cacheFullBlocks(final Request request, final int tokens)
    {
        if (request.numRegisteredBlocks >= request.numHashedBlocks
            || tokens < (request.numRegisteredBlocks + 1L) * blockSize)
        {
            // every hashed (prompt) block is registered, or none became full since the last call: most decode steps
            return;
        }
        final long[] hashes = request.blockHashes;
        final int[] table = request.blockTable;
        if (null != hashes)
        {
            final int full = Math.min(Math.min(tokens / blockSize, hashes.length), request.numBlocks);
            int runStart = -1;
            for (int i = request.numRegisteredBlocks; i < full && prefixCaching; i++)
            {
                final boolean stored = pool.cache(table[i], hashes[i]);
                if (stored && runStart < 0)
                {
                    runStart = i;
                }
                else if (!stored && runStart >= 0)
                {
                    reportStored(request, runStart, i);
                    runStart = -1;
                }
            }
            if (runStart >= 0)
            {
                reportStored(request, runStart, full);
            }
            if (null != offload && full > request.numRegisteredBlocks)
            {
                offload.blocksComputed(request, request.numRegisteredBlocks, full);
            }
            request.numRegisteredBlocks = Math.max(request.numRegisteredBlocks, full);
        }
    }

    /** One {@code BlockStored} per run of consecutive blocks the pool cached (a block cached elsewhere breaks it). */
    private void reportStored(final Request request, final int fromBlock, final int toBlock)
    {
        if (null != events)
        {
            final LoraAdapter lora = request.lora();
            events.blockStored(request.blockHashes, fromBlock, toBlock - fromBlock, request.promptTokenIds(),
                blockSize, null == lora ? 0 : lora.id(), null == lora ? null : lora.nameUtf8(),
                request.cacheSaltUtf8(), request.media());
        }
    }

    /**
     * The engine step's events are complete.
     *
     * @param nowNs the end of the step.
     */
    void endOfStep(final long nowNs)
    {
        if (null != events)
        {
            events.endOfStep(nowNs);
        }
    }

    /**
     * Release every block of the request, its last block first.
     */
    void free(final Request request)
    {
        final int[] table = request.blockTable;
        for (int i = request.numBlocks - 1; i >= 0; i--)
        {
            pool.release(table[i]);
        }
        request.numBlocks = 0;
        request.numRegisteredBlocks = 0;
    }

    int blocksFor(final int tokens)
    {
        return (tokens + blockSize - 1) / blockSize;
    }
}
