package dev.tapedeck.enginecore;

import dev.tapedeck.kv.MediaSpans;
import dev.tapedeck.protocol.enginecore.AddRequest;

/**
 * An ADD's images, audio and videos as its {@code mm_features} place them among the prompt's tokens: their
 * identifiers go into the block hashes and KV events of the blocks they touch, as in vLLM's prefix cache. Stateless.
 */
final class AddMedia
{
    private AddMedia()
    {
    }

    /**
     * @param add a decoded ADD.
     * @return where its media sit, or null for a text prompt.
     * @throws IllegalArgumentException when the positions are not ordered runs inside the prompt.
     */
    static MediaSpans spans(final AddRequest add)
    {
        final int count = add.mediaCount();
        if (0 == count)
        {
            return null;
        }
        final String[] identifiers = new String[count];
        final int[] offsets = new int[count];
        final int[] lengths = new int[count];
        for (int i = 0; i < count; i++)
        {
            identifiers[i] = add.mediaIdentifier(i);
            offsets[i] = add.mediaOffset(i);
            lengths[i] = add.mediaLength(i);
        }
        if ((long)offsets[count - 1] + lengths[count - 1] > add.promptLength())
        {
            throw new IllegalArgumentException("a run ends at token " + ((long)offsets[count - 1] +
                lengths[count - 1]) + ", past the prompt's " + add.promptLength());
        }
        return new MediaSpans(identifiers, offsets, lengths);
    }
}
