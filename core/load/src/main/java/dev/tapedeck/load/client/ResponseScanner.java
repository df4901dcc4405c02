package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;


/**
 * Reads what a load test needs from OpenAI-style response bytes (copied once into a byte array) in one pass, without
 * building JSON trees: whether an SSE event or a body carries generated text, is an error or an abort, and the
 * {@code usage} token counts. Works on vLLM's, SGLang's and tapedeck's chunks
 * ({@code "text"} for completions, {@code "content"} / {@code "reasoning_content"} / {@code "reasoning"} for chat).
 * Stateless; thread safe.
 */
final class ResponseScanner
{
    /** Some choice carries non-empty text ({@code text}, {@code content}, {@code reasoning_content}, ...). */
    static final int TEXT = 1;
    /** An {@code "error"} key and no {@code "choices"} or {@code "object"}: an error event or body. */
    static final int ERROR = 2;
    /** A choice finished with {@code "abort"} (the server gave up on the request). */
    static final int ABORT = 4;
    /** A usage object with {@code completion_tokens} was read into the exchange. */
    static final int USAGE = 8;

    private static final int KEY_TEXT = 1;
    private static final int KEY_ERROR = 2;
    private static final int KEY_ENVELOPE = 3;
    private static final int KEY_FINISH_REASON = 4;
    private static final int KEY_USAGE = 5;
    private static final int KEY_PROMPT_TOKENS = 6;
    private static final int KEY_COMPLETION_TOKENS = 7;
    private static final byte[][] KEYS = {
        ascii("text"), ascii("content"), ascii("reasoning_content"), ascii("reasoning"), ascii("error"),
        ascii("choices"), ascii("object"), ascii("finish_reason"), ascii("usage"), ascii("prompt_tokens"),
        ascii("completion_tokens"),
    };
    private static final int[] KEY_KINDS = {
        KEY_TEXT, KEY_TEXT, KEY_TEXT, KEY_TEXT, KEY_ERROR,
        KEY_ENVELOPE, KEY_ENVELOPE, KEY_FINISH_REASON, KEY_USAGE, KEY_PROMPT_TOKENS,
        KEY_COMPLETION_TOKENS,
    };
    private static final int[][] KEYS_BY_LENGTH = keysByLength();
    private static final byte[] ABORT_VALUE = ascii("\"abort\"");
    private static final byte[] KV_TRANSFER_PARAMS = ascii("kv_transfer_params");

    private ResponseScanner()
    {
    }

    /**
     * Read an event's or a body's JSON once, key by key (at any depth; keys are strings followed by a colon, so
     * text inside values never counts), for what a load test needs of it.
     *
     * @param buf the JSON.
     * @param from first byte.
     * @param to one past the last byte.
     * @param usageInto where {@code usage.prompt_tokens} and {@code usage.completion_tokens} go when present and not
     *     null; null to leave usage unread.
     * @return the bits {@link #TEXT}, {@link #ERROR}, {@link #ABORT} and {@link #USAGE} that hold.
     */
    static int scan(final byte[] buf, final int from, final int to, final Exchange usageInto)
    {
        int found = 0;
        boolean error = false;
        boolean envelope = false;
        boolean inUsage = false;
        int i = from;
        while (i < to)
        {
            if ('"' != buf[i])
            {
                i++;
                continue;
            }
            final int close = stringEnd(buf, i, to);
            if (close < 0)
            {
                break;
            }
            final int colon = skipSpace(buf, close + 1, to);
            if (colon >= to || ':' != buf[colon])
            {
                i = close + 1; // a string value or an array element
                continue;
            }
            final int value = skipSpace(buf, colon + 1, to);
            switch (keyKind(buf, i + 1, close))
            {
                case KEY_TEXT -> found |= value + 1 < to && '"' == buf[value] && '"' != buf[value + 1] ? TEXT : 0;
                case KEY_ERROR -> error = true;
                case KEY_ENVELOPE -> envelope = true;
                case KEY_FINISH_REASON -> found |= startsWith(buf, value, to, ABORT_VALUE) ? ABORT : 0;
                case KEY_USAGE -> inUsage = true;
                case KEY_PROMPT_TOKENS ->
                {
                    final long tokens = inUsage && null != usageInto ? number(buf, value, to) : -1;
                    if (tokens >= 0)
                    {
                        usageInto.usagePromptTokens = tokens;
                    }
                }
                case KEY_COMPLETION_TOKENS ->
                {
                    final long tokens = inUsage && null != usageInto ? number(buf, value, to) : -1;
                    if (tokens >= 0)
                    {
                        usageInto.usageCompletionTokens = tokens;
                        found |= USAGE;
                    }
                }
                default ->
                {
                }
            }
            i = value; // the value is read on: a string value is skipped whole as a string that is not a key
        }
        return error && !envelope ? found | ERROR : found;
    }

