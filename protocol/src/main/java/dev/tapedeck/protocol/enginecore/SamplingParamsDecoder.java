package dev.tapedeck.protocol.enginecore;

import java.nio.charset.StandardCharsets;

import org.agrona.DirectBuffer;

import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.ValueType;

/**
 * Reads vLLM's {@code SamplingParams} (a msgpack map that omits default values) into an {@link AddRequest}: the
 * limits and stop conditions an engine honours, {@code _eos_token_id}, and {@code extra_args.kv_transfer_params}
 * kept as raw msgpack. Every other key is skipped. Keys are matched in place, so decoding allocates nothing.
 * Not thread safe.
 */
final class SamplingParamsDecoder
{
    private static final int MAX_TOKENS = 0;
    private static final int MIN_TOKENS = 1;
    private static final int IGNORE_EOS = 2;
    private static final int N = 3;
    private static final int SEED = 4;
    private static final int LOGPROBS = 5;
    private static final int STOP_TOKEN_IDS = 6;
    private static final int EOS_TOKEN_ID = 7;
    private static final int EXTRA_ARGS = 8;
    private static final int UNKNOWN = -1;
    private static final byte[][] KEYS = ascii("max_tokens", "min_tokens", "ignore_eos", "n", "seed", "logprobs",
        "stop_token_ids", "_eos_token_id", "extra_args");
    private static final byte[] KV_TRANSFER_PARAMS = "kv_transfer_params".getBytes(StandardCharsets.US_ASCII);

    boolean decode(final MsgPackReader reader, final AddRequest out)
    {
        final int pairs = reader.readMapHeader();
        for (int i = 0; i < pairs && reader.ok(); i++)
        {
            final int keyLength = reader.readStringHeader();
            if (keyLength < 0)
            {
                return false;
            }
            final int key = match(reader.buffer(), reader.position(), keyLength);
            reader.skipBytes(keyLength);
            if (reader.tryReadNil())
            {
                continue;
            }
            switch (key)
            {
                case MAX_TOKENS:
                    out.maxTokens = reader.readInt();
                    break;
                case MIN_TOKENS:
                    out.minTokens = reader.readInt();
                    break;
                case IGNORE_EOS:
                    out.ignoreEos = reader.readBoolean();
                    break;
                case N:
                    out.n = reader.readInt();
                    break;
                case SEED:
                    out.seed = reader.readLong();
                    out.hasSeed = true;
                    break;
                case LOGPROBS:
                    out.logprobs = reader.readInt();
                    break;
                case STOP_TOKEN_IDS:
                    readStopTokenIds(reader, out);
                    break;
                case EOS_TOKEN_ID:
                    out.eosTokenId = reader.readInt();
                    break;
                case EXTRA_ARGS:
                    readExtraArgs(reader, out);
                    break;
                default:
                    reader.skipValue();
            }
        }
        return reader.ok();
    }

    private static int match(final DirectBuffer buffer, final int offset, final int length)
    {
        for (int k = 0; k < KEYS.length; k++)
        {
            if (equalsAt(buffer, offset, length, KEYS[k]))
            {
                return k;
            }
        }
        return UNKNOWN;
    }

    private static boolean equalsAt(final DirectBuffer buffer, final int offset, final int length, final byte[] key)
    {
        if (length != key.length)
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            if (buffer.getByte(offset + i) != key[i])
            {
                return false;
            }
        }
        return true;
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
            if (reader.readStringEquals(KV_TRANSFER_PARAMS) && ValueType.MAP == reader.nextType())
            {
                final int start = reader.position();
                reader.skipValue();
                if (reader.ok())
                {
                    out.kvTransferParams(reader.buffer(), start, reader.position() - start);
                }
            }
            else
            {
                reader.skipValue();
            }
        }
    }

    private static void readStopTokenIds(final MsgPackReader reader, final AddRequest out)
    {
        final int count = reader.readArrayHeader();
        if (count < 0)
        {
            return;
        }
        out.stopTokenIdCapacity(Math.min(count, Math.max(0, reader.remaining())));
        for (int i = 0; i < count && reader.ok(); i++)
        {
            final int tokenId = reader.readInt();
            if (reader.ok())
            {
                out.addStopTokenId(tokenId);
            }
        }
    }

    private static byte[][] ascii(final String... keys)
    {
        final byte[][] bytes = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++)
        {
            bytes[i] = keys[i].getBytes(StandardCharsets.US_ASCII);
        }
        return bytes;
    }
}
