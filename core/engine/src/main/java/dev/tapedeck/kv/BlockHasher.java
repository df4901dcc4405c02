package dev.tapedeck.kv;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

import net.openhft.hashing.LongTupleHashFunction;

/**
 * vLLM's chained prefix-cache block hash with {@code --prefix-caching-hash-algo sha256_cbor} (the default) or
 * {@code xxhash_cbor}: the hash of full block {@code i} is SHA-256 (XXH3-128) over the canonical CBOR encoding of the
 * 3-tuple {@code (parent, token_ids, extra_keys)}, where {@code parent} is the 32-byte (16-byte) digest of block
 * {@code i - 1} (of the root seed for block 0), {@code token_ids} the block's token ids and {@code extra_keys} a tuple
 * of strings (the LoRA name on every block, the identifiers of the media whose placeholder tokens the block holds
 * ({@link MediaSpans}), the cache salt on block 0 only) or None. The root seed ("NONE_HASH") is
 * the hash of the CBOR text string of the seed, which is what vLLM does when {@code PYTHONHASHSEED} is set to that
 * string (unset, vLLM draws random bytes per process, which no router can reproduce). Only full blocks are hashed.
 * The value used for lookups and KV events is the digest's low 64 bits (its last 8 bytes, big-endian), as vLLM's
 * integer block hashes.
 * <p>
 * The CBOR writer covers exactly the types the tuple needs: arrays, a byte string, unsigned and negative integers,
 * text strings and null, each with the shortest head (canonical form). XXH3-128 is OpenHFT's zero-allocation-hashing
 * ({@code LongTupleHashFunction.xx128()}, seed 0), its two halves written in xxHash's canonical digest order.
 * <p>
 * <b>Not thread safe</b>: one instance per engine (it reuses its digest, result halves and buffer); it allocates only
 * the returned array and a grown buffer.
 */
public final class BlockHasher
{
    /** Bytes of a SHA-256 digest. */
    public static final int DIGEST_BYTES = 32;
    /** The seed used unless told otherwise: vLLM with {@code PYTHONHASHSEED=0}. */
    public static final String DEFAULT_SEED = "0";
    /** Bytes of an XXH3-128 digest. */
    static final int XXH3_DIGEST_BYTES = 16;

    /** XXH3-128 with seed 0 and the default secret (xxHash's {@code XXH3_128bits}); stateless, thread safe. */
    private static final LongTupleHashFunction XXH3_128 = LongTupleHashFunction.xx128();
    private static final VarHandle BE64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle BE32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private static final int MAJOR_UNSIGNED = 0;
    private static final int MAJOR_NEGATIVE = 1;
    private static final int MAJOR_BYTES = 2;
    private static final int MAJOR_TEXT = 3;
    private static final int MAJOR_ARRAY = 4;
    private static final int CBOR_NULL = 0xf6;

    private final BlockHashAlgo algo;
    private final int digestBytes;
    private final MessageDigest sha256;
    /** XXH3-128's result, {@code [low 64 bits, high 64 bits]}; null for SHA-256. */
    private final long[] xxh3Halves;
    private final byte[] rootHash;
    private final byte[] parent;
    private byte[] buffer = new byte[256];
    private int length;

    /**
     * A {@code sha256_cbor} hasher.
     *
     * @param seed the root seed string (vLLM's {@code PYTHONHASHSEED}).
     */
    public BlockHasher(final String seed)
    {
        this(seed, BlockHashAlgo.SHA256_CBOR);
    }

    /**
     * @param seed the root seed string (vLLM's {@code PYTHONHASHSEED}).
     * @param algo the hash function ({@code --prefix-caching-hash-algo}).
     */
    public BlockHasher(final String seed, final BlockHashAlgo algo)
    {
        this.algo = algo;
        digestBytes = algo.digestBytes();
        parent = new byte[digestBytes];
        rootHash = new byte[digestBytes];
        if (BlockHashAlgo.SHA256_CBOR == algo)
        {
            try
            {
                sha256 = MessageDigest.getInstance("SHA-256");
            }
            catch (final NoSuchAlgorithmException ex)
            {
                throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
            }
            xxh3Halves = null;
        }
        else
        {
            sha256 = null;
            xxh3Halves = XXH3_128.newResultArray();
        }
        length = 0;
        text(seed.getBytes(StandardCharsets.UTF_8));
        digestInto(rootHash);
    }

