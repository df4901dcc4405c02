package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;


/**
 * Reads what a load test needs from OpenAI-style response bytes (copied once into a byte array) without building
 * JSON trees: whether an SSE event
 * carries generated text, and the {@code usage} token counts. Works on vLLM's, SGLang's and tapedeck's chunks
 * ({@code "text"} for completions, {@code "content"} / {@code "reasoning_content"} / {@code "reasoning"} for chat).
 * Stateless; thread safe.
 */
final class ResponseScanner
{
    private static final byte[][] TEXT_FIELDS = {
        ascii("\"text\":\""), ascii("\"content\":\""), ascii("\"reasoning_content\":\""), ascii("\"reasoning\":\""),
        ascii("\"text\": \""), ascii("\"content\": \""), ascii("\"reasoning_content\": \""), ascii("\"reasoning\": \""),
    };
    private static final byte[] USAGE = ascii("\"usage\":");
    private static final byte[] PROMPT_TOKENS = ascii("\"prompt_tokens\":");
    private static final byte[] COMPLETION_TOKENS = ascii("\"completion_tokens\":");
    private static final byte[] ERROR = ascii("\"error\":");
    private static final byte[] CHOICES = ascii("\"choices\":");
    private static final byte[] OBJECT = ascii("\"object\":");
    private static final byte[] ABORT = ascii("\"finish_reason\":\"abort\"");
    private static final byte[] KV_TRANSFER_PARAMS = ascii("kv_transfer_params");

    private ResponseScanner()
    {
    }

    /**
     * @param buf the event's JSON.
     * @param from first byte.
     * @param to one past the last byte.
     * @return true when some choice carries non-empty text.
     */
    static boolean carriesText(final byte[] buf, final int from, final int to)
    {
        for (final byte[] field : TEXT_FIELDS)
        {
            int at = indexOf(buf, from, to, field);
            while (at >= 0)
            {
                final int value = at + field.length;
                if (value < to && '"' != buf[value])
                {
                    return true;
                }
                at = indexOf(buf, value, to, field);
            }
        }
        return false;
    }

    /**
     * @return true when the JSON has a top-level-looking {@code "error":} and no {@code "choices"} or
     *     {@code "object"} (an error event or body).
     */
    static boolean isError(final byte[] buf, final int from, final int to)
    {
        return indexOf(buf, from, to, ERROR) >= 0 && indexOf(buf, from, to, CHOICES) < 0 &&
            indexOf(buf, from, to, OBJECT) < 0;
    }

    /**
     * @return true when a choice finished with {@code "abort"} (the server gave up on the request).
     */
    static boolean isAbort(final byte[] buf, final int from, final int to)
    {
        return indexOf(buf, from, to, ABORT) >= 0;
    }

    /**
     * Read {@code usage.prompt_tokens} and {@code usage.completion_tokens} into the exchange when present and not
     * null.
     *
     * @return true when the JSON carried a usage object with {@code completion_tokens}.
     */
    static boolean readUsage(final byte[] buf, final int from, final int to, final Exchange exchange)
    {
        final int usage = indexOf(buf, from, to, USAGE);
        if (usage < 0)
        {
            return false;
        }
        final long prompt = numberAfter(buf, usage, to, PROMPT_TOKENS);
        final long completion = numberAfter(buf, usage, to, COMPLETION_TOKENS);
        if (prompt >= 0)
        {
            exchange.usagePromptTokens = prompt;
        }
        if (completion >= 0)
        {
            exchange.usageCompletionTokens = completion;
        }
        return completion >= 0;
    }

    private static long numberAfter(final byte[] buf, final int from, final int to, final byte[] field)
    {
        final int at = indexOf(buf, from, to, field);
        if (at < 0)
        {
            return -1;
        }
        int i = at + field.length;
        while (i < to && ' ' == buf[i])
        {
            i++;
        }
        long value = -1;
        while (i < to)
        {
            final byte b = buf[i++];
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
                    indexOf(buf, i + 1, close, KV_TRANSFER_PARAMS) == i + 1)
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

    static int indexOf(final byte[] buf, final int from, final int to, final byte[] needle)
    {
        final byte first = needle[0];
        final int last = to - needle.length;
        for (int i = from; i <= last; i++)
        {
            if (first == buf[i])
            {
                boolean match = true;
                for (int j = 1; j < needle.length && match; j++)
                {
                    match = needle[j] == buf[i + j];
                }
                if (match)
                {
                    return i;
                }
            }
        }
        return -1;
    }

    private static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
