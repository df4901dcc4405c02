package dev.tapedeck.tokens;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;

/**
 * The token space of the built-in tokenizer ({@link BuiltinTokenizer}, o200k) without loading it: the ids random
 * output draws from, exactly {@code new BuiltinTokenizer().vocabulary().randomTokenIds()}, read from a resource
 * (tens of milliseconds) instead of loading the encoding and scanning its vocabulary (about half a second). For a
 * simulator that never turns text into tokens. {@code BuiltinTokenSpaceTest} checks the resource against the
 * tokenizer and, when they differ, writes the resource it should be.
 * <p>
 * Thread safe: the ids are read once, on first use (class holder), and shared; callers must not modify them.
 */
public final class BuiltinTokenSpace
{
    /** The resource: gzip of a 4-byte count, then each id as the unsigned LEB128 varint of its gap to the previous. */
    static final String RESOURCE = "o200k-random-token-ids.bin.gz";

    private BuiltinTokenSpace()
    {
    }

    /**
     * @return the ids random output draws from, ascending (do not modify).
     */
    public static int[] randomTokenIds()
    {
        return Holder.IDS;
    }

    /**
     * @return the end-of-sequence id, {@link BuiltinTokenizer#eosTokenId()}.
     */
    public static int eosTokenId()
    {
        return BuiltinTokenizer.IM_END;
    }

    /**
     * Read ascending ids written as a count and varint gaps.
     *
     * @param in the stream, positioned at the count.
     * @return the ids.
     * @throws IOException if the stream ends early.
     */
    public static int[] readAscendingIds(final DataInputStream in) throws IOException
    {
        final int[] ids = new int[in.readInt()];
        int previous = 0;
        for (int i = 0; i < ids.length; i++)
        {
            previous += readVarint(in);
            ids[i] = previous;
        }
        return ids;
    }

    private static int readVarint(final DataInputStream in) throws IOException
    {
        int value = 0;
        for (int shift = 0; ; shift += 7)
        {
            final int b = in.readUnsignedByte();
            value |= (b & 0x7f) << shift;
            if (0 == (b & 0x80))
            {
                return value;
            }
        }
    }

    /** Reads the resource on first use. */
    private static final class Holder
    {
        static final int[] IDS = read();

        private static int[] read()
        {
            try (InputStream raw = BuiltinTokenSpace.class.getResourceAsStream(RESOURCE))
            {
                if (null == raw)
                {
                    throw new IllegalStateException("resource " + RESOURCE + " is missing from the build");
                }
                try (DataInputStream in = new DataInputStream(new GZIPInputStream(raw, 1 << 16)))
                {
                    return readAscendingIds(in);
                }
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }
    }
}
