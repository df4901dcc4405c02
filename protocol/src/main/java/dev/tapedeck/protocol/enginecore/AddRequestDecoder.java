package dev.tapedeck.protocol.enginecore;

import org.agrona.DirectBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * Decodes an ADD payload ({@code EngineCoreRequest}, a positional msgpack array) from any vLLM line 0.10 to main, by
 * the shape of its slots rather than by version (docs/engine-core.md):
 * <ol>
 *   <li>[0] request_id, [1] prompt_token_ids (or nil with prompt embeddings);</li>
 *   <li>new layout when [3] is a map, or [3] is nil and [4] a map (mm_features at 2, sampling at 3, pooling at 4);
 *       otherwise the 0.10.0/0.10.1 layout (three multimodal slots, sampling at 5, pooling at 6);</li>
 *   <li>then an optional eos_token_id (present when the next slot is not a float), arrival_time, lora_request,
 *       cache_salt, data_parallel_rank;</li>
 *   <li>then slots that are not integers (prompt_embeds, prompt_is_token_ids) up to client_index, current_wave and
 *       priority; anything after is ignored.</li>
 * </ol>
 * Multimodal features and tensors are skipped; their aux frames belong to the caller. A typical request (no LoRA, no
 * cache salt) decodes without allocating. Not thread safe; reusable.
 */
public final class AddRequestDecoder
{
    private final MsgPackReader reader = new MsgPackReader();
    private final SamplingParamsDecoder samplingParams = new SamplingParamsDecoder();
    private String error;

    /**
     * @param buffer the payload frame.
     * @param offset first byte.
     * @param length bytes.
     * @param out filled with the request (cleared first).
     * @return true on success; otherwise {@link #error()} says why (and {@code out.requestId()} holds the id if it
     * was readable, for logging).
     */
    public boolean decode(final DirectBuffer buffer, final int offset, final int length, final AddRequest out)
    {
        out.clear();
        error = null;
        reader.wrap(buffer, offset, length);
        final int slots = reader.readArrayHeader();
        if (slots < 3)
        {
            return fail("EngineCoreRequest is not an array of at least 3 slots");
        }
        final int idLength = reader.readStringHeader();
        if (idLength < 0)
        {
            return fail("request_id is not a string");
        }
        out.requestId(reader.buffer(), reader.position(), idLength);
        reader.skipBytes(idLength);
        if (!reader.tryReadNil())
        {
            readPrompt(out);
        }
        if (!reader.ok())
        {
            return fail("prompt_token_ids");
        }
        final int slot = readMiddle(slots, out);
        if (slot < 0)
        {
            return false;
        }
        readTail(slots, slot, out);
        if (!reader.ok())
        {
            return fail("malformed request");
        }
        return true;
    }

    /**
     * @return why the last decode failed.
     */
    public String error()
    {
        return error;
    }

    private int readMiddle(final int slots, final AddRequest out)
    {
        final int start = reader.position();
        // slot 2 may be a large multimodal structure; look at slots 3 and 4 first
        reader.skipValue();
        final ValueType third = reader.nextType();
        boolean newLayout = ValueType.MAP == third;
        if (!newLayout && ValueType.NIL == third && slots > 4)
        {
            final int afterThird = reader.position();
            reader.skipValue();
            newLayout = ValueType.MAP == reader.nextType();
            reader.seek(afterThird);
        }
        reader.seek(start);
        final int multimodalSlots = newLayout ? 1 : 3;
        for (int i = 0; i < multimodalSlots; i++)
        {
            if (!reader.tryReadNil())
            {
                out.hasMultimodal = true;
                if (newLayout && ValueType.ARRAY == reader.nextType())
                {
                    MultimodalFeatures.read(reader, out);
                }
                else
                {
                    reader.skipValue();
                }
            }
        }
        int slot = 2 + multimodalSlots;
        if (slot < slots && !reader.tryReadNil())
        {
            if (!samplingParams.decode(reader, out))
            {
                fail("sampling_params: " + reader.errorMessage());
                return -1;
            }
        }
        slot++;
        if (slot < slots && !reader.tryReadNil())
        {
            out.isPooling = true;
            reader.skipValue();
        }
        slot++;
        return slot;
    }

    private void readTail(final int slots, final int firstSlot, final AddRequest out)
    {
        int slot = firstSlot;
        if (slot < slots && ValueType.FLOAT != reader.nextType())
        {
            // an eos_token_id slot (lines before the move into SamplingParams)
            if (!reader.tryReadNil())
            {
                out.eosTokenId = reader.readInt();
            }
            slot++;
        }
        if (slot++ < slots)
        {
            out.arrivalTime = reader.tryReadNil() ? 0.0 : reader.readDouble();
        }
        if (slot++ < slots && !reader.tryReadNil())
        {
            readLora(out);
        }
        if (slot++ < slots && !reader.tryReadNil())
        {
            out.cacheSalt = reader.readString();
        }
        if (slot++ < slots && !reader.tryReadNil())
        {
            out.dataParallelRank = reader.readInt();
        }
        while (slot < slots && ValueType.INTEGER != reader.nextType() && reader.ok())
        {
            if (ValueType.NIL != reader.nextType())
            {
                out.hasPromptEmbeds |= ValueType.ARRAY == reader.nextType() && 0 == out.promptLength();
            }
            reader.skipValue();
            slot++;
        }
        if (slot++ < slots)
        {
            out.clientIndex = reader.readInt();
        }
        if (slot++ < slots)
        {
            out.currentWave = reader.readInt();
        }
        if (slot < slots)
        {
            out.priority = reader.readInt();
        }
    }

    private void readLora(final AddRequest out)
    {
        final int fields = reader.readArrayHeader();
        for (int i = 0; i < fields; i++)
        {
            if (0 == i && ValueType.STRING == reader.nextType())
            {
                out.loraName = reader.readString();
            }
            else if (1 == i && ValueType.INTEGER == reader.nextType())
            {
                out.loraId = reader.readInt();
            }
            else
            {
                reader.skipValue();
            }
        }
    }

    private void readPrompt(final AddRequest out)
    {
        final int count = reader.readArrayHeader();
        if (count < 0)
        {
            return;
        }
        // every element takes at least one byte: a count beyond the frame is malformed, not a reason to allocate
        out.promptCapacity(Math.min(count, Math.max(0, reader.remaining())));
        for (int i = 0; i < count && reader.ok(); i++)
        {
            final int tokenId = reader.readInt();
            if (reader.ok())
            {
                out.addPromptTokenId(tokenId);
            }
        }
    }

    private boolean fail(final String message)
    {
        error = message + (reader.ok() ? "" : " (" + reader.errorMessage() + ")");
        return false;
    }
}
