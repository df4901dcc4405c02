package dev.tapedeck.kv;

/**
 * Told of every change to the set of cached blocks, in the order it happens, as vLLM's KV-cache events describe it:
 * full blocks entering the cache ({@code BlockStored}), cached blocks dropped because their block was reused
 * ({@code BlockRemoved}), and the whole cache forgotten ({@code AllBlocksCleared}); {@link #endOfStep(long)} closes the
 * events of one engine step (one published batch).
 * <p>
 * Arrays are lent for the duration of the call only: an implementation copies what it keeps and allocates nothing.
 * <b>Threading</b>: called on the engine's thread only.
 */
public interface KvEventSink
{
    /**
     * Consecutive full blocks of one request entered the cache. The parent of block {@code firstBlock} is
     * {@code blockHashes[firstBlock - 1]}, none (the root) when {@code firstBlock} is 0.
     *
     * @param blockHashes the request's chained block hashes (low 64 bits), all of them.
     * @param firstBlock index of the first stored block.
     * @param blockCount number of stored blocks.
     * @param tokenIds the request's token ids; the stored blocks cover {@code blockCount * blockSize} of them from
     *     {@code firstBlock * blockSize}.
     * @param blockSize tokens per block.
     * @param loraId the id of the request's LoRA adapter ({@code lora_int_id}), 0 for the base model.
     * @param loraNameUtf8 the adapter's name in UTF-8, or null for the base model.
     * @param cacheSaltUtf8 the request's {@code cache_salt} in UTF-8 (an extra key of its first block), or null.
     * @param media where the request's media sit (their identifiers are extra keys of the blocks they touch), or null.
     */
    void blockStored(long[] blockHashes, int firstBlock, int blockCount, int[] tokenIds, int blockSize, int loraId,
        byte[] loraNameUtf8, byte[] cacheSaltUtf8, MediaSpans media);

    /**
     * Consecutive full blocks of a base-model request entered the cache (no LoRA adapter).
     *
     * @param blockHashes the request's chained block hashes (low 64 bits), all of them.
     * @param firstBlock index of the first stored block.
     * @param blockCount number of stored blocks.
     * @param tokenIds the request's token ids.
     * @param blockSize tokens per block.
     */
    default void blockStored(final long[] blockHashes, final int firstBlock, final int blockCount,
        final int[] tokenIds, final int blockSize)
    {
        blockStored(blockHashes, firstBlock, blockCount, tokenIds, blockSize, 0, null, null, null);
    }

    /**
     * A cached block was evicted: its block is reused for new content.
     *
     * @param blockHash the hash it cached.
     */
    void blockRemoved(long blockHash);

    /**
     * Blocks entered the host (CPU) tier of an offloading connector. vLLM reports them as {@code BlockStored} with
     * {@code medium} {@code "CPU"}, no parent and no token ids.
     *
     * @param blockHashes the stored blocks' hashes, in {@code [0, blockCount)}.
     * @param blockCount number of stored blocks.
     * @param blockSize tokens per offloaded block.
     */
    void offloadedBlocksStored(long[] blockHashes, int blockCount, int blockSize);

    /**
     * A block of the host (CPU) tier was evicted to make room ({@code BlockRemoved}, {@code medium} {@code "CPU"}).
     *
     * @param blockHash the hash it held.
     */
    void offloadedBlockRemoved(long blockHash);

    /**
     * Every cached block was forgotten ({@code reset_prefix_cache}).
     */
    void allBlocksCleared();

    /**
     * The events since the previous call belong to one engine step; publish them as one batch (nothing when none).
     *
     * @param nowNs the end of the step on the engine's clock: the batch's timestamp.
     */
    void endOfStep(long nowNs);
}
