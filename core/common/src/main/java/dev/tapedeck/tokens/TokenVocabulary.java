package dev.tapedeck.tokens;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Token id to bytes, for turning generated ids into text, and the ids random output is drawn from.
 * <p>
 * Random output draws from "text-like" tokens: complete UTF-8 on their own, made of Latin letters, digits,
 * punctuation, spaces and newlines, at most {@value #MAX_RANDOM_TOKEN_BYTES} bytes. Generated text therefore reads
 * like (nonsense) prose, needs JSON escaping now and then (quotes, backslashes, newlines, non-ASCII letters), and is
 * valid UTF-8 token by token. Immutable after construction; safe to share.
 */
public final class TokenVocabulary
{
    /** Longest token (in bytes) random output uses. */
    public static final int MAX_RANDOM_TOKEN_BYTES = 16;

    private static final byte[] EMPTY = new byte[0];

    private final byte[][] bytesById;
    private final int[] randomTokenIds;

    /**
     * @param bytesById raw bytes per token id; null entries are ids without text (specials, holes).
     */
    public TokenVocabulary(final byte[][] bytesById)
    {
        this.bytesById = bytesById;
        this.randomTokenIds = selectRandomTokens(bytesById);
        if (0 == randomTokenIds.length)
        {
            throw new IllegalArgumentException("the vocabulary has no text-like tokens to generate from");
        }
    }

    /**
     * @param tokenId a token id.
     * @return its bytes; empty for special or unknown ids (they carry no text, as with skip_special_tokens).
     */
    public byte[] bytes(final int tokenId)
    {
        if (tokenId < 0 || tokenId >= bytesById.length)
        {
            return EMPTY;
        }
        final byte[] bytes = bytesById[tokenId];
        return null == bytes ? EMPTY : bytes;
    }

    /**
     * @return number of ids (the highest id plus one).
     */
    public int size()
    {
        return bytesById.length;
    }

    /**
     * @return ids random output draws from (do not modify).
     */
    public int[] randomTokenIds()
    {
        return randomTokenIds;
    }

    private static int[] selectRandomTokens(final byte[][] bytesById)
    {
        final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
        int[] ids = new int[1024];
        int count = 0;
        for (int id = 0; id < bytesById.length; id++)
        {
            final byte[] bytes = bytesById[id];
            if (null == bytes || 0 == bytes.length || bytes.length > MAX_RANDOM_TOKEN_BYTES)
            {
                continue;
            }
            if (isTextLike(bytes, decoder))
            {
                if (count == ids.length)
                {
                    ids = Arrays.copyOf(ids, count * 2);
                }
                ids[count++] = id;
            }
        }
        return Arrays.copyOf(ids, count);
    }

    private static boolean isTextLike(final byte[] bytes, final CharsetDecoder decoder)
    {
        final String text;
        try
        {
            text = decoder.decode(ByteBuffer.wrap(bytes)).toString();
        }
        catch (final CharacterCodingException ex)
        {
            return false;
        }
        boolean hasVisible = false;
        for (int i = 0; i < text.length(); )
        {
            final int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (' ' == cp || '\n' == cp)
            {
                continue;
            }
            final boolean latinLetter = Character.isLetter(cp) &&
                Character.UnicodeScript.LATIN == Character.UnicodeScript.of(cp);
            final boolean asciiVisible = cp > ' ' && cp < 0x7f;
            if (!latinLetter && !asciiVisible)
            {
                return false;
            }
            hasVisible = true;
        }
        return hasVisible || "\n".equals(text) || " ".equals(text);
    }
}