    /**
     * @return the hash function.
     */
    public BlockHashAlgo algo()
    {
        return algo;
    }

    /**
     * @return a copy of the root hash (vLLM's NONE_HASH) for this seed.
     */
    public byte[] rootHash()
    {
        return rootHash.clone();
    }

    /**
     * Hash every full block of a prompt.
     *
     * @param tokenIds the prompt's token ids.
     * @param blockSize tokens per block.
     * @param loraName the LoRA adapter's name (an extra key on every block), or null.
     * @param cacheSalt the request's {@code cache_salt} (an extra key on block 0), or null.
     * @return the low 64 bits of each full block's digest, in order.
     */
    public long[] blockHashes(final int[] tokenIds, final int blockSize, final String loraName, final String cacheSalt)
    {
        return blockHashes(tokenIds, blockSize, loraName, cacheSalt, null);
    }

    /**
     * Hash every full block of a prompt that holds media.
     *
     * @param tokenIds the prompt's token ids.
     * @param blockSize tokens per block.
     * @param loraName the LoRA adapter's name (an extra key on every block), or null.
     * @param cacheSalt the request's {@code cache_salt} (an extra key on block 0), or null.
     * @param media where the prompt's media sit (their identifiers are extra keys of the blocks they touch), or null.
     * @return the low 64 bits of each full block's digest, in order.
     */
    public long[] blockHashes(final int[] tokenIds, final int blockSize, final String loraName, final String cacheSalt,
        final MediaSpans media)
    {
        final long[] hashes = new long[tokenIds.length / blockSize];
        chain(tokenIds, blockSize, loraName, cacheSalt, media, hashes, null);
        return hashes;
    }

    /**
     * Hash every full block of a prompt, keeping the whole digests (for tests and tools).
     *
     * @param tokenIds the prompt's token ids.
     * @param blockSize tokens per block.
     * @param loraName the LoRA adapter's name, or null.
     * @param cacheSalt the request's {@code cache_salt}, or null.
     * @return each full block's digest (32 bytes for sha256_cbor, 16 for xxhash_cbor), in order.
     */
    public byte[][] blockDigests(final int[] tokenIds, final int blockSize, final String loraName,
        final String cacheSalt)
    {
        return blockDigests(tokenIds, blockSize, loraName, cacheSalt, null);
    }

    /**
     * Hash every full block of a prompt that holds media, keeping the whole digests (for tests and tools).
     *
     * @param tokenIds the prompt's token ids.
     * @param blockSize tokens per block.
     * @param loraName the LoRA adapter's name, or null.
     * @param cacheSalt the request's {@code cache_salt}, or null.
     * @param media where the prompt's media sit, or null.
     * @return each full block's digest (32 bytes for sha256_cbor, 16 for xxhash_cbor), in order.
     */
    public byte[][] blockDigests(final int[] tokenIds, final int blockSize, final String loraName,
        final String cacheSalt, final MediaSpans media)
    {
        final byte[][] digests = new byte[tokenIds.length / blockSize][];
        chain(tokenIds, blockSize, loraName, cacheSalt, media, null, digests);
        return digests;
    }

    /**
     * @param digest a digest (32 or 16 bytes).
     * @return its low 64 bits (the last 8 bytes, big-endian), vLLM's integer block hash.
     */
    public static long low64(final byte[] digest)
    {
        long value = 0;
        for (int i = digest.length - 8; i < digest.length; i++)
        {
            value = (value << 8) | (digest[i] & 0xff);
        }
        return value;
    }

