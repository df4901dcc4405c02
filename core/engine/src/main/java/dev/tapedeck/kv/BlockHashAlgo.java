package dev.tapedeck.kv;

import java.util.Locale;

/**
 * The hash function of vLLM's prefix-cache block hash chain, by the name of vLLM's
 * {@code --prefix-caching-hash-algo}. vLLM offers {@code sha256} (its default) and {@code xxhash}, which hash the
 * Python {@code pickle} of the block tuple, and {@code sha256_cbor} and {@code xxhash_cbor}, which hash its canonical
 * CBOR encoding; tapedeck implements the two CBOR ones (pickle bytes are Python's own), so a router can reproduce its
 * hashes. Immutable; thread safe.
 */
public enum BlockHashAlgo
{
    /** SHA-256 over the CBOR tuple: 32-byte digests, tapedeck's default (what routers such as llm-d reproduce). */
    SHA256_CBOR("sha256_cbor", 32),
    /** XXH3-128 over the CBOR tuple: 16-byte digests, several times cheaper, not cryptographic. */
    XXHASH_CBOR("xxhash_cbor", BlockHasher.XXH3_DIGEST_BYTES);

    private final String vllmName;
    private final int digestBytes;

    BlockHashAlgo(final String vllmName, final int digestBytes)
    {
        this.vllmName = vllmName;
        this.digestBytes = digestBytes;
    }

    /**
     * @return the name vLLM gives it ({@code --prefix-caching-hash-algo}, {@code vllm:cache_config_info}).
     */
    public String vllmName()
    {
        return vllmName;
    }

    /**
     * @return bytes of one block's digest (the parent a block's tuple carries).
     */
    public int digestBytes()
    {
        return digestBytes;
    }

    /**
     * @param name one of vLLM's {@code --prefix-caching-hash-algo} choices.
     * @return the algorithm.
     * @throws IllegalArgumentException for vLLM's pickle-based {@code sha256} and {@code xxhash}, and unknown names.
     */
    public static BlockHashAlgo of(final String name)
    {
        final String lower = name.trim().toLowerCase(Locale.ROOT);
        for (final BlockHashAlgo algo : values())
        {
            if (algo.vllmName.equals(lower))
            {
                return algo;
            }
        }
        if ("sha256".equals(lower) || "xxhash".equals(lower))
        {
            throw new IllegalArgumentException("--prefix-caching-hash-algo " + lower + " hashes Python's pickle of " +
                "the block, which only Python reproduces; use " + lower + "_cbor (and the same in vLLM)");
        }
        throw new IllegalArgumentException("--prefix-caching-hash-algo is one of sha256, sha256_cbor, xxhash, " +
            "xxhash_cbor (tapedeck implements sha256_cbor and xxhash_cbor), got '" + name + "'");
    }
}
