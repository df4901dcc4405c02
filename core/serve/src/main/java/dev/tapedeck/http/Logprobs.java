package dev.tapedeck.http;

import static java.nio.charset.StandardCharsets.US_ASCII;

import io.netty.buffer.ByteBuf;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.net.JsonBytes;
import dev.tapedeck.tokens.TokenVocabulary;

/**
 * Synthetic log-probabilities in vLLM's shapes: chat's {@code logprobs.content[]}, completions'
 * {@code {text_offset, token_logprobs, tokens, top_logprobs}}, and {@code prompt_logprobs}. There are no weights, so
 * the numbers are made up but consistent: each position's distribution is drawn from its token and position (the
 * same request gives the same numbers), the emitted token is the most likely one (rank 1, top-1 of
 * {@code top_logprobs}), the alternatives are sorted and their probabilities sum below one, and token strings are
 * the tokenizer's (one token decoded alone; a piece of a UTF-8 character shows as U+FFFD, as in vLLM).
 * <p>
 * Stateless; the writers allocate nothing (numbers are written digit by digit).
 */
final class Logprobs
{
    private static final byte[] REPLACEMENT = {(byte)0xEF, (byte)0xBF, (byte)0xBD};
    private static final long MICROS = 1_000_000L;

    /**
     * What a request asked for.
     *
     * @param topLogprobs alternatives per generated token (chat {@code top_logprobs}, completions
     *     {@code logprobs}), or -1 when no logprobs were asked for.
     * @param promptLogprobs alternatives per prompt token ({@code prompt_logprobs}), or -1 for none.
     */
    record Request(int topLogprobs, int promptLogprobs)
    {
        static final Request NONE = new Request(-1, -1);

        boolean sampled()
        {
            return topLogprobs >= 0;
        }

        boolean prompt()
        {
            return promptLogprobs >= 0;
        }
    }

    private Logprobs()
    {
    }

    /**
     * The log-probability of the token at {@code rank} (1 = the emitted one) of a position's distribution: the first
     * takes 40 to 99 % of the mass, each next one a geometric share of what is left.
     *
     * @return the log-probability, in micro-units (an integer, to be written without allocation).
     */
    static long logprobMicros(final int tokenId, final int position, final int rank)
    {
        final long hash = SeededRandom.mix(SeededRandom.mix(0x10c9L, tokenId), position);
        final double first = 0.4 + 0.59 * ((hash >>> 11) & 0xFFFF) / 65_536.0;
        // in log space, so that deep ranks (thousands, with -1 for the vocabulary) stay finite
        final double logProbability = 1 == rank ? Math.log(first) :
            Math.log((1 - first) * 0.9) - (rank - 1) * Math.log(2);
        return Math.round(logProbability * MICROS);
    }

    /**
     * @return the token at {@code rank} (2 and up) of a position whose emitted token is {@code tokenId}: a token of
     *     the vocabulary's text-like set, different from the emitted one.
     */
    static int alternative(final TokenVocabulary vocabulary, final int tokenId, final int position, final int rank)
    {
        // ranks walk the pool from a drawn start with a stride prime to its size, so no two ranks share a token;
        // the one step that would land on the emitted token takes the walk's last step instead
        final int[] pool = vocabulary.randomTokenIds();
        final long size = pool.length;
        final long stride = 7919 % size == 0 && size > 1 ? 7907 : 7919;
        final long start = Math.floorMod(SeededRandom.mix(tokenId, position), size);
        final long step = rank - 2;
        int index = (int)((start + step * stride) % size);
        if (pool[index] == tokenId)
        {
            index = (int)((start + (size - 1) * stride) % size);
        }
        return pool[index];
    }

