package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;

import dev.tapedeck.tokens.TokenVocabulary;
import dev.tapedeck.tokens.Tokenizer;

/**
 * A tokenizer whose tokens a test can reason about byte by byte: ids 0..255 are the single bytes 0x00..0xFF (so
 * {@link #encode} turns each UTF-8 byte of the text into one token, and a multi-byte character always spans several
 * tokens), {@link #EOS} carries no text, and the ids from {@link #FIRST_WORD} on are whole words given to the
 * constructor.
 */
final class ByteTokenizer implements Tokenizer
{
    /** The end-of-turn token: no text. */
    static final int EOS = 256;
    /** The id of the first word token. */
    static final int FIRST_WORD = 257;

    private final TokenVocabulary vocabulary;

    /**
     * @param words extra multi-byte tokens, ids {@link #FIRST_WORD}, {@code FIRST_WORD + 1}, ...
     */
    ByteTokenizer(final String... words)
    {
        final byte[][] bytes = new byte[FIRST_WORD + words.length][];
        for (int b = 0; b < 256; b++)
        {
            bytes[b] = new byte[] {(byte)b};
        }
        for (int w = 0; w < words.length; w++)
        {
            bytes[FIRST_WORD + w] = words[w].getBytes(StandardCharsets.UTF_8);
        }
        vocabulary = new TokenVocabulary(bytes);
    }

    /**
     * @param text some text.
     * @return the token ids of its UTF-8 bytes, one per byte.
     */
    static int[] bytes(final String text)
    {
        final byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        final int[] ids = new int[utf8.length];
        for (int i = 0; i < ids.length; i++)
        {
            ids[i] = utf8[i] & 0xff;
        }
        return ids;
    }

    @Override
    public String name()
    {
        return "bytes";
    }

    @Override
    public int[] encode(final String text)
    {
        return bytes(text);
    }

    @Override
    public TokenVocabulary vocabulary()
    {
        return vocabulary;
    }

    @Override
    public int eosTokenId()
    {
        return EOS;
    }
}
