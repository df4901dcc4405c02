package dev.tapedeck.kv;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Where a prompt's images, audio clips and videos sit among its tokens, as vLLM's {@code mm_features} place them: each
 * a run of placeholder tokens ({@code offset}, {@code length}) and the media's {@code identifier}. Identical
 * placeholder tokens stand for any picture, so vLLM mixes the identifier into the hash of every block the run touches
 * (its {@code extra_keys}), after the LoRA name and before the cache salt; {@link #keysOfBlock} gives them.
 * <p>
 * Immutable and safe to share between threads.
 */
public final class MediaSpans
{
    private final String[] identifiers;
    private final byte[][] identifiersUtf8;
    private final int[] offsets;
    private final int[] lengths;

    /**
     * @param identifiers each media item's identifier (its hash), in prompt order.
     * @param offsets the index of each item's first placeholder token, increasing.
     * @param lengths each item's placeholder tokens, at least 1.
     * @throws IllegalArgumentException for arrays of different lengths, overlapping or unordered runs.
     */
    public MediaSpans(final String[] identifiers, final int[] offsets, final int[] lengths)
    {
        if (identifiers.length != offsets.length || offsets.length != lengths.length)
        {
            throw new IllegalArgumentException("one offset and one length per identifier");
        }
        for (int i = 0; i < offsets.length; i++)
        {
            if (lengths[i] < 1 || offsets[i] < (0 == i ? 0 : offsets[i - 1] + lengths[i - 1]))
            {
                throw new IllegalArgumentException("media runs must be non-empty, ordered and apart: " +
                    Arrays.toString(offsets) + " / " + Arrays.toString(lengths));
            }
        }
        this.identifiers = identifiers.clone();
        this.offsets = offsets.clone();
        this.lengths = lengths.clone();
        identifiersUtf8 = new byte[identifiers.length][];
        for (int i = 0; i < identifiers.length; i++)
        {
            identifiersUtf8[i] = identifiers[i].getBytes(StandardCharsets.UTF_8);
        }
    }

    /**
     * @return how many media items.
     */
    public int count()
    {
        return identifiers.length;
    }

    /**
     * @param index an item.
     * @return its identifier.
     */
    public String identifier(final int index)
    {
        return identifiers[index];
    }

    /**
     * @param index an item.
     * @return its identifier in UTF-8 (lent, not to be changed).
     */
    public byte[] identifierUtf8(final int index)
    {
        return identifiersUtf8[index];
    }

    /**
     * @param index an item.
     * @return the index of its first placeholder token.
     */
    public int offset(final int index)
    {
        return offsets[index];
    }

    /**
     * @param index an item.
     * @return its placeholder tokens.
     */
    public int length(final int index)
    {
        return lengths[index];
    }

    /**
     * The items whose placeholder run overlaps the tokens {@code [startToken, endToken)} of a block: their identifiers
     * are the block's media extra keys, in order. vLLM walks the items with a cursor from block to block; for a block
     * of a prompt hashed from its start that is the same as this overlap. A binary search: O(log items + keys).
     *
     * @param startToken the block's first token.
     * @param endToken one past its last token.
     * @return {@code first << 32 | count}: the first overlapping item and how many (count 0 for none).
     */
    public long keysOfBlock(final int startToken, final int endToken)
    {
        // the runs are ordered and apart, so their ends increase: find the first that ends after the block starts
        int low = 0;
        int high = offsets.length;
        while (low < high)
        {
            final int middle = (low + high) >>> 1;
            if ((long)offsets[middle] + lengths[middle] <= startToken)
            {
                low = middle + 1;
            }
            else
            {
                high = middle;
            }
        }
        int count = 0;
        while (low + count < offsets.length && offsets[low + count] < endToken)
        {
            count++;
        }
        return 0 == count ? 0 : (long)low << 32 | count;
    }

    @Override
    public String toString()
    {
        final StringBuilder out = new StringBuilder("MediaSpans[");
        for (int i = 0; i < identifiers.length; i++)
        {
            out.append(0 == i ? "" : ", ").append(identifiers[i]).append('@').append(offsets[i]).append('+')
                .append(lengths[i]);
        }
        return out.append(']').toString();
    }
}