    /**
     * Continue a chain: hash {@code blocks} full blocks of a prompt from block {@code firstBlock} on, after the block
     * whose digest {@code parent} holds ({@link #rootHash()} for block 0). The values are those
     * {@link #blockHashes} gives the same blocks; {@code parent} is left holding the last block's digest, so a caller
     * that knows two prompts share their first blocks can hash the shared ones once.
     *
     * @param tokenIds the prompt's token ids.
     * @param blockSize tokens per block.
     * @param firstBlock the first block to hash.
     * @param blocks how many blocks to hash (each must be full).
     * @param loraName the LoRA adapter's name (an extra key on every block), or null.
     * @param cacheSalt the request's {@code cache_salt} (an extra key on block 0), or null.
     * @param parent the previous block's digest ({@link #algo()}'s digest length); updated.
     * @param hashes where the blocks' low 64 bits go.
     * @param offset where in {@code hashes} the first block's goes.
     */
    public void continueChain(final int[] tokenIds, final int blockSize, final int firstBlock, final int blocks,
        final String loraName, final String cacheSalt, final byte[] parent, final long[] hashes, final int offset)
    {
        if (blockSize < 1 || firstBlock < 0 || (long)(firstBlock + blocks) * blockSize > tokenIds.length)
        {
            throw new IllegalArgumentException("blocks " + firstBlock + " + " + blocks + " of " + blockSize +
                " tokens do not fit a prompt of " + tokenIds.length);
        }
        final byte[] lora = null == loraName ? null : loraName.getBytes(StandardCharsets.UTF_8);
        final byte[] salt = null == cacheSalt ? null : cacheSalt.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(parent, 0, this.parent, 0, digestBytes);
        final int most = mostBytes(blockSize, lora, salt);
        for (int b = 0; b < blocks; b++)
        {
            final int block = firstBlock + b;
            hashBlock(tokenIds, block * blockSize, blockSize, lora, null, 0 == block ? salt : null, most);
            hashes[offset + b] = low64(this.parent);
        }
        System.arraycopy(this.parent, 0, parent, 0, digestBytes);
    }

    private void chain(final int[] tokenIds, final int blockSize, final String loraName, final String cacheSalt,
        final MediaSpans media, final long[] hashes, final byte[][] digests)
    {
        if (blockSize < 1)
        {
            throw new IllegalArgumentException("block size must be >= 1, got " + blockSize);
        }
        final byte[] lora = null == loraName ? null : loraName.getBytes(StandardCharsets.UTF_8);
        final byte[] salt = null == cacheSalt ? null : cacheSalt.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(rootHash, 0, parent, 0, digestBytes);
        final int blocks = tokenIds.length / blockSize;
        final int most = mostBytes(blockSize, lora, salt);
        for (int b = 0; b < blocks; b++)
        {
            hashBlock(tokenIds, b * blockSize, blockSize, lora, media, 0 == b ? salt : null, most);
            if (null != hashes)
            {
                hashes[b] = low64(parent);
            }
            if (null != digests)
            {
                digests[b] = parent.clone();
            }
        }
    }

    /**
     * The most one block's tuple takes: array and byte-string heads, the parent, the token array's head, 9 bytes per
     * token id, the extra keys.
     */
    private int mostBytes(final int blockSize, final byte[] lora, final byte[] salt)
    {
        return 1 + 9 + digestBytes + 9 + 9 * blockSize + 9 + (null == lora ? 0 : 9 + lora.length) +
            (null == salt ? 0 : 9 + salt.length);
    }

