package dev.tapedeck.load;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;

import dev.tapedeck.tokens.BuiltinTokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * The resource {@link PromptWords#builtin()} reads holds the words {@link PromptWords#of} finds in the built-in
 * tokenizer. When they differ (a new jtokkit, a new rule), copy the right resource, which the test writes to
 * {@code target/o200k-prompt-word-ids.bin.gz}, to {@code src/main/resources/dev/tapedeck/load/}.
 */
class PromptWordsBuiltinTest
{
    @Test
    void resourceHoldsTheBuiltinTokenizersWords() throws IOException
    {
        final PromptWords expected = PromptWords.of(new BuiltinTokenizer());
        final String[] expectedWords = words(expected);
        final int[] expectedIds = ids(expected);
        try (OutputStream out = Files.newOutputStream(Path.of("target", PromptWords.BUILTIN_RESOURCE)))
        {
            write(expectedIds, out);
        }
        final PromptWords actual = PromptWords.builtin();
        final String stale = "stale resource; the right one is in target/" + PromptWords.BUILTIN_RESOURCE;
        assertArrayEquals(expectedIds, ids(actual), stale);
        assertArrayEquals(expectedWords, words(actual), stale);
    }

    private static int[] ids(final PromptWords words)
    {
        final int[] ids = new int[words.size()];
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = words.tokenId(i);
        }
        return ids;
    }

    private static String[] words(final PromptWords words)
    {
        final String[] all = new String[words.size()];
        for (int i = 0; i < all.length; i++)
        {
            all[i] = words.word(i);
        }
        return all;
    }

    private static void write(final int[] ids, final OutputStream raw) throws IOException
    {
        try (DataOutputStream out = new DataOutputStream(new GZIPOutputStream(raw)))
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
}
