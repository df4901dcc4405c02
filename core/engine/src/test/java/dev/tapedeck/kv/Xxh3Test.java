package dev.tapedeck.kv;

import java.lang.management.ManagementFactory;
import java.util.HexFormat;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * XXH3-128 as {@link BlockHasher} computes it (OpenHFT zero-allocation-hashing, digest in canonical order) against
 * digests computed independently in Python 3 with the {@code xxhash} package (4.0.1):
 * {@code xxhash.xxh3_128_digest(bytes((i * 31 + 7) & 0xff for i in range(n))).hex()}, for lengths on both sides of
 * every path boundary (0, 1-3, 4-8, 9-16, 17-128, 129-240, then stripes of 64 and blocks of 1024 bytes).
 */
class Xxh3Test
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    static Stream<Arguments> vectors()
    {
        return Stream.of(
            Arguments.of(0, "99aa06d3014798d86001c324468d497f"),
            Arguments.of(1, "495b62073ef70ca44c5cca45d0f4811f"),
            Arguments.of(2, "12b2847aa0de5aaaa7e250c97710ff27"),
            Arguments.of(3, "46f66cb93538156515f7093b173d005c"),
            Arguments.of(4, "7fefeeffb4d0eab3b987ca5d9241572a"),
            Arguments.of(5, "2fbb16712b4bf1d5752a86982353f4f3"),
            Arguments.of(8, "803c675a846cc6c256bb836ceb6d4baa"),
            Arguments.of(9, "d46556872d230f224376673580310154"),
            Arguments.of(15, "2c612e00ed4f13d9571df173bded2e23"),
            Arguments.of(16, "650fe308c566747df853dd94614dfa07"),
            Arguments.of(17, "18217300b5132d5a78c349fe81b2f26c"),
            Arguments.of(31, "a7591e70669b73f845e862e1ac921624"),
            Arguments.of(32, "3220ff5fe507b3c05726e079716c6a62"),
            Arguments.of(33, "91a4c56ad1b91d883b25275300c8b44e"),
            Arguments.of(64, "f9bfa77da0891a9636c5f7e547426bc4"),
            Arguments.of(65, "5642c5d38e6e787dd0d1d7884590a330"),
            Arguments.of(96, "59861d1adb3e51a263451be079edd707"),
            Arguments.of(97, "0912f66857975b13fa4138b7dc44e45b"),
            Arguments.of(127, "3117b681087b4ef48a02b1f75c556ac3"),
            Arguments.of(128, "b4f87b99d2db8a511e04fad9f0cacb4d"),
            Arguments.of(129, "6881633650cd8924c51bc887976aef63"),
            Arguments.of(159, "23d73d2cfa83c4b04710980f58432f1d"),
            Arguments.of(160, "c000b788df6dbbc4f661814e66697391"),
            Arguments.of(161, "9ab20efd5075007b3514442284da8d47"),
            Arguments.of(192, "d4479caa4bea0dced8d6fbd475016236"),
            Arguments.of(239, "75acb2ecd970b3996df5c761356a5057"),
            Arguments.of(240, "de57aab31e77a2ff93e173833f75ab66"),
            Arguments.of(241, "92b991a7192f3f080b3b630948ce4a00"),
            Arguments.of(255, "3e68b7e415ce7e5c89932170686cdd9a"),
            Arguments.of(256, "24ee30633ca52c6aec85b75bafe6ca74"),
            Arguments.of(1023, "8e8ed756aa1f01faf0d330ce2b3300fb"),
            Arguments.of(1024, "4c17271c906df79223bc880ebf0d29c6"),
            Arguments.of(1025, "70a4eb1b9691d77fc09fdfbc398c7d82"),
            Arguments.of(2048, "b318976b177a38c719f6f9c987331373"),
            Arguments.of(2049, "11999f258baadb535045460f5d85c275"),
            Arguments.of(5000, "3bf60aa89c7feeaa559fff92c2b7f8ee"));
    }

    @ParameterizedTest
    @MethodSource("vectors")
    void shouldMatchPythonXxhash(final int length, final String expected)
    {
        final byte[] input = new byte[length + 5];
        for (int i = 0; i < length; i++)
        {
            input[i + 3] = (byte)(i * 31 + 7);
        }
        final byte[] out = new byte[BlockHasher.XXH3_DIGEST_BYTES + 2];
        BlockHasher.xxh3Digest(input, 3, length, new long[2], out, 1);
        assertEquals(expected, HexFormat.of().formatHex(out, 1, 1 + BlockHasher.XXH3_DIGEST_BYTES));
    }

    @Test
    void shouldAllocateNothingPerDigest()
    {
        // a 16-token block's tuple (the 17-128 byte path) and a 64-token one of 5-byte ids (the long path)
        final byte[] input = new byte[345];
        final long[] halves = new long[2];
        final byte[] out = new byte[BlockHasher.XXH3_DIGEST_BYTES];
        long sink = 0;
        for (int i = 0; i < 20_000; i++)
        {
            BlockHasher.xxh3Digest(input, 0, 68 + (i & 1) * 277, halves, out, 0);
            sink += out[0];
        }
        final long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 200_000; i++)
        {
            input[i & 63] = (byte)i;
            BlockHasher.xxh3Digest(input, 0, 68 + (i & 1) * 277, halves, out, 0);
            sink += out[0];
        }
        final long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes for 200,000 digests (" + sink + ")");
    }
}