    /** Encode the tuple of the block starting at token {@code from} after {@code parent}, and hash it into parent. */
    private void hashBlock(final int[] tokenIds, final int from, final int blockSize, final byte[] lora,
        final MediaSpans media, final byte[] blockSalt, final int most)
    {
        length = 0;
        ensure(most);
        final byte[] out = buffer;
        out[length++] = (byte)(MAJOR_ARRAY << 5 | 3);
        head(MAJOR_BYTES, digestBytes);
        System.arraycopy(parent, 0, out, length, digestBytes);
        length += digestBytes;
        head(MAJOR_ARRAY, blockSize);
        int at = length;
        for (int i = from, end = from + blockSize; i < end; i++)
        {
            // canonical unsigned heads inline (the buffer has room for 9 bytes a token): 0x00-0x17, 0x18 xx,
            // 0x19 xxxx, 0x1a xxxxxxxx
            final int token = tokenIds[i];
            if (token >= 0x100)
            {
                // most ids: 0x19 or 0x1a without a branch on which (wide = 1 from 0x10000 on); the 4 bytes written
                // after the head hold the 2-byte form in their first two, the next token overwrites the rest
                final int wide = (0xffff - token) >>> 31;
                out[at] = (byte)(0x19 + wide);
                BE32.set(out, at + 1, token << ((1 - wide) << 4));
                at += 3 + (wide << 1);
            }
            else if (token >= 24)
            {
                out[at++] = 0x18;
                out[at++] = (byte)token;
            }
            else if (token >= 0)
            {
                out[at++] = (byte)token;
            }
            else
            {
                length = at;
                integer(token);
                at = length;
            }
        }
        length = at;
        final long mediaKeys = null == media ? 0 : media.keysOfBlock(from, from + blockSize);
        final int firstMedia = (int)(mediaKeys >>> 32);
        final int mediaCount = (int)mediaKeys;
        final int extraKeys = (null == lora ? 0 : 1) + mediaCount + (null == blockSalt ? 0 : 1);
        if (0 == extraKeys)
        {
            buffer[length++] = (byte)CBOR_NULL;
        }
        else
        {
            head(MAJOR_ARRAY, extraKeys);
            if (null != lora)
            {
                text(lora);
            }
            for (int m = firstMedia; m < firstMedia + mediaCount; m++)
            {
                text(media.identifierUtf8(m));
            }
            if (null != blockSalt)
            {
                text(blockSalt);
            }
        }
        digestInto(parent);
    }

    /** Hash the buffer's {@code length} bytes into {@code out}. */
    private void digestInto(final byte[] out)
    {
        if (null != xxh3Halves)
        {
            xxh3Digest(buffer, 0, length, xxh3Halves, out, 0);
            return;
        }
        sha256.update(buffer, 0, length);
        try
        {
            sha256.digest(out, 0, DIGEST_BYTES);
        }
        catch (final DigestException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * XXH3-128 (seed 0) of a byte range as Python's {@code xxhash.xxh3_128_digest}: the canonical form, the high 64
     * bits then the low 64 bits, each big-endian. Allocates nothing.
     *
     * @param input the bytes.
     * @param offset where the range starts.
     * @param count bytes to hash.
     * @param halves scratch for the library's result (2 longs: low, high).
     * @param out where the 16-byte digest goes.
     * @param outOffset where in {@code out}.
     */
    static void xxh3Digest(final byte[] input, final int offset, final int count, final long[] halves,
        final byte[] out, final int outOffset)
    {
        XXH3_128.hashBytes(input, offset, count, halves);
        BE64.set(out, outOffset, halves[1]);
        BE64.set(out, outOffset + 8, halves[0]);
    }

    private void integer(final long value)
    {
        if (value >= 0)
        {
            head(MAJOR_UNSIGNED, value);
        }
        else
        {
            head(MAJOR_NEGATIVE, -1 - value);
        }
    }

    private void text(final byte[] utf8)
    {
        head(MAJOR_TEXT, utf8.length);
        put(utf8, utf8.length);
    }

    private void put(final byte[] bytes, final int count)
    {
        ensure(count);
        System.arraycopy(bytes, 0, buffer, length, count);
        length += count;
    }

    /** The shortest CBOR head for a major type and an argument (canonical encoding). */
    private void head(final int major, final long argument)
    {
        ensure(9);
        final int type = major << 5;
        if (argument < 24)
        {
            buffer[length++] = (byte)(type | (int)argument);
        }
        else if (argument < 0x100)
        {
            buffer[length++] = (byte)(type | 24);
            buffer[length++] = (byte)argument;
        }
        else if (argument < 0x10000)
        {
            buffer[length++] = (byte)(type | 25);
            writeBigEndian(argument, 2);
        }
        else if (argument < 0x1_0000_0000L)
        {
            buffer[length++] = (byte)(type | 26);
            writeBigEndian(argument, 4);
        }
        else
        {
            buffer[length++] = (byte)(type | 27);
            writeBigEndian(argument, 8);
        }
    }

    private void writeBigEndian(final long value, final int bytes)
    {
        for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8)
        {
            buffer[length++] = (byte)(value >>> shift);
        }
    }

    private void ensure(final int more)
    {
        if (length + more > buffer.length)
        {
            buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, length + more));
        }
    }
}
