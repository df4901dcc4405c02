package dev.tapedeck.fault;

import java.util.Locale;

import dev.tapedeck.latency.Durations;

/**
 * One fault applied to one request, written {@code KIND[:PARAM][@TOKENS]}:
 * <ul>
 *     <li>llm-d-inference-sim's canned errors, answered at once with its status and body: {@code rate_limit} (429),
 *     {@code invalid_api_key} (401), {@code context_length} (400), {@code server_error} (503),
 *     {@code invalid_request} (400), {@code model_not_found} (404);</li>
 *     <li>{@code status:CODE}: an error with that HTTP status (400 to 599), as llm-d's {@code X-Return-Error};</li>
 *     <li>{@code reset@N}: the connection is reset (TCP RST) after N tokens were written (default 1);</li>
 *     <li>{@code stall:DURATION@N}: the stream stops for that long after N tokens (default 1), then goes on with the
 *     tokens generated meanwhile;</li>
 *     <li>{@code first-byte:DURATION}: nothing, not even the status line, is written before that long after
 *     arrival;</li>
 *     <li>{@code abort@N}: the engine aborts the request after N tokens (finish reason {@code abort}).</li>
 * </ul>
 * Immutable.
 *
 * @param kind what happens.
 * @param status the HTTP status of an error fault, 0 otherwise.
 * @param durationNs the stall or first-byte delay, in nanoseconds, 0 otherwise.
 * @param afterTokens for stream faults, the tokens written before the fault strikes.
 */
public record RequestFault(Kind kind, int status, long durationNs, int afterTokens)
{
    /** What a request fault does. */
    public enum Kind
    {
        /** 429, llm-d's rate-limit body. */
        RATE_LIMIT("rate_limit", 429),
        /** 401, llm-d's invalid-key body. */
        INVALID_API_KEY("invalid_api_key", 401),
        /** 400, llm-d's context-length body. */
        CONTEXT_LENGTH("context_length", 400),
        /** 503, llm-d's overloaded body. */
        SERVER_ERROR("server_error", 503),
        /** 400, llm-d's missing-parameter body. */
        INVALID_REQUEST("invalid_request", 400),
        /** 404, llm-d's unknown-model body. */
        MODEL_NOT_FOUND("model_not_found", 404),
        /** An error with a given status. */
        STATUS("status", 0),
        /** The connection is reset mid-stream. */
        RESET("reset", 0),
        /** The stream pauses. */
        STALL("stall", 0),
        /** The response starts late. */
        FIRST_BYTE("first-byte", 0),
        /** The engine aborts the request. */
        ABORT("abort", 0);

        private final String label;
        private final int cannedStatus;

        Kind(final String label, final int cannedStatus)
        {
            this.label = label;
            this.cannedStatus = cannedStatus;
        }

        /**
         * @return the name in the fault grammar and in the {@code fault} label of the metric.
         */
        public String label()
        {
            return label;
        }

        /**
         * @return true for faults answered at once with an error instead of served.
         */
        public boolean isError()
        {
            return cannedStatus > 0 || this == STATUS;
        }

        static Kind of(final String label)
        {
            for (final Kind kind : values())
            {
                if (kind.label.equals(label))
                {
                    return kind;
                }
            }
            return null;
        }
    }

    /** The six llm-d-inference-sim failure types, its {@code --failure-types} default. */
    public static final String LLMD_TYPES = "rate_limit,invalid_api_key,context_length,server_error," +
        "invalid_request,model_not_found";

    /**
     * Validates.
     */
    public RequestFault
    {
        if (Kind.STATUS == kind && (status < 400 || status > 599))
        {
            throw new IllegalArgumentException("status:" + status + ": an error status is 400 to 599");
        }
        if (durationNs < 0 || afterTokens < 0)
        {
            throw new IllegalArgumentException("negative duration or token count");
        }
    }

    /**
     * @return the HTTP status of an error fault, 0 for the others.
     */
    public int httpStatus()
    {
        return Kind.STATUS == kind ? status : kind.cannedStatus;
    }

    /**
     * Parse one fault.
     *
     * @param text {@code KIND[:PARAM][@TOKENS]}, e.g. {@code rate_limit}, {@code status:503}, {@code stall:2s@5}.
     * @return the fault.
     * @throws IllegalArgumentException naming the text and what is wrong.
     */
    public static RequestFault parse(final String text)
    {
        final String spec = text.trim().toLowerCase(Locale.ROOT);
        final int at = spec.indexOf('@');
        final String head = at < 0 ? spec : spec.substring(0, at);
        final int colon = head.indexOf(':');
        final Kind kind = Kind.of(colon < 0 ? head : head.substring(0, colon));
        if (null == kind)
        {
            throw new IllegalArgumentException("unknown fault '" + text.trim() + "' (expected one of " +
                LLMD_TYPES.replace(",", ", ") + ", status:CODE, reset@N, stall:DURATION@N, first-byte:DURATION, " +
                "abort@N)");
        }
        final String param = colon < 0 ? null : head.substring(colon + 1);
        final boolean takesTokens = Kind.RESET == kind || Kind.STALL == kind || Kind.ABORT == kind;
        if (at >= 0 && !takesTokens)
        {
            throw new IllegalArgumentException("fault '" + text.trim() + "': only reset, stall and abort take @N");
        }
        final int afterTokens = at < 0 ? (takesTokens ? 1 : 0) : tokens(spec.substring(at + 1), text);
        switch (kind)
        {
            case STATUS:
                return new RequestFault(kind, status(param, text), 0, 0);
            case STALL:
            case FIRST_BYTE:
                return new RequestFault(kind, 0, duration(param, text), afterTokens);
            default:
                if (null != param)
                {
                    throw new IllegalArgumentException("fault '" + text.trim() + "' takes no ':' parameter");
                }
                return new RequestFault(kind, 0, 0, afterTokens);
        }
    }

    private static int status(final String param, final String text)
    {
        try
        {
            return Integer.parseInt(null == param ? "" : param);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("fault '" + text.trim() + "': status:CODE needs an HTTP status");
        }
    }

    private static long duration(final String param, final String text)
    {
        if (null == param || param.isEmpty())
        {
            throw new IllegalArgumentException("fault '" + text.trim() + "' needs a duration, e.g. stall:2s");
        }
        try
        {
            return Durations.parseNs(param);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("fault '" + text.trim() + "': " + ex.getMessage());
        }
    }

    private static int tokens(final String value, final String text)
    {
        try
        {
            final int n = Integer.parseInt(value);
            if (n >= 1)
            {
                return n;
            }
        }
        catch (final NumberFormatException ex)
        {
            // reported below
        }
        throw new IllegalArgumentException("fault '" + text.trim() + "': @N needs a token count >= 1");
    }

    @Override
    public String toString()
    {
        switch (kind)
        {
            case STATUS:
                return "status:" + status;
            case STALL:
                return "stall:" + Durations.format(durationNs) + "@" + afterTokens;
            case FIRST_BYTE:
                return "first-byte:" + Durations.format(durationNs);
            case RESET:
            case ABORT:
                return kind.label + "@" + afterTokens;
            default:
                return kind.label;
        }
    }
}