    /**
     * One chat {@code content[]} entry: {@code {"token":..,"logprob":..,"bytes":[..],"top_logprobs":[..]}}.
     */
    static void writeChatEntry(final ByteBuf out, final TokenVocabulary vocabulary, final int tokenId,
        final int position, final int top)
    {
        writeChatToken(out, vocabulary, tokenId, logprobMicros(tokenId, position, 1));
        out.writeCharSequence(",\"top_logprobs\":[", US_ASCII);
        for (int rank = 1; rank <= top; rank++)
        {
            if (rank > 1)
            {
                out.writeByte(',');
            }
            final int id = 1 == rank ? tokenId : alternative(vocabulary, tokenId, position, rank);
            writeChatToken(out, vocabulary, id, logprobMicros(tokenId, position, rank));
            out.writeByte('}');
        }
        out.writeCharSequence("]}", US_ASCII);
    }

    /** {@code {"token":..,"logprob":..,"bytes":[..]} without the closing brace. */
    private static void writeChatToken(final ByteBuf out, final TokenVocabulary vocabulary, final int tokenId,
        final long logprobMicros)
    {
        out.writeCharSequence("{\"token\":", US_ASCII);
        writeTokenString(out, vocabulary, tokenId);
        out.writeCharSequence(",\"logprob\":", US_ASCII);
        writeMicros(out, logprobMicros);
        out.writeCharSequence(",\"bytes\":[", US_ASCII);
        final byte[] bytes = tokenBytes(vocabulary, tokenId);
        for (int i = 0; i < bytes.length; i++)
        {
            if (i > 0)
            {
                out.writeByte(',');
            }
            JsonBytes.writeLong(out, bytes[i] & 0xff);
        }
        out.writeByte(']');
    }

    /**
     * A token as vLLM shows it: the token decoded alone, quoted; U+FFFD when it is not whole UTF-8.
     */
    static void writeTokenString(final ByteBuf out, final TokenVocabulary vocabulary, final int tokenId)
    {
        final byte[] bytes = tokenBytes(vocabulary, tokenId);
        out.writeByte('"');
        JsonBytes.writeEscaped(out, bytes, 0, bytes.length);
        out.writeByte('"');
    }

    /**
     * @return the token's bytes when they are whole UTF-8, else those of U+FFFD.
     */
    static byte[] tokenBytes(final TokenVocabulary vocabulary, final int tokenId)
    {
        final byte[] bytes = vocabulary.bytes(tokenId);
        return Choice.utf8Boundary(bytes, bytes.length) == bytes.length && wellFormedStart(bytes) ? bytes :
            REPLACEMENT;
    }

    private static boolean wellFormedStart(final byte[] bytes)
    {
        return 0 == bytes.length || (bytes[0] & 0xC0) != 0x80;
    }

    /**
     * One prompt position of {@code prompt_logprobs}: {@code {"<id>":{"logprob":..,"rank":1,"decoded_token":..},..}}
     * with the prompt's token first and {@code top - 1} alternatives (at least the prompt's token).
     */
    static void writePromptPosition(final ByteBuf out, final TokenVocabulary vocabulary, final int tokenId,
        final int position, final int top)
    {
        out.writeByte('{');
        for (int rank = 1; rank <= Math.max(1, top); rank++)
        {
            if (rank > 1)
            {
                out.writeByte(',');
            }
            final int id = 1 == rank ? tokenId : alternative(vocabulary, tokenId, position, rank);
            out.writeByte('"');
            JsonBytes.writeLong(out, id);
            out.writeCharSequence("\":{\"logprob\":", US_ASCII);
            writeMicros(out, logprobMicros(tokenId, position, rank));
            out.writeCharSequence(",\"rank\":", US_ASCII);
            JsonBytes.writeLong(out, rank);
            out.writeCharSequence(",\"decoded_token\":", US_ASCII);
            writeTokenString(out, vocabulary, id);
            out.writeByte('}');
        }
        out.writeByte('}');
    }

    /**
     * {@code [null,{..},{..}]}: a prompt's {@code prompt_logprobs} (the first token has none).
     */
    static void writePromptLogprobs(final ByteBuf out, final TokenVocabulary vocabulary, final int[] prompt,
        final int top)
    {
        out.writeCharSequence("[null", US_ASCII);
        for (int i = 1; i < prompt.length; i++)
        {
            out.writeByte(',');
            writePromptPosition(out, vocabulary, prompt[i], i, top);
        }
        out.writeByte(']');
    }

