package dev.tapedeck.kvevents;

import java.nio.charset.StandardCharsets;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackWriter;

/**
 * Encodes one staged step record ({@link KvEventStager}) as vLLM's msgpack {@code KVEventBatch}: the positional array
 * {@code [ts, [events...], data_parallel_rank]} with {@code ts} in float seconds since the epoch. Events are
 * positional arrays tagged by type ({@code ["BlockStored", block_hashes, parent_block_hash, token_ids, block_size,
 * lora_id, medium, lora_name]}, {@code ["BlockRemoved", block_hashes, medium]}, {@code ["AllBlocksCleared"]}), as
 * vLLM up to 0.22 sends them, or maps with a {@code "type"} key (0.23 and newer): {@code BlockStored} with
 * {@code block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name, group_idx,
 * kv_cache_spec_kind}, {@code BlockRemoved} with {@code block_hashes, medium, group_idx}. Block hashes are unsigned
 * 64-bit integers (vLLM's default {@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1}); the parent is nil for a first
 * block; {@code lora_id} and {@code lora_name} are the request's adapter id and name, nil for the base model; the
 * medium is {@code "GPU"}, or {@code "CPU"} for the host tier of an offloading connector (whose stores carry no parent,
 * no token ids, no LoRA and no extra keys, as vLLM's connector reports them).
 * <p>
 * <b>Not thread safe</b>: owned by the publisher's thread.
 */
final class KvEventBatchEncoder
{
    private static final byte[] BLOCK_STORED = ascii("BlockStored");
    private static final byte[] BLOCK_REMOVED = ascii("BlockRemoved");
    private static final byte[] ALL_BLOCKS_CLEARED = ascii("AllBlocksCleared");
    private static final byte[] GPU = ascii("GPU");
    private static final byte[] CPU = ascii("CPU");
    private static final byte[] FULL_ATTENTION = ascii("full_attention");
    private static final byte[] TYPE = ascii("type");
    private static final byte[] BLOCK_HASHES = ascii("block_hashes");
    private static final byte[] PARENT_BLOCK_HASH = ascii("parent_block_hash");
    private static final byte[] TOKEN_IDS = ascii("token_ids");
    private static final byte[] BLOCK_SIZE = ascii("block_size");
    private static final byte[] LORA_ID = ascii("lora_id");
    private static final byte[] MEDIUM = ascii("medium");
    private static final byte[] LORA_NAME = ascii("lora_name");
    private static final byte[] EXTRA_KEYS = ascii("extra_keys");
    private static final byte[] GROUP_IDX = ascii("group_idx");
    private static final byte[] KV_CACHE_SPEC_KIND = ascii("kv_cache_spec_kind");

    private final MsgPackWriter writer = new MsgPackWriter();
    private final ExpandableArrayBuffer out = new ExpandableArrayBuffer(64 * 1024);
    private final boolean asMaps;
    /** {@code BlockStored} carries {@code extra_keys} (and, as an array, {@code group_idx}): vLLM 0.19 and newer. */
    private final boolean extraKeys;
    private final int dataParallelRank;

    KvEventBatchEncoder(final boolean asMaps, final boolean extraKeys, final int dataParallelRank)
    {
        this.asMaps = asMaps;
        this.extraKeys = asMaps || extraKeys;
        this.dataParallelRank = dataParallelRank;
    }

