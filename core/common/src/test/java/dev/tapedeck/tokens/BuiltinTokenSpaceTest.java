package dev.tapedeck.tokens;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The resource {@link BuiltinTokenSpace} reads holds what the built-in tokenizer computes. When they differ (a new
 * jtokkit, a new rule in {@link TokenVocabulary}), copy the right resource, which the test writes to
 * {@code target/o200k-random-token-ids.bin.gz}, to {@code src/main/resources/dev/tapedeck/tokens/}.
 */
class BuiltinTokenSpaceTest
{
    @Test
    void resourceHoldsTheBuiltinTokenizersRandomTokenIds() throws IOException
    {
        final BuiltinTokenizer tokenizer = new BuiltinTokenizer();
        final int[] expected = tokenizer.vocabulary().randomTokenIds();
        try (OutputStream out = Files.newOutputStream(Path.of("target", BuiltinTokenSpace.RESOURCE)))
        {
            write(expected, out);
        }
        assertArrayEquals(expected, BuiltinTokenSpace.randomTokenIds(),
            "stale resource; the right one is in target/" + BuiltinTokenSpace.RESOURCE);
        assertEquals(tokenizer.eosTokenId(), BuiltinTokenSpace.eosTokenId());
    }

    /** Ascending ids as {@link BuiltinTokenSpace#readAscendingIds} reads them, gzipped. */
    static void write(final int[] ids, final OutputStream raw) throws IOException
    {
        try (DataOutputStream out = new DataOutputStream(new GZIPOutputStream(raw)))
        {
            writeAscendingIds(ids, out);
        }
    }

    static void writeAscendingIds(final int[] ids, final DataOutputStream out) throws IOException
    {
        out.writeInt(ids.length);
        int previous = 0;
        for (final int id : ids)
        {
            int gap = id - previous;
            previous = id;
            while (gap >= 0x80)
            {
                out.writeByte(gap & 0x7f | 0x80);
                gap >>>= 7;
            }
            out.writeByte(gap);
        }
    }
}
