package dev.tapedeck.kv;

import java.util.HexFormat;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Block hashes against vectors computed independently of this code, in Python 3 with the {@code cbor2} package
 * (6.1.4) and {@code hashlib}, following vLLM's algorithm as written down in the wire-spec reference (§6.3):
 * <pre>
 * H(x)   = hashlib.sha256(cbor2.dumps(x, canonical=True)).digest()
 * root   = H(seed)                       # seed "0": vLLM with PYTHONHASHSEED=0
 * extra  = tuple([lora_name] + [ident for media overlapping the block] + ([cache_salt] if block 0 else [])) or None
 * block  = H((parent, tuple(block_token_ids), extra))   # parent of block 0 = root
 * value  = int.from_bytes(block, "big") &amp; (2**64 - 1)
 * </pre>
 * Vector A (tokens 1..8, block size 4, seed "0") also equals the worked example of wire-spec §6.3.
 * <p>
 * The {@code xxhash_cbor} vectors come the same way with {@code H(x) = xxhash.xxh3_128_digest(cbor2.dumps(x,
 * canonical=True))} ({@code xxhash} 4.0.1), vLLM's {@code xxhash_cbor}: 16-byte digests, so the parent is a 16-byte
 * string.
 */
class BlockHasherTest
{
    private static final int[] ONE_TO_EIGHT = {1, 2, 3, 4, 5, 6, 7, 8};

    @Test
    void shouldSeedTheChainWithTheHashOfTheSeedString()
    {
        // cbor("0") = 61 30
        assertEquals("4e1195df020de59e0d65a33a4279f1183e7ae4e5d980e309f8b55adff2e61c3e",
            HexFormat.of().formatHex(new BlockHasher("0").rootHash()));
    }

    @Test
    void shouldMatchVectorAPlainTokens()
    {
        final BlockHasher hasher = new BlockHasher("0");
        final byte[][] digests = hasher.blockDigests(ONE_TO_EIGHT, 4, null, null);
        assertEquals("c9d58ba695280d69b243e1e0df813136ca9196b286fb1a021e0b2e028ef071cb", hex(digests[0]));
        assertEquals("24125b23e68883b5c2141db2959d48433fe6bde2f26bd914efad121d154ab2d6", hex(digests[1]));
        assertArrayEquals(new long[] {2164874634404590027L, Long.parseUnsignedLong("17270480062156288726")},
            hasher.blockHashes(ONE_TO_EIGHT, 4, null, null));
    }

    @Test
    void shouldEncodeEveryIntegerWidthCanonicallyAndIgnoreThePartialBlock()
    {
        // 33 tokens, block size 16: two full blocks; ids 0, 23 (one byte), 24, 255 (0x18 xx), 256, 65535 (0x19),
        // 65536, 151643 (0x1a); the 33rd token is never hashed
        final int[] tokens = {0, 23, 24, 255, 256, 65535, 65536, 151643, 7, 8, 9, 10, 11, 12, 13, 14,
            100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 5};
        final byte[][] digests = new BlockHasher("0").blockDigests(tokens, 16, null, null);
        assertEquals(2, digests.length);
        assertEquals("8692e5c752035d03322487cb8b5dccf7c72227f3f88cb5b3b0c0a60fbe5c0bff", hex(digests[0]));
        assertEquals("f2a160bfa9548077a21f2077a71ec93527a699b0e4f3f6b3d819089580c55485", hex(digests[1]));
        assertEquals(Long.parseUnsignedLong("12736362332752186367"), BlockHasher.low64(digests[0]));
    }

    @Test
    void shouldMixTheLoraNameIntoEveryBlock()
    {
        final byte[][] digests = new BlockHasher("0").blockDigests(ONE_TO_EIGHT, 4, "my-lora", null);
        assertEquals("c4bb06ec618fa6a409a65a4879c339dde2fc098b27d584c8f4c9729d7fda3789", hex(digests[0]));
        assertEquals("3b3da94fa8122748137cc30473d7d799caf4f710ec367084832dedfa68bf381f", hex(digests[1]));
    }

    @Test
    void shouldMixTheCacheSaltIntoTheFirstBlockOnly()
    {
        final byte[][] digests = new BlockHasher("0").blockDigests(ONE_TO_EIGHT, 4, null, "s3cret");
        assertEquals("e6b55389c42870a7b751661e098fc06a243d48b04d306975609c9e2aeee7234c", hex(digests[0]));
        assertEquals("ae75e8cd0d42fba51c9fb210f588728b1b30ee850f2e161cd7e4472f5fe03b7c", hex(digests[1]));
    }