    private static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * @param record a staged step record.
     * @param index its first byte.
     * @param length its length.
     * @return the msgpack bytes of the batch.
     */
    byte[] encode(final DirectBuffer record, final int index, final int length)
    {
        writer.wrap(out, 0).arrayHeader(3).float64(record.getLong(index) / 1e9);
        final int events = writer.beginArray();
        int count = 0;
        int at = index + KvEventStager.HEADER_BYTES;
        final int end = index + length;
        while (at < end)
        {
            final byte type = record.getByte(at++);
            count++;
            if (KvEventStager.STORED == type)
            {
                at = stored(record, at);
            }
            else if (KvEventStager.REMOVED == type)
            {
                removed(record.getLong(at), GPU);
                at += Long.BYTES;
            }
            else if (KvEventStager.OFFLOADED_STORED == type)
            {
                at = offloadedStored(record, at);
            }
            else if (KvEventStager.OFFLOADED_REMOVED == type)
            {
                removed(record.getLong(at), CPU);
                at += Long.BYTES;
            }
            else if (KvEventStager.CLEARED == type)
            {
                if (asMaps)
                {
                    writer.mapHeader(1).string(TYPE);
                }
                else
                {
                    writer.arrayHeader(1);
                }
                writer.string(ALL_BLOCKS_CLEARED);
            }
            else
            {
                throw new IllegalStateException("corrupt KV event record: type " + type + " at " + (at - 1));
            }
        }
        writer.endArray(events, count).int64(dataParallelRank);
        final byte[] bytes = new byte[writer.length()];
        out.getBytes(0, bytes);
        return bytes;
    }

    private int stored(final DirectBuffer record, final int start)
    {
        int at = start;
        final int blockCount = record.getInt(at);
        final int blockSize = record.getInt(at + 4);
        final boolean hasParent = 0 != record.getByte(at + 8);
        final long parent = record.getLong(at + 9);
        final int loraId = record.getInt(at + 17);
        final int loraNameLength = record.getInt(at + 21);
        final int saltLength = record.getInt(at + 25);
        final boolean hasMedia = 0 != record.getByte(at + 29);
        at += 30;
        final int loraNameAt = at;
        if (loraNameLength > 0)
        {
            at += loraNameLength;
        }
        final int saltAt = at;
        if (saltLength > 0)
        {
            at += saltLength;
        }
        at = storedHashes(record, at, blockCount);
        key(PARENT_BLOCK_HASH);
        if (hasParent)
        {
            writer.uint64(parent);
        }
        else
        {
            writer.nil();
        }
        key(TOKEN_IDS);
        final int tokens = blockCount * blockSize;
        writer.arrayHeader(tokens);
        for (int i = 0; i < tokens; i++)
        {
            writer.int64(record.getInt(at));
            at += Integer.BYTES;
        }
        key(BLOCK_SIZE);
        writer.int64(blockSize);
        key(LORA_ID);
        if (0 != loraId)
        {
            writer.int64(loraId);
        }
        else
        {
            writer.nil();
        }
        key(MEDIUM);
        writer.string(GPU);
        key(LORA_NAME);
        if (loraNameLength >= 0)
        {
            writer.string(record, loraNameAt, loraNameLength);
        }
        else
        {
            writer.nil();
        }
        if (extraKeys)
        {
            key(EXTRA_KEYS);
            final int end = extraKeys(record, blockCount, !hasParent, loraNameAt, loraNameLength, saltAt,
                saltLength, hasMedia ? at : -1);
            at = hasMedia ? end : at;
        }
        else if (hasMedia)
        {
            at = skipMedia(record, blockCount, at);
        }
        storedGroup();
        return at;
    }

    /**
     * vLLM's {@code extra_keys}: per stored block what its hash covers besides its tokens, nil for nothing: the LoRA
     * name on every block, the identifiers of the media the block holds, then the cache salt on the request's first
     * block.
     *
     * @param mediaAt where the record's per-block media keys start, or -1 for none.
     * @return where the event's record ends (with media).
     */
    private int extraKeys(final DirectBuffer record, final int blockCount, final boolean startsAtFirstBlock,
        final int loraNameAt, final int loraNameLength, final int saltAt, final int saltLength, final int mediaAt)
    {
        int at = mediaAt;
        writer.arrayHeader(blockCount);
        for (int i = 0; i < blockCount; i++)
        {
            final boolean salted = saltLength >= 0 && 0 == i && startsAtFirstBlock;
            final int media = mediaAt < 0 ? 0 : record.getInt(at);
            if (mediaAt >= 0)
            {
                at += Integer.BYTES;
            }
            final int keys = (loraNameLength >= 0 ? 1 : 0) + media + (salted ? 1 : 0);
            if (0 == keys)
            {
                writer.nil();
                continue;
            }
            writer.arrayHeader(keys);
            if (loraNameLength >= 0)
            {
                writer.string(record, loraNameAt, loraNameLength);
            }
            for (int m = 0; m < media; m++)
            {
                final int identifierLength = record.getInt(at);
                writer.string(record, at + Integer.BYTES, identifierLength);
                at += Integer.BYTES + identifierLength;
            }
            if (salted)
            {
                writer.string(record, saltAt, saltLength);
            }
        }
        return at;
    }

