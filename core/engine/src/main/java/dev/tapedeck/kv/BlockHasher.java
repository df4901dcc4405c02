package dev.tapedeck.kv;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * vLLM's chained prefix-cache block hash with {@code --prefix-caching-hash-algo sha256_cbor}: the hash of full block
 * {@code i} is SHA-256 over the canonical CBOR encoding of the 3-tuple {@code (parent, token_ids, extra_keys)}, where
 * {@code parent} is the 32-byte digest of block {@code i - 1} (of the root seed for block 0), {@code token_ids} the
 * block's token ids and {@code extra_keys} a tuple of strings (the LoRA name on every block, the cache salt on block 0
 * only) or None. The root seed ("NONE_HASH") is SHA-256 over the CBOR text string of the seed, which is what vLLM
 * does when {@code PYTHONHASHSEED} is set to that string (unset, vLLM draws 32 random bytes per process, which no
 * router can reproduce). Only full blocks are hashed. The value used for lookups and KV events is the digest's low 64
 * bits (its last 8 bytes, big-endian), as vLLM's integer block hashes.
 * <p>
 * The CBOR writer covers exactly the types the tuple needs: arrays, a byte string, unsigned and negative integers,
 * text strings and null, each with the shortest head (canonical form).
 * <p>
 * <b>Not thread safe</b>: one instance per engine (it reuses its digest and buffer); it allocates only the returned
 * array and a grown buffer.
 */
public final class BlockHasher
{
    /** Bytes of a SHA-256 digest. */
    public static final int DIGEST_BYTES = 32;
    /** The seed used unless told otherwise: vLLM with {@code PYTHONHASHSEED=0}. */
    public static final String DEFAULT_SEED = "0";

    private static final int MAJOR_UNSIGNED = 0;
    private static final int MAJOR_NEGATIVE = 1;
    private static final int MAJOR_BYTES = 2;
    private static final int MAJOR_TEXT = 3;
    private static final int MAJOR_ARRAY = 4;
    private static final int CBOR_NULL = 0xf6;

    private final MessageDigest sha256;
    private final byte[] rootHash;
    private final byte[] parent = new byte[DIGEST_BYTES];
    private byte[] buffer = new byte[256];
    private int length;

    /**
     * @param seed the root seed string (vLLM's {@code PYTHONHASHSEED}).
     */
    public BlockHasher(final String seed)
    {
        try
        {
            sha256 = MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
        length = 0;
        text(seed.getBytes(StandardCharsets.UTF_8));
        sha256.update(buffer, 0, length);
        rootHash = sha256.digest();
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
        final long[] hashes = new long[tokenIds.length / blockSize];
        chain(tokenIds, blockSize, loraName, cacheSalt, hashes, null);
        return hashes;
    }

    /**
     * Hash every full block of a prompt, keeping the whole digests (for tests and tools).
     *
     * @param tokenIds the prompt's token ids.
     * @param blockSize tokens per block.
     * @param loraName the LoRA adapter's name, or null.
     * @param cacheSalt the request's {@code cache_salt}, or null.
     * @return each full block's 32-byte digest, in order.
     */
    public byte[][] blockDigests(final int[] tokenIds, final int blockSize, final String loraName,
        final String cacheSalt)
    {
        final byte[][] digests = new byte[tokenIds.length / blockSize][];
        chain(tokenIds, blockSize, loraName, cacheSalt, null, digests);
        return digests;
    }

    /**
     * @param digest a 32-byte digest.
     * @return its low 64 bits (the last 8 bytes, big-endian), vLLM's integer block hash.
     */
    public static long low64(final byte[] digest)
    {
        long value = 0;
        for (int i = DIGEST_BYTES - 8; i < DIGEST_BYTES; i++)
        {
            value = (value << 8) | (digest[i] & 0xff);
        }
        return value;
    }

    private void chain(final int[] tokenIds, final int blockSize, final String loraName, final String cacheSalt,
        final long[] hashes, final byte[][] digests)
    {
        if (blockSize < 1)
        {
            throw new IllegalArgumentException("block size must be >= 1, got " + blockSize);
        }
        final byte[] lora = null == loraName ? null : loraName.getBytes(StandardCharsets.UTF_8);
        final byte[] salt = null == cacheSalt ? null : cacheSalt.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(rootHash, 0, parent, 0, DIGEST_BYTES);
        final int blocks = tokenIds.length / blockSize;
        for (int b = 0; b < blocks; b++)
        {
            length = 0;
            head(MAJOR_ARRAY, 3);
            head(MAJOR_BYTES, DIGEST_BYTES);
            put(parent, DIGEST_BYTES);
            head(MAJOR_ARRAY, blockSize);
            for (int i = b * blockSize, end = i + blockSize; i < end; i++)
            {
                integer(tokenIds[i]);
            }
            final byte[] blockSalt = 0 == b ? salt : null;
            final int extraKeys = (null == lora ? 0 : 1) + (null == blockSalt ? 0 : 1);
            if (0 == extraKeys)
            {
                ensure(1);
                buffer[length++] = (byte)CBOR_NULL;
            }
            else
            {
                head(MAJOR_ARRAY, extraKeys);
                if (null != lora)
                {
                    text(lora);
                }
                if (null != blockSalt)
                {
                    text(blockSalt);
                }
            }
            sha256.update(buffer, 0, length);
            try
            {
                sha256.digest(parent, 0, DIGEST_BYTES);
            }
            catch (final DigestException ex)
            {
                throw new IllegalStateException(ex);
            }
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