    @Test
    void shouldPutTheLoraNameBeforeTheCacheSalt()
    {
        final byte[][] digests = new BlockHasher("0").blockDigests(ONE_TO_EIGHT, 4, "my-lora", "s3cret");
        assertEquals("5e417a52248abde6f9a087b2b20c3923ab02964efd73c9644d0c6304ccfd2faf", hex(digests[0]));
        assertEquals("240b02aa36a7e0f208d8619a776b937543a2507503e4a9d7e768570451581ba7", hex(digests[1]));
    }

    @Test
    void shouldMixTheIdentifiersOfTheMediaABlockHoldsBetweenLoraAndSalt()
    {
        // 12 tokens, blocks of 4; image a on tokens 2..4, image b on 5..8: keys (a), (a, b), (b), as vLLM's
        // generate_block_hash_extra_keys walks mm_features
        final int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        final MediaSpans media = new MediaSpans(new String[] {"img-a", "img-b"}, new int[] {2, 5}, new int[] {3, 4});
        final byte[][] plain = new BlockHasher("0").blockDigests(tokens, 4, null, null, media);
        assertEquals("9c78633d50175041b6ce0d32e345043f2741f887d5ce9c35371e497b3d482c0a", hex(plain[0]));
        assertEquals("c2ff55bb17c4c8158d7ccd241b59e6a51a815c403805472757777c3cc4cc442d", hex(plain[1]));
        assertEquals("41f1a47b14edcda98f7973a08068dfcdd7b644c020190e8088049223ea1e5709", hex(plain[2]));
        final byte[][] all = new BlockHasher("0").blockDigests(tokens, 4, "my-lora", "s3cret", media);
        assertEquals("0fb75a28ac3da5830671faec839bc2af554e5d7bdd06f70439053e27d628128b", hex(all[0]));
        assertEquals("5c47395dbab83af9ce468e6573f2d6173ce23c4e6cae38144129e94ad5ba4745", hex(all[1]));
        assertEquals("3784f94134fb8e2127ed7650e98f25cf96d83a85d05ad18c656babec0a8d7d54", hex(all[2]));
        assertEquals(2L, media.keysOfBlock(4, 8), "items 0 and 1");
        assertEquals(1L << 32 | 1, media.keysOfBlock(8, 12), "item 1 alone");
        assertEquals(0L, media.keysOfBlock(9, 13), "none after the last run");
        assertThrows(IllegalArgumentException.class, () -> new MediaSpans(new String[] {"a", "b"}, new int[] {2, 4},
            new int[] {3, 1}), "overlapping runs");
    }

    @Test
    void shouldStartAnotherChainFromAnotherSeed()
    {
        final byte[][] digests = new BlockHasher("42").blockDigests(ONE_TO_EIGHT, 4, null, null);
        assertEquals("0a99040f25d8a5f22275b867f403918da98c9d140eaea10f5319d4d1d84429df", hex(digests[0]));
        assertEquals("c415b4994e9ed1d993bc50f53dc3c4e18c5200f39d1787ce9ba2dacb65221d14", hex(digests[1]));
    }

    @Test
    void shouldChainXxhashCborDigests()
    {
        final BlockHasher hasher = new BlockHasher("0", BlockHashAlgo.XXHASH_CBOR);
        assertEquals("1ebe36576dcb573f26b99533a20aaeca", hex(hasher.rootHash()));
        final byte[][] digests = hasher.blockDigests(ONE_TO_EIGHT, 4, null, null);
        assertEquals("0a8577df5ee3430515a8cc1f6e3ac52e", hex(digests[0]));
        assertEquals("d152782cb4d753bde718a811a3b75e23", hex(digests[1]));
        assertArrayEquals(new long[] {1560721706249274670L, Long.parseUnsignedLong("16652244415917022755")},
            hasher.blockHashes(ONE_TO_EIGHT, 4, null, null));
    }

