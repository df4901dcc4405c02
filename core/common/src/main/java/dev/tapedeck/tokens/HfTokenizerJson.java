package dev.tapedeck.tokens;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

/**
 * Reads what tapedeck needs from a Hugging Face {@code tokenizer.json} without materialising the whole file: the
 * vocabulary (token string to id), the added tokens, and the decoder family, and from them the raw bytes of every
 * token id.
 * <p>
 * Byte-level BPE vocabularies (GPT-2, Llama 3, Qwen) map back to exact bytes. SentencePiece-style vocabularies
 * ({@code ▁} for a space, {@code <0xNN>} byte fallback) map back exactly for single tokens. Anything else uses the
 * token string as UTF-8. Used once at start-up; not thread safe.
 */
final class HfTokenizerJson
{
    enum DecoderKind
    {
        BYTE_LEVEL, SENTENCEPIECE, WORDPIECE, PLAIN
    }

    private final Map<String, Integer> vocab = new HashMap<>(1 << 18);
    private final List<String> unigramPieces = new ArrayList<>();
    private final Map<Integer, String> addedTokens = new HashMap<>();
    private final Map<Integer, Boolean> addedSpecial = new HashMap<>();
    private final List<String> decoderTypes = new ArrayList<>();

    private HfTokenizerJson()
    {
    }

