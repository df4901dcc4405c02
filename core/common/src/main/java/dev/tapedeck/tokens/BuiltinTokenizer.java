package dev.tapedeck.tokens;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;

/**
 * The default tokenizer: OpenAI's {@code o200k_base} byte-pair encoding (pure Java, through jtokkit), plus the ChatML
 * markers {@code <|im_start|>} (200264) and {@code <|im_end|>} (200265) and {@code <|endoftext|>} (199999) as single
 * special tokens. Counts are those of a modern 200k-vocabulary BPE; use {@code --tokenizer tokenizer.json} for the
 * exact counts of the served model. Immutable; safe to share.
 */
public final class BuiltinTokenizer implements Tokenizer
{
    /** {@code <|endoftext|>}. */
    public static final int END_OF_TEXT = 199_999;
    /** {@code <|im_start|>}. */
    public static final int IM_START = 200_264;
    /** {@code <|im_end|>}. */
    public static final int IM_END = 200_265;

    private static final String[] SPECIAL_MARKERS = {"<|im_start|>", "<|im_end|>", "<|endoftext|>"};
    private static final int[] SPECIAL_IDS = {IM_START, IM_END, END_OF_TEXT};
    private static final int MERGEABLE_TOKENS = 199_998;

    private final Encoding encoding;
    private final TokenVocabulary vocabulary;

    /**
     * Loads the encoding and builds the vocabulary table (a few hundred milliseconds).
     */
    public BuiltinTokenizer()
    {
        encoding = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
        final byte[][] bytesById = new byte[IM_END + 1][];
        final IntArrayList one = new IntArrayList(1);
        one.add(0);
        for (int id = 0; id < MERGEABLE_TOKENS; id++)
        {
            one.set(0, id);
            bytesById[id] = encoding.decodeBytes(one);
        }
        vocabulary = new TokenVocabulary(bytesById);
    }

    @Override
    public String name()
    {
        return "o200k_base (built-in)";
    }

    @Override
    public int[] encode(final String text)
    {
        final IntArrayList ids = new IntArrayList(Math.max(16, text.length() / 3));
        int start = 0;
        while (start < text.length())
        {
            int markerAt = -1;
            int marker = -1;
            for (int m = 0; m < SPECIAL_MARKERS.length; m++)
            {
                final int at = text.indexOf(SPECIAL_MARKERS[m], start);
                if (at >= 0 && (markerAt < 0 || at < markerAt))
                {
                    markerAt = at;
                    marker = m;
                }
            }
            final int end = markerAt < 0 ? text.length() : markerAt;
            if (end > start)
            {
                final IntArrayList piece = encoding.encodeOrdinary(text.substring(start, end));
                for (int i = 0; i < piece.size(); i++)
                {
                    ids.add(piece.get(i));
                }
            }
            if (markerAt < 0)
            {
                break;
            }
            ids.add(SPECIAL_IDS[marker]);
            start = markerAt + SPECIAL_MARKERS[marker].length();
        }
        return ids.toArray();
    }

    @Override
    public TokenVocabulary vocabulary()
    {
        return vocabulary;
    }

    @Override
    public int eosTokenId()
    {
        return IM_END;
    }
}