    /**
     * The {@code logprobs} object of a choice's tokens kept since the last write ({@link Choice#recordTokenId}):
     * chat {@code {"content":[..]}}, completions {@code {"text_offset":[..],"token_logprobs":[..],"tokens":[..],
     * "top_logprobs":[..]}}; the tokens are then dropped.
     *
     * @param top alternatives per token.
     */
    static void writeChoiceLogprobs(final ByteBuf out, final TokenVocabulary vocabulary, final Choice choice,
        final boolean chat, final int top)
    {
        final int count = choice.tokenIdCount();
        final int first = choice.firstTokenPosition();
        final int alternatives = Math.min(top, vocabulary.randomTokenIds().length);
        if (chat)
        {
            out.writeCharSequence("{\"content\":[", US_ASCII);
            for (int i = 0; i < count; i++)
            {
                if (i > 0)
                {
                    out.writeByte(',');
                }
                writeChatEntry(out, vocabulary, choice.tokenId(i), first + i, alternatives);
            }
            out.writeCharSequence("]}", US_ASCII);
        }
        else
        {
            out.writeCharSequence("{\"text_offset\":[", US_ASCII);
            for (int i = 0; i < count; i++)
            {
                if (i > 0)
                {
                    out.writeByte(',');
                }
                JsonBytes.writeLong(out, choice.textOffset);
                choice.textOffset += codePoints(tokenBytes(vocabulary, choice.tokenId(i)));
            }
            out.writeCharSequence("],\"token_logprobs\":[", US_ASCII);
            for (int i = 0; i < count; i++)
            {
                if (i > 0)
                {
                    out.writeByte(',');
                }
                writeMicros(out, logprobMicros(choice.tokenId(i), first + i, 1));
            }
            out.writeCharSequence("],\"tokens\":[", US_ASCII);
            for (int i = 0; i < count; i++)
            {
                if (i > 0)
                {
                    out.writeByte(',');
                }
                writeTokenString(out, vocabulary, choice.tokenId(i));
            }
            out.writeCharSequence("],\"top_logprobs\":[", US_ASCII);
            for (int i = 0; i < count; i++)
            {
                if (i > 0)
                {
                    out.writeByte(',');
                }
                writeCompletionTop(out, vocabulary, choice.tokenId(i), first + i, Math.max(1, alternatives));
            }
            out.writeCharSequence("]}", US_ASCII);
        }
        choice.tokenIdsWritten();
    }

    /** {@code {"<token>":logprob,..}}: the emitted token and its alternatives, as completions list them. */
    private static void writeCompletionTop(final ByteBuf out, final TokenVocabulary vocabulary, final int tokenId,
        final int position, final int top)
    {
        out.writeByte('{');
        for (int rank = 1; rank <= top; rank++)
        {
            if (rank > 1)
            {
                out.writeByte(',');
            }
            writeTokenString(out, vocabulary, 1 == rank ? tokenId : alternative(vocabulary, tokenId, position, rank));
            out.writeByte(':');
            writeMicros(out, logprobMicros(tokenId, position, rank));
        }
        out.writeByte('}');
    }

    private static int codePoints(final byte[] utf8)
    {
        int count = 0;
        for (final byte b : utf8)
        {
            if ((b & 0xC0) != 0x80)
            {
                count++;
            }
        }
        return count;
    }

    /**
     * A decimal with six places from micro-units, e.g. {@code -0.123456}.
     */
    static void writeMicros(final ByteBuf out, final long micros)
    {
        long value = micros;
        if (value < 0)
        {
            out.writeByte('-');
            value = -value;
        }
        JsonBytes.writeLong(out, value / MICROS);
        out.writeByte('.');
        final long fraction = value % MICROS;
        for (long scale = MICROS / 10; scale > 0; scale /= 10)
        {
            out.writeByte('0' + (int)(fraction / scale % 10));
        }
    }
}