    /** Step over an event's per-block media keys (a vLLM line without {@code extra_keys}). */
    private static int skipMedia(final DirectBuffer record, final int blockCount, final int mediaAt)
    {
        int at = mediaAt;
        for (int i = 0; i < blockCount; i++)
        {
            final int media = record.getInt(at);
            at += Integer.BYTES;
            for (int m = 0; m < media; m++)
            {
                at += Integer.BYTES + record.getInt(at);
            }
        }
        return at;
    }

    /**
     * A host-tier store as vLLM's offloading connector reports it: the hashes, no parent, no token ids, no LoRA,
     * medium {@code "CPU"}.
     */
    private int offloadedStored(final DirectBuffer record, final int start)
    {
        final int blockCount = record.getInt(start);
        final int blockSize = record.getInt(start + 4);
        final int at = storedHashes(record, start + 8, blockCount);
        key(PARENT_BLOCK_HASH);
        writer.nil();
        key(TOKEN_IDS);
        writer.arrayHeader(0);
        key(BLOCK_SIZE);
        writer.int64(blockSize);
        key(LORA_ID);
        writer.nil();
        key(MEDIUM);
        writer.string(CPU);
        key(LORA_NAME);
        writer.nil();
        if (extraKeys)
        {
            key(EXTRA_KEYS);
            writer.nil();
        }
        storedGroup();
        return at;
    }

    /**
     * Open a {@code BlockStored} (a map or a positional array of this line's arity) and write its block hashes.
     *
     * @return where the record's hashes end.
     */
    private int storedHashes(final DirectBuffer record, final int hashesAt, final int blockCount)
    {
        if (asMaps)
        {
            writer.mapHeader(11).string(TYPE).string(BLOCK_STORED).string(BLOCK_HASHES);
        }
        else
        {
            writer.arrayHeader(extraKeys ? 10 : 8).string(BLOCK_STORED);
        }
        writer.arrayHeader(blockCount);
        int at = hashesAt;
        for (int i = 0; i < blockCount; i++)
        {
            writer.uint64(record.getLong(at));
            at += Long.BYTES;
        }
        return at;
    }

    /** Close a {@code BlockStored}: {@code group_idx} 0 (and, as a map, the full-attention spec kind). */
    private void storedGroup()
    {
        if (asMaps)
        {
            writer.string(GROUP_IDX).int64(0).string(KV_CACHE_SPEC_KIND).string(FULL_ATTENTION);
        }
        else if (extraKeys)
        {
            writer.int64(0); // group_idx
        }
    }

    private void removed(final long hash, final byte[] medium)
    {
        if (asMaps)
        {
            writer.mapHeader(4).string(TYPE).string(BLOCK_REMOVED).string(BLOCK_HASHES);
        }
        else
        {
            writer.arrayHeader(3).string(BLOCK_REMOVED);
        }
        writer.arrayHeader(1).uint64(hash);
        key(MEDIUM);
        writer.string(medium);
        if (asMaps)
        {
            writer.string(GROUP_IDX).int64(0);
        }
    }

    private void key(final byte[] name)
    {
        if (asMaps)
        {
            writer.string(name);
        }
    }
}
