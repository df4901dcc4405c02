package dev.tapedeck.protocol.enginecore;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * Reads an ADD's {@code mm_features} (vLLM 0.11 and later): a list of {@code MultiModalFeatureSpec} maps, of which a
 * simulated engine needs each feature's {@code identifier} (or {@code mm_hash}) and its {@code mm_position} map's
 * {@code offset} and {@code length}, for the prefix cache's block hashes. The media tensors ({@code data}) are
 * skipped without being read. A feature without an identifier or a position is left out. Stateless; allocates
 * nothing once the request's arrays have grown.
 */
final class MultimodalFeatures
{
    private static final byte[] IDENTIFIER = "identifier".getBytes();
    private static final byte[] MM_HASH = "mm_hash".getBytes();
    private static final byte[] MM_POSITION = "mm_position".getBytes();
    private static final byte[] OFFSET = "offset".getBytes();
    private static final byte[] LENGTH = "length".getBytes();
    private static final byte[][] FEATURE_KEYS = {IDENTIFIER, MM_HASH, MM_POSITION};
    private static final byte[][] POSITION_KEYS = {OFFSET, LENGTH};

    private MultimodalFeatures()
    {
    }

    /**
     * @param reader positioned on the {@code mm_features} array; left after it.
     * @param out where the features go.
     */
    static void read(final MsgPackReader reader, final AddRequest out)
    {
        final int features = reader.readArrayHeader();
        for (int i = 0; i < features && reader.ok(); i++)
        {
            if (ValueType.MAP != reader.nextType())
            {
                reader.skipValue();
                continue;
            }
            int identifierAt = -1;
            int identifierLength = -1;
            int hashAt = -1;
            int hashLength = -1;
            long position = -1;
            final int pairs = reader.readMapHeader();
            for (int p = 0; p < pairs && reader.ok(); p++)
            {
                final int key = key(reader, FEATURE_KEYS);
                final ValueType type = reader.nextType();
                if (key < 2 && key >= 0 && ValueType.STRING == type)
                {
                    final int length = reader.readStringHeader();
                    if (0 == key)
                    {
                        identifierAt = reader.position();
                        identifierLength = length;
                    }
                    else
                    {
                        hashAt = reader.position();
                        hashLength = length;
                    }
                    reader.skipBytes(length);
                }
                else if (2 == key && ValueType.MAP == type)
                {
                    position = position(reader);
                }
                else
                {
                    reader.skipValue();
                }
            }
            if (position >= 0 && (identifierLength >= 0 || hashLength >= 0) && reader.ok())
            {
                out.addMedia(reader.buffer(), identifierLength >= 0 ? identifierAt : hashAt,
                    identifierLength >= 0 ? identifierLength : hashLength, (int)(position >>> 32), (int)position);
            }
        }
    }

    /** A {@code PlaceholderRange} map: {@code offset << 32 | length}, or -1 without both. */
    private static long position(final MsgPackReader reader)
    {
        long offset = -1;
        long length = -1;
        final int pairs = reader.readMapHeader();
        for (int p = 0; p < pairs && reader.ok(); p++)
        {
            final int key = key(reader, POSITION_KEYS);
            final boolean integer = ValueType.INTEGER == reader.nextType();
            if (0 == key && integer)
            {
                offset = reader.readLong();
            }
            else if (1 == key && integer)
            {
                length = reader.readLong();
            }
            else
            {
                reader.skipValue();
            }
        }
        return offset < 0 || offset > Integer.MAX_VALUE || length < 1 || length > Integer.MAX_VALUE ? -1 :
            offset << 32 | length;
    }

    /** Read a map key: the index of the name it equals, or -1 (a name not listed, or a key that is not a string). */
    private static int key(final MsgPackReader reader, final byte[][] names)
    {
        if (ValueType.STRING != reader.nextType())
        {
            reader.skipValue();
            return -1;
        }
        final int at = reader.position();
        for (int i = 0; i < names.length; i++)
        {
            reader.seek(at);
            if (reader.readStringEquals(names[i]))
            {
                return i;
            }
        }
        return -1;
    }
}