    @Test
    void shouldMixExtraKeysAndSeedIntoXxhashCborDigests()
    {
        final BlockHasher hasher = new BlockHasher("0", BlockHashAlgo.XXHASH_CBOR);
        assertEquals("40c55245b28642a58a560f63c489ebd2", hex(hasher.blockDigests(ONE_TO_EIGHT, 4, "my-lora", null)[0]));
        assertEquals("004017a52944007cc4a8beac8c9f0e1d", hex(hasher.blockDigests(ONE_TO_EIGHT, 4, null, "s3cret")[1]));
        assertEquals("2417b31039cc84d3be1c3341869a45dd",
            hex(hasher.blockDigests(ONE_TO_EIGHT, 4, "my-lora", "s3cret")[0]));
        assertEquals("671b32307cc26869c85fa0243b61a1e8",
            hex(new BlockHasher("42", BlockHashAlgo.XXHASH_CBOR).blockDigests(ONE_TO_EIGHT, 4, null, null)[1]));
    }

    @Test
    void shouldEncodeEveryIntegerWidthForXxhashCborAndHashLongTuples()
    {
        final int[] tokens = {0, 23, 24, 255, 256, 65535, 65536, 151643, 7, 8, 9, 10, 11, 12, 13, 14,
            100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 5};
        final byte[][] digests = new BlockHasher("0", BlockHashAlgo.XXHASH_CBOR).blockDigests(tokens, 16, null, null);
        assertEquals("f026ac82aec5761111bc53ba46842aeb", hex(digests[0]));
        assertEquals("d44c69c400b91a6393bec464af4cbddf", hex(digests[1]));
        // 64 ids of 5 bytes each: tuples of 345 bytes, XXH3's long path
        final int[] large = new int[128];
        for (int i = 0; i < large.length; i++)
        {
            large[i] = 100_000 + 7 * i;
        }
        final byte[][] long64 = new BlockHasher("0", BlockHashAlgo.XXHASH_CBOR).blockDigests(large, 64, null, null);
        assertEquals("38fb20f4de5b50df0b696ddc8df4d4aa", hex(long64[0]));
        assertEquals("c756de184737ac06cea3f3ac3ad2627e", hex(long64[1]));
    }

    @Test
    void shouldNameVllmsChoices()
    {
        assertEquals(BlockHashAlgo.SHA256_CBOR, BlockHashAlgo.of("sha256_cbor"));
        assertEquals(BlockHashAlgo.XXHASH_CBOR, BlockHashAlgo.of("xxhash_cbor"));
        assertEquals("xxhash_cbor", BlockHashAlgo.XXHASH_CBOR.vllmName());
        final IllegalArgumentException pickle = assertThrows(IllegalArgumentException.class,
            () -> BlockHashAlgo.of("sha256"));
        assertTrue(pickle.getMessage().contains("pickle"), pickle.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BlockHashAlgo.of("md5"));
    }

    @Test
    void shouldContinueAChainFromAnyBlockWithTheSameValues()
    {
        final int[] tokens = new int[70];
        for (int i = 0; i < tokens.length; i++)
        {
            tokens[i] = i * 7919 % 151_643 + (0 == i % 5 ? 70_000 : 0);
        }
        for (final BlockHashAlgo algo : BlockHashAlgo.values())
        {
            for (final String salt : new String[] {null, "s3cret"})
            {
                final BlockHasher hasher = new BlockHasher("0", algo);
                final long[] whole = hasher.blockHashes(tokens, 4, "my-lora", salt);
                final byte[][] digests = hasher.blockDigests(tokens, 4, "my-lora", salt);
                final long[] pieces = new long[whole.length];
                final byte[] parent = hasher.rootHash();
                hasher.continueChain(tokens, 4, 0, 1, "my-lora", salt, parent, pieces, 0);
                hasher.continueChain(tokens, 4, 1, 7, "my-lora", salt, parent, pieces, 1);
                assertArrayEquals(digests[7], parent, algo + " parent after block 7");
                hasher.continueChain(tokens, 4, 8, 0, "my-lora", salt, parent, pieces, 8);
                hasher.continueChain(tokens, 4, 8, whole.length - 8, "my-lora", salt, parent, pieces, 8);
                assertArrayEquals(whole, pieces, algo + " salt " + salt);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> new BlockHasher("0").continueChain(ONE_TO_EIGHT, 4, 1,
            2, null, null, new byte[BlockHasher.DIGEST_BYTES], new long[2], 0));
    }

    private static String hex(final byte[] bytes)
    {
        return HexFormat.of().formatHex(bytes);
    }
}