    static HfTokenizerJson read(final Path file) throws IOException
    {
        final HfTokenizerJson json = new HfTokenizerJson();
        try (InputStream in = Files.newInputStream(file);
            JsonParser parser = new JsonFactory().createParser(in))
        {
            expect(parser.nextToken(), JsonToken.START_OBJECT, file);
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String field = parser.currentName();
                parser.nextToken();
                switch (field)
                {
                    case "added_tokens":
                        json.readAddedTokens(parser);
                        break;
                    case "decoder":
                        json.readDecoder(parser);
                        break;
                    case "model":
                        json.readModel(parser);
                        break;
                    default:
                        parser.skipChildren();
                }
            }
        }
        if (json.vocab.isEmpty() && json.unigramPieces.isEmpty())
        {
            throw new IOException(file + ": no model.vocab found; is this a Hugging Face tokenizer.json?");
        }
        return json;
    }

    DecoderKind decoderKind()
    {
        for (final String type : decoderTypes)
        {
            if ("ByteLevel".equals(type))
            {
                return DecoderKind.BYTE_LEVEL;
            }
        }
        for (final String type : decoderTypes)
        {
            if ("Metaspace".equals(type) || "ByteFallback".equals(type) || "Replace".equals(type))
            {
                return DecoderKind.SENTENCEPIECE;
            }
            if ("WordPiece".equals(type))
            {
                return DecoderKind.WORDPIECE;
            }
        }
        return DecoderKind.PLAIN;
    }

    /**
     * @return raw bytes per id; null for special tokens.
     */
    byte[][] bytesById()
    {
        int maxId = unigramPieces.size() - 1;
        for (final int id : vocab.values())
        {
            maxId = Math.max(maxId, id);
        }
        for (final int id : addedTokens.keySet())
        {
            maxId = Math.max(maxId, id);
        }
        final byte[][] table = new byte[maxId + 1][];
        final DecoderKind kind = decoderKind();
        for (final Map.Entry<String, Integer> entry : vocab.entrySet())
        {
            table[entry.getValue()] = tokenBytes(entry.getKey(), kind);
        }
        for (int id = 0; id < unigramPieces.size(); id++)
        {
            table[id] = tokenBytes(unigramPieces.get(id), kind);
        }
        for (final Map.Entry<Integer, String> entry : addedTokens.entrySet())
        {
            final boolean special = addedSpecial.getOrDefault(entry.getKey(), Boolean.TRUE);
            table[entry.getKey()] = special ? null : entry.getValue().getBytes(StandardCharsets.UTF_8);
        }
        return table;
    }

    /**
     * @param candidates token strings in order of preference.
     * @return the id of the first candidate that exists, or -1.
     */
    int idOf(final String... candidates)
    {
        for (final String candidate : candidates)
        {
            for (final Map.Entry<Integer, String> entry : addedTokens.entrySet())
            {
                if (entry.getValue().equals(candidate))
                {
                    return entry.getKey();
                }
            }
            final Integer id = vocab.get(candidate);
            if (null != id)
            {
                return id;
            }
        }
        return -1;
    }

    static byte[] tokenBytes(final String token, final DecoderKind kind)
    {
        switch (kind)
        {
            case BYTE_LEVEL:
                return ByteLevel.decode(token);
            case SENTENCEPIECE:
                if (token.length() == 6 && token.startsWith("<0x") && token.endsWith(">"))
                {
                    try
                    {
                        return new byte[] {(byte)Integer.parseInt(token.substring(3, 5), 16)};
                    }
                    catch (final NumberFormatException ignored)
                    {
                        // an ordinary token that happens to look like a byte
                    }
                }
                return token.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8);
            case WORDPIECE:
                return (token.startsWith("##") ? token.substring(2) : " " + token).getBytes(StandardCharsets.UTF_8);
            default:
                return token.getBytes(StandardCharsets.UTF_8);
        }
    }

    private void readAddedTokens(final JsonParser parser) throws IOException
    {
        if (parser.currentToken() != JsonToken.START_ARRAY)
        {
            parser.skipChildren();
            return;
        }
        while (parser.nextToken() == JsonToken.START_OBJECT)
        {
            int id = -1;
            String content = null;
            boolean special = true;
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String field = parser.currentName();
                final JsonToken value = parser.nextToken();
                if ("id".equals(field) && value == JsonToken.VALUE_NUMBER_INT)
                {
                    id = parser.getIntValue();
                }
                else if ("content".equals(field) && value == JsonToken.VALUE_STRING)
                {
                    content = parser.getText();
                }
                else if ("special".equals(field) && value.isBoolean())
                {
                    special = parser.getBooleanValue();
                }
                else
                {
                    parser.skipChildren();
                }
            }
            if (id >= 0 && null != content)
            {
                addedTokens.put(id, content);
                addedSpecial.put(id, special);
            }
        }
    }

    private void readDecoder(final JsonParser parser) throws IOException
    {
        if (parser.currentToken() != JsonToken.START_OBJECT)
        {
            parser.skipChildren();
            return;
        }
        int depth = 1;
        while (depth > 0)
        {
            final JsonToken token = parser.nextToken();
            if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY)
            {
                depth++;
            }
            else if (token == JsonToken.END_OBJECT || token == JsonToken.END_ARRAY)
            {
                depth--;
            }
            else if (token == JsonToken.FIELD_NAME && "type".equals(parser.currentName()))
            {
                if (parser.nextToken() == JsonToken.VALUE_STRING)
                {
                    decoderTypes.add(parser.getText());
                }
            }
        }
    }

    private void readModel(final JsonParser parser) throws IOException
    {
        if (parser.currentToken() != JsonToken.START_OBJECT)
        {
            parser.skipChildren();
            return;
        }
        while (parser.nextToken() == JsonToken.FIELD_NAME)
        {
            final String field = parser.currentName();
            final JsonToken value = parser.nextToken();
            if ("vocab".equals(field) && value == JsonToken.START_OBJECT)
            {
                while (parser.nextToken() == JsonToken.FIELD_NAME)
                {
                    final String token = parser.currentName();
                    parser.nextToken();
                    vocab.put(token, parser.getIntValue());
                }
            }
            else if ("vocab".equals(field) && value == JsonToken.START_ARRAY)
            {
                // Unigram: [[piece, score], ...], the id is the position
                while (parser.nextToken() == JsonToken.START_ARRAY)
                {
                    parser.nextToken();
                    unigramPieces.add(parser.getText());
                    while (parser.nextToken() != JsonToken.END_ARRAY)
                    {
                        parser.skipChildren();
                    }
                }
            }
            else
            {
                parser.skipChildren();
            }
        }
    }

    private static void expect(final JsonToken actual, final JsonToken expected, final Path file) throws IOException
    {
        if (actual != expected)
        {
            throw new IOException(file + ": not a JSON object");
        }
    }

    /** The GPT-2 byte-to-unicode table used by byte-level BPE, inverted. */
    static final class ByteLevel
    {
        private static final int[] BYTE_OF_CHAR = new int[512];

        static
        {
            java.util.Arrays.fill(BYTE_OF_CHAR, -1);
            int next = 256;
            for (int b = 0; b < 256; b++)
            {
                final boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
                final int ch = printable ? b : next++;
                BYTE_OF_CHAR[ch] = b;
            }
        }

        private ByteLevel()
        {
        }

        static byte[] decode(final String token)
        {
            final byte[] out = new byte[token.length()];
            int n = 0;
            for (int i = 0; i < token.length(); i++)
            {
                final char c = token.charAt(i);
                final int b = c < BYTE_OF_CHAR.length ? BYTE_OF_CHAR[c] : -1;
                if (b < 0)
                {
                    // not a byte-level symbol: keep the character's UTF-8 as is
                    final byte[] raw = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                    final byte[] grown = java.util.Arrays.copyOf(out, out.length + raw.length);
                    System.arraycopy(raw, 0, grown, n, raw.length);
                    return java.util.Arrays.copyOf(concat(grown, n + raw.length, token.substring(i + 1)), 0);
                }
                out[n++] = (byte)b;
            }
            return n == out.length ? out : java.util.Arrays.copyOf(out, n);
        }

        private static byte[] concat(final byte[] head, final int headLength, final String rest)
        {
            final byte[] tail = decode(rest);
            final byte[] all = java.util.Arrays.copyOf(head, headLength + tail.length);
            System.arraycopy(tail, 0, all, headLength, tail.length);
            return all;
        }
    }
}
