package dev.tapedeck.record;

import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * The {@code mm_hashes} of a multimodal request, read from its ADD payload: from vLLM 0.10.2 on, the
 * {@code mm_hash} of each {@code MultiModalFeatureSpec} map in {@code mm_features} (slot 2), in order; on 0.10.0 and
 * 0.10.1, the {@code mm_hashes} string array (slot 3). Tensors and other fields are skipped without being read.
 * Stateless; thread safe.
 */
final class MultimodalHashes
{
    private static final byte[] MM_HASH = "mm_hash".getBytes();

    private MultimodalHashes()
    {
    }

    /**
     * @param payload an ADD payload ({@code EngineCoreRequest}).
     * @return the hashes in input order, or null when there are none or the payload cannot be read.
     */
    static String[] of(final byte[] payload)
    {
        final MsgPackReader reader = new MsgPackReader().wrap(new UnsafeBuffer(payload), 0, payload.length);
        final int slots = reader.readArrayHeader();
        if (slots < 4)
        {
            return null;
        }
        reader.skipValue();
        reader.skipValue();
        final List<String> hashes = new ArrayList<>();
        if (ValueType.ARRAY == reader.nextType())
        {
            final int features = reader.readArrayHeader();
            for (int i = 0; i < features && reader.ok(); i++)
            {
                readFeature(reader, hashes);
            }
        }
        else
        {
            // the 0.10.0/0.10.1 layout: mm_inputs or mm_kwargs, then mm_hashes
            reader.skipValue();
            if (ValueType.ARRAY == reader.nextType())
            {
                final int count = reader.readArrayHeader();
                for (int i = 0; i < count && ValueType.STRING == reader.nextType(); i++)
                {
                    hashes.add(reader.readString());
                }
            }
        }
        return reader.ok() && !hashes.isEmpty() ? hashes.toArray(new String[0]) : null;
    }

    private static void readFeature(final MsgPackReader reader, final List<String> hashes)
    {
        if (ValueType.MAP != reader.nextType())
        {
            reader.skipValue();
            return;
        }
        final int pairs = reader.readMapHeader();
        for (int p = 0; p < pairs && reader.ok(); p++)
        {
            if (ValueType.STRING != reader.nextType())
            {
                reader.skipValue();
                reader.skipValue();
            }
            else if (reader.readStringEquals(MM_HASH) && ValueType.STRING == reader.nextType())
            {
                hashes.add(reader.readString());
            }
            else
            {
                reader.skipValue();
            }
        }
    }
}
