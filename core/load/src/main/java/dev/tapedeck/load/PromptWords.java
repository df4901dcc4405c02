package dev.tapedeck.load;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;

import dev.tapedeck.tokens.BuiltinTokenSpace;
import dev.tapedeck.tokens.BuiltinTokenizer;
import dev.tapedeck.tokens.TokenVocabulary;
import dev.tapedeck.tokens.Tokenizer;

/**
 * Words that are exactly one token each, with their leading space ({@code " river"}): concatenating N of them gives a
 * text the tokenizer splits into exactly N tokens, because byte-level BPE tokenizers (GPT-2, o200k, Llama 3, Qwen)
 * pre-split text before every space-letter run and never merge across that boundary. The words are the vocabulary's
 * own tokens made of a space and 3 to 10 lower-case ASCII letters, each checked by encoding it alone and inside a
 * sentence. Immutable; thread safe.
 */
public final class PromptWords
{
    /** The built-in tokenizer's word ids: gzip of the ids as {@link BuiltinTokenSpace#readAscendingIds} reads them. */
    static final String BUILTIN_RESOURCE = "o200k-prompt-word-ids.bin.gz";
    private static final int MIN_WORDS = 256;

    private final int[] tokenIds;
    /** The words' text; for {@link #builtin()}, null until a word is first asked for (then decoded by o200k). */
    private volatile String[] words;

    private PromptWords(final String[] words, final int[] tokenIds)
    {
        this.words = words;
        this.tokenIds = tokenIds;
    }

    /**
     * Find the single-token words of a tokenizer.
     *
     * @param tokenizer the tokenizer the server uses (or one with the same vocabulary).
     * @return the words.
     * @throws IllegalArgumentException if the tokenizer has too few such words (not a byte-level BPE).
     */
    public static PromptWords of(final Tokenizer tokenizer)
    {
        final TokenVocabulary vocabulary = tokenizer.vocabulary();
        final String[] candidates = new String[vocabulary.size()];
        final int[] ids = new int[vocabulary.size()];
        int count = 0;
        for (int id = 0; id < vocabulary.size(); id++)
        {
            final String word = wordOf(vocabulary.bytes(id));
            if (null != word && Arrays.equals(new int[] {id}, tokenizer.encode(word)))
            {
                candidates[count] = word;
                ids[count++] = id;
            }
        }
        if (count < MIN_WORDS)
        {
            throw new IllegalArgumentException("tokenizer " + tokenizer.name() + " has only " + count +
                " single-token words; prompts of exact length cannot be built from it");
        }
        final PromptWords words = new PromptWords(Arrays.copyOf(candidates, count), Arrays.copyOf(ids, count));
        words.check(tokenizer);
        return words;
    }

    /**
     * The words of the built-in tokenizer (o200k), exactly {@code of(new BuiltinTokenizer())}: their token ids are
     * read from a resource without loading the tokenizer ({@code PromptWordsBuiltinTest} checks the resource against
     * the tokenizer); their text is decoded by a tokenizer loaded when {@link #word(int)} is first called (a
     * simulator that sends token ids never calls it).
     *
     * @return the words.
     */
    public static PromptWords builtin()
    {
        try (InputStream raw = PromptWords.class.getResourceAsStream(BUILTIN_RESOURCE))
        {
            if (null == raw)
            {
                throw new IllegalStateException("resource " + BUILTIN_RESOURCE + " is missing from the build");
            }
            try (DataInputStream in = new DataInputStream(new GZIPInputStream(raw, 1 << 16)))
            {
                return new PromptWords(null, BuiltinTokenSpace.readAscendingIds(in));
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * @return how many words there are.
     */
    public int size()
    {
        return tokenIds.length;
    }

    /**
     * @param index a word index, {@code 0 <= index < size()}.
     * @return the word with its leading space.
     */
    public String word(final int index)
    {
        String[] text = words;
        if (null == text)
        {
            // the built-in words: decoded once (a race decodes twice, to equal arrays)
            final TokenVocabulary vocabulary = new BuiltinTokenizer().vocabulary();
            text = new String[tokenIds.length];
            for (int i = 0; i < text.length; i++)
            {
                text[i] = new String(vocabulary.bytes(tokenIds[i]), StandardCharsets.US_ASCII);
            }
            words = text;
        }
        return text[index];
    }

    /**
     * @param index a word index.
     * @return the word's token id.
     */
    public int tokenId(final int index)
    {
        return tokenIds[index];
    }

    /**
     * A space followed by 3 to 10 lower-case ASCII letters, or null.
     */
    private static String wordOf(final byte[] bytes)
    {
        if (bytes.length < 4 || bytes.length > 11 || ' ' != bytes[0])
        {
            return null;
        }
        for (int i = 1; i < bytes.length; i++)
        {
            if (bytes[i] < 'a' || bytes[i] > 'z')
            {
                return null;
            }
        }
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    /**
     * Concatenations must tokenize word by word; a tokenizer that merges across spaces is not supported.
     */
    private void check(final Tokenizer tokenizer)
    {
        final StringBuilder text = new StringBuilder();
        final int sample = Math.min(words.length, 512);
        for (int i = 0; i < sample; i++)
        {
            text.append(words[(int)((i * 2654435761L) % words.length)]);
        }
        final int[] ids = tokenizer.encode(text.toString());
        if (ids.length != sample)
        {
            throw new IllegalArgumentException("tokenizer " + tokenizer.name() + " does not split space-separated " +
                "words into one token each (" + sample + " words gave " + ids.length + " tokens)");
        }
    }
}
