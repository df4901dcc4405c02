package dev.tapedeck.http;

import java.util.Locale;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reads scalar body fields as vLLM's request models validate them: pydantic's lax mode, which coerces a numeric
 * string ({@code "8"}) or a boolean to an integer, a numeric string to a number, and {@code "true"}, {@code "no"},
 * {@code 1} and the like to a boolean, and refuses the rest with pydantic's error types ({@code int_parsing},
 * {@code int_from_float}, {@code float_parsing}, {@code bool_parsing}, ...). Also checks the sampling parameters
 * tapedeck accepts but does not use, with vLLM's ranges and messages. Stateless.
 */
final class LaxFields
{
    private static final Set<String> TRUE = Set.of("1", "on", "t", "true", "y", "yes");
    private static final Set<String> FALSE = Set.of("0", "off", "f", "false", "n", "no");
    private static final String[] PENALTIES = {"presence_penalty", "frequency_penalty"};

    private LaxFields()
    {
    }

    /**
     * @return the field as an int, or null when absent or null.
     * @throws ApiException 400 in pydantic's words when it is not an integer in lax mode (or not an int's size).
     */
    static Integer optionalInt(final JsonNode root, final String field)
    {
        final Long value = optionalLong(root, field);
        if (null != value && (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE))
        {
            throw invalid("int_type", field, "Input should be a valid integer");
        }
        return null == value ? null : value.intValue();
    }

    /**
     * @return the field as a long, or null when absent or null.
     * @throws ApiException 400 in pydantic's words when it is not an integer in lax mode (or not a long's size).
     */
    static Long optionalLong(final JsonNode root, final String field)
    {
        final JsonNode node = root.get(field);
        if (null == node || node.isNull())
        {
            return null;
        }
        if (node.isBoolean())
        {
            return node.asBoolean() ? 1L : 0L;
        }
        if (node.isTextual())
        {
            final String text = node.asText().strip();
            if (!text.matches("[+-]?[0-9]+"))
            {
                throw invalid("int_parsing", field, "Input should be a valid integer, unable to parse string as an " +
                    "integer");
            }
            try
            {
                return Long.parseLong(text);
            }
            catch (final NumberFormatException ex)
            {
                throw invalid("int_type", field, "Input should be a valid integer");
            }
        }
        if (!node.isNumber())
        {
            throw invalid("int_type", field, "Input should be a valid integer");
        }
        if (!node.isIntegralNumber() && node.asDouble() != Math.rint(node.asDouble()))
        {
            throw invalid("int_from_float", field, "Input should be a valid integer, got a number with a fractional " +
                "part");
        }
        if (node.isIntegralNumber() ? !node.canConvertToLong() : Math.abs(node.asDouble()) >= 0x1p63)
        {
            throw invalid("int_type", field, "Input should be a valid integer");
        }
        return node.isIntegralNumber() ? node.asLong() : (long)node.asDouble();
    }

    /**
     * @return the field as a number, or null when absent or null.
     * @throws ApiException 400 in pydantic's words when it is not a number in lax mode.
     */
    static Double optionalFloat(final JsonNode root, final String field)
    {
        final JsonNode node = root.get(field);
        if (null == node || node.isNull())
        {
            return null;
        }
        if (node.isBoolean())
        {
            return node.asBoolean() ? 1.0 : 0.0;
        }
        if (node.isTextual())
        {
            try
            {
                final String text = node.asText().strip();
                if (text.isEmpty() || !text.matches("[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?|" +
                    "[+-]?(inf|infinity|nan)"))
                {
                    throw new NumberFormatException(text);
                }
                return Double.parseDouble(text.replace("infinity", "Infinity").replace("inf", "Infinity")
                    .replace("nan", "NaN"));
            }
            catch (final NumberFormatException ex)
            {
                throw invalid("float_parsing", field, "Input should be a valid number, unable to parse string as a " +
                    "number");
            }
        }
        if (!node.isNumber())
        {
            throw invalid("float_type", field, "Input should be a valid number");
        }
        return node.asDouble();
    }

    /**
     * @return the field as a boolean, {@code fallback} when absent or null.
     * @throws ApiException 400 in pydantic's words when it is not a boolean in lax mode.
     */
    static boolean optionalBool(final JsonNode root, final String field, final boolean fallback)
    {
        final JsonNode node = root.get(field);
        if (null == node || node.isNull())
        {
            return fallback;
        }
        if (node.isBoolean())
        {
            return node.asBoolean();
        }
        if (node.isNumber() || node.isTextual())
        {
            final String text = node.isTextual() ? node.asText().strip().toLowerCase(Locale.ROOT) :
                node.isIntegralNumber() || node.asDouble() != Math.rint(node.asDouble()) ? node.asText() :
                Long.toString((long)node.asDouble());
            if (TRUE.contains(text))
            {
                return true;
            }
            if (FALSE.contains(text))
            {
                return false;
            }
            throw invalid("bool_parsing", field, "Input should be a valid boolean, unable to interpret input");
        }
        throw invalid("bool_type", field, "Input should be a valid boolean");
    }

    /**
     * Check the sampling parameters tapedeck accepts without using them: their types (lax) and vLLM's ranges.
     *
     * @throws ApiException 400 as vLLM answers.
     */
    static void checkSampling(final JsonNode root)
    {
        // each message is built only when its check fails: a request that passes them all builds no string
        final Double temperature = optionalFloat(root, "temperature");
        check(null == temperature || temperature >= 0, "temperature", "must be non-negative", temperature);
        final Double topP = optionalFloat(root, "top_p");
        check(null == topP || (topP > 0 && topP <= 1), "top_p", "must be in (0, 1]", topP);
        final Integer topK = optionalInt(root, "top_k");
        check(null == topK || topK >= -1, "top_k", "must be 0 (disable), or at least 1", topK);
        final Double minP = optionalFloat(root, "min_p");
        check(null == minP || (minP >= 0 && minP <= 1), "min_p", "must be in [0, 1]", minP);
        for (final String penalty : PENALTIES)
        {
            final Double value = optionalFloat(root, penalty);
            check(null == value || (value >= -2 && value <= 2), penalty, "must be in [-2, 2]", value);
        }
        final Double repetition = optionalFloat(root, "repetition_penalty");
        check(null == repetition || repetition > 0, "repetition_penalty", "must be greater than zero", repetition);
    }

    /** A 400 naming {@code param}: "{@code param rule}, got {@code value}.", its text built only on failure. */
    private static void check(final boolean ok, final String param, final String rule, final Object value)
    {
        if (!ok)
        {
            throw ApiException.badRequest(param + " " + rule + ", got " + value + ".", param);
        }
    }

    private static ApiException invalid(final String type, final String field, final String message)
    {
        return ApiException.validation(RequestParser.typeError(type, field, message), "body." + field);
    }
}
