package dev.tapedeck.protocol.enginecore;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * Reads vLLM's {@code SamplingParams} (a msgpack map that omits default values) into an {@link AddRequest}: the
 * limits and stop conditions an engine honours, {@code _eos_token_id}, and {@code extra_args.kv_transfer_params}
 * kept as raw msgpack. Every other key is skipped. Not thread safe.
 */
final class SamplingParamsDecoder
{
    boolean decode(final MsgPackReader reader, final AddRequest out)
    {
        final int pairs = reader.readMapHeader();
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            final String key = reader.readString();
            if (null == key)
            {
                return false;
            }
            if (reader.tryReadNil())
            {
                continue;
            }
            switch (key)
            {
                case "max_tokens":
                    out.maxTokens = reader.readInt();
                    break;
                case "min_tokens":
                    out.minTokens = reader.readInt();
                    break;
                case "ignore_eos":
                    out.ignoreEos = reader.readBoolean();
                    break;
                case "n":
                    out.n = reader.readInt();
                    break;
                case "seed":
                    out.seed = reader.readLong();
                    out.hasSeed = true;
                    break;
                case "logprobs":
                    out.logprobs = reader.readInt();
                    break;
                case "stop_token_ids":
                    out.stopTokenIds = readInts(reader);
                    break;
                case "_eos_token_id":
                    out.eosTokenId = reader.readInt();
                    break;
                case "extra_args":
                    readExtraArgs(reader, out);
                    break;
                default:
                    reader.skipValue();
            }
        }
        return reader.ok();
    }

    private static void readExtraArgs(final MsgPackReader reader, final AddRequest out)
    {
        if (ValueType.MAP != reader.nextType())
        {
            reader.skipValue();
            return;
        }
        final int pairs = reader.readMapHeader();
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            final String key = reader.readString();
            if ("kv_transfer_params".equals(key) && ValueType.MAP == reader.nextType())
            {
                final int start = reader.position();
                reader.skipValue();
                out.kvTransferParams = new byte[reader.position() - start];
                reader.buffer().getBytes(start, out.kvTransferParams);
            }
            else
            {
                reader.skipValue();
            }
        }
    }

    private static int[] readInts(final MsgPackReader reader)
    {
        final int count = reader.readArrayHeader();
        final int[] values = new int[Math.max(count, 0)];
        for (int i = 0; i < values.length; i++)
        {
            values[i] = reader.readInt();
        }
        return values;
    }
}
