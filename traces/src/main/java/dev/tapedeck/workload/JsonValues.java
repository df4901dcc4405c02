package dev.tapedeck.workload;

import java.math.BigInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.tapedeck.trace.TraceFormatException;

/**
 * Typed reads of JSON values for the loaders, each failing with a {@link TraceFormatException} that names where the
 * value sits ({@code file:line: field: what is wrong}). Stateless apart from the shared Jackson mapper; thread safe.
 */
final class JsonValues
{
    static final ObjectMapper MAPPER = new ObjectMapper();
    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

    private JsonValues()
    {
    }

    /**
     * @return the value of {@code field}, or null when it is absent or JSON null.
     */
    static JsonNode optional(final JsonNode object, final String field)
    {
        final JsonNode value = object.get(field);
        return null == value || value.isNull() ? null : value;
    }

    /**
     * @return the value of {@code field}; absent or null is an error.
     */
    static JsonNode required(final JsonNode object, final String field, final String where)
    {
        final JsonNode value = optional(object, field);
        if (null == value)
        {
            throw error(where, field + " is missing");
        }
        return value;
    }

    /**
     * A non-negative integer (a float with no fraction, such as {@code 12.0}, is accepted).
     */
    static long natural(final JsonNode value, final String where, final String field)
    {
        if (value.isIntegralNumber() && value.canConvertToLong() && value.longValue() >= 0)
        {
            return value.longValue();
        }
        if (value.isFloatingPointNumber() && value.doubleValue() >= 0 &&
            value.doubleValue() == Math.rint(value.doubleValue()) && value.doubleValue() < 0x1p63)
        {
            return (long)value.doubleValue();
        }
        throw error(where, field + " must be a non-negative integer, got " + describe(value));
    }

    /**
     * A non-negative integer that fits an int.
     */
    static int count(final JsonNode value, final String where, final String field)
    {
        final long count = natural(value, where, field);
        if (count > Integer.MAX_VALUE)
        {
            throw error(where, field + " is too large: " + count);
        }
        return (int)count;
    }

    /**
     * A finite number.
     */
    static double number(final JsonNode value, final String where, final String field)
    {
        if (!value.isNumber() || !Double.isFinite(value.doubleValue()))
        {
            throw error(where, field + " must be a finite number, got " + describe(value));
        }
        return value.doubleValue();
    }

    /**
     * A finite number of at least 0.
     */
    static double nonNegative(final JsonNode value, final String where, final String field)
    {
        final double number = number(value, where, field);
        if (number < 0)
        {
            throw error(where, field + " must not be negative, got " + value);
        }
        return number;
    }

    /**
     * An array of unsigned 64-bit integers (values above {@link Long#MAX_VALUE} wrap to negative longs).
     */
    static long[] unsignedLongs(final JsonNode value, final String where, final String field)
    {
        if (!value.isArray())
        {
            throw error(where, field + " must be an array of non-negative integers, got " + describe(value));
        }
        final long[] values = new long[value.size()];
        for (int i = 0; i < values.length; i++)
        {
            final JsonNode element = value.get(i);
            if (element.isIntegralNumber() && element.canConvertToLong() && element.longValue() >= 0)
            {
                values[i] = element.longValue();
                continue;
            }
            if (element.isBigInteger() && element.bigIntegerValue().signum() >= 0 &&
                element.bigIntegerValue().compareTo(TWO_TO_64) < 0)
            {
                values[i] = element.bigIntegerValue().longValue();
                continue;
            }
            throw error(where, field + "[" + i + "] must be an unsigned 64-bit integer, got " + describe(element));
        }
        return values;
    }

    /**
     * A string.
     */
    static String string(final JsonNode value, final String where, final String field)
    {
        if (!value.isTextual())
        {
            throw error(where, field + " must be a string, got " + describe(value));
        }
        return value.textValue();
    }

    static TraceFormatException error(final String where, final String message)
    {
        return new TraceFormatException(where + ": " + message);
    }

    static String describe(final JsonNode value)
    {
        if (value.isObject())
        {
            return "an object";
        }
        if (value.isArray())
        {
            return "an array";
        }
        if (value.isTextual())
        {
            final String text = value.textValue();
            return "\"" + (text.length() > 40 ? text.substring(0, 40) + "..." : text) + "\"";
        }
        return value.toString();
    }
}
