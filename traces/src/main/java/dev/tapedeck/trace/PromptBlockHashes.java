package dev.tapedeck.trace;

/**
 * The {@code block_hashes} of a trace record: a chained 64-bit FNV-1a fingerprint per full block of the prompt (the
 * partial last block is ignored), computed exactly as vllm-vcr's tap does so traces from both tools compare.
 * <pre>
 *   prev = FNV offset basis
 *   for each full block: h = FNV offset basis; feed prev as 8 bytes little endian; feed each token id as 4 bytes
 *                        little endian; emit h; prev = h
 * </pre>
 * These are trace fingerprints for matching prefixes between records, not vLLM's block-pool hashes (which use
 * SHA-256 over CBOR, docs/kv-cache.md). Stateless; thread safe.
 */
public final class PromptBlockHashes
{
    /** FNV-1a 64-bit offset basis. */
    public static final long FNV_OFFSET_BASIS = 0xcbf29ce484222325L;
    /** FNV-1a 64-bit prime. */
    public static final long FNV_PRIME = 0x100000001b3L;

    private PromptBlockHashes()
    {
    }

    /**
     * @param tokenIds the prompt.
     * @param length how many of {@code tokenIds} are the prompt.
     * @param blockSize tokens per block.
     * @return one fingerprint per full block, or null when the block size is 0 or the prompt is shorter than a
     *     block (the field is then omitted).
     */
    public static long[] of(final int[] tokenIds, final int length, final int blockSize)
    {
        if (blockSize <= 0 || length < blockSize)
        {
            return null;
        }
        final long[] hashes = new long[length / blockSize];
        long previous = FNV_OFFSET_BASIS;
        for (int block = 0; block < hashes.length; block++)
        {
            long hash = FNV_OFFSET_BASIS;
            for (int shift = 0; shift < 64; shift += 8)
            {
                hash = (hash ^ ((previous >>> shift) & 0xff)) * FNV_PRIME;
            }
            final int start = block * blockSize;
            for (int i = start; i < start + blockSize; i++)
            {
                final int token = tokenIds[i];
                hash = (hash ^ (token & 0xff)) * FNV_PRIME;
                hash = (hash ^ ((token >>> 8) & 0xff)) * FNV_PRIME;
                hash = (hash ^ ((token >>> 16) & 0xff)) * FNV_PRIME;
                hash = (hash ^ ((token >>> 24) & 0xff)) * FNV_PRIME;
            }
            hashes[block] = hash;
            previous = hash;
        }
        return hashes;
    }
}