    private static int keyKind(final byte[] buf, final int from, final int to)
    {
        final int length = to - from;
        if (length >= KEYS_BY_LENGTH.length)
        {
            return 0;
        }
        for (final int k : KEYS_BY_LENGTH[length])
        {
            if (startsWith(buf, from, to, KEYS[k]))
            {
                return KEY_KINDS[k];
            }
        }
        return 0;
    }

    /** The indexes into {@link #KEYS} of the keys of each length: most keys of a body match no length. */
    private static int[][] keysByLength()
    {
        int longest = 0;
        for (final byte[] key : KEYS)
        {
            longest = Math.max(longest, key.length);
        }
        final int[][] byLength = new int[longest + 1][];
        for (int length = 0; length <= longest; length++)
        {
            final int size = length;
            byLength[length] = java.util.stream.IntStream.range(0, KEYS.length)
                .filter(k -> KEYS[k].length == size).toArray();
        }
        return byLength;
    }

    private static boolean startsWith(final byte[] buf, final int from, final int to, final byte[] prefix)
    {
        if (to - from < prefix.length)
        {
            return false;
        }
        for (int j = 0; j < prefix.length; j++)
        {
            if (prefix[j] != buf[from + j])
            {
                return false;
            }
        }
        return true;
    }

    private static long number(final byte[] buf, final int from, final int to)
    {
        long value = -1;
        for (int i = from; i < to; i++)
        {
            final byte b = buf[i];
            if (b < '0' || b > '9')
            {
                break;
            }
            value = (value < 0 ? 0 : value * 10) + (b - '0');
        }
        return value;
    }

    /**
     * Find the top-level {@code "kv_transfer_params"} of a JSON object (a prefill server's answer) when it is an
     * object; the key nested deeper, inside strings, or with a {@code null} value does not count.
     *
     * @param buf the JSON.
     * @param from first byte (the opening brace).
     * @param to one past the last byte.
     * @return the value's bounds packed as {@code (first << 32) | onePastLast}, or -1 when there is none.
     */
    static long kvTransferParams(final byte[] buf, final int from, final int to)
    {
        int depth = 0;
        for (int i = from; i < to; i++)
        {
            final byte b = buf[i];
            if ('"' == b)
            {
                final int close = stringEnd(buf, i, to);
                if (close < 0)
                {
                    return -1;
                }
                if (1 == depth && close - i - 1 == KV_TRANSFER_PARAMS.length &&
                    startsWith(buf, i + 1, close, KV_TRANSFER_PARAMS))
                {
                    int j = skipSpace(buf, close + 1, to);
                    if (j < to && ':' == buf[j])
                    {
                        j = skipSpace(buf, j + 1, to);
                        final int end = j < to && '{' == buf[j] ? valueEnd(buf, j, to) : -1;
                        return end < 0 ? -1 : ((long)j << 32) | end;
                    }
                }
                i = close;
            }
            else if ('{' == b || '[' == b)
            {
                depth++;
            }
            else if ('}' == b || ']' == b)
            {
                depth--;
            }
        }
        return -1;
    }

    /**
     * @return one past the object or array starting at {@code start}, or -1 when it does not end before {@code to}.
     */
    private static int valueEnd(final byte[] buf, final int start, final int to)
    {
        int depth = 0;
        for (int i = start; i < to; i++)
        {
            final byte b = buf[i];
            if ('"' == b)
            {
                i = stringEnd(buf, i, to);
                if (i < 0)
                {
                    return -1;
                }
            }
            else if ('{' == b || '[' == b)
            {
                depth++;
            }
            else if (('}' == b || ']' == b) && 0 == --depth)
            {
                return i + 1;
            }
        }
        return -1;
    }

    /**
     * @return the index of the quote closing the string opened at {@code open}, or -1.
     */
    private static int stringEnd(final byte[] buf, final int open, final int to)
    {
        for (int i = open + 1; i < to; i++)
        {
            if ('\\' == buf[i])
            {
                i++;
            }
            else if ('"' == buf[i])
            {
                return i;
            }
        }
        return -1;
    }

    private static int skipSpace(final byte[] buf, final int from, final int to)
    {
        int i = from;
        while (i < to && (' ' == buf[i] || '\n' == buf[i] || '\r' == buf[i] || '\t' == buf[i]))
        {
            i++;
        }
        return i;
    }

    private static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
