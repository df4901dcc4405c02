package dev.tapedeck.metrics;

import java.math.BigDecimal;

/**
 * Formats numbers exactly as Python's prometheus_client does ({@code floatToGoString}): Python's shortest
 * {@code repr(float)} ({@code 1.0}, {@code 0.001}, {@code 1e-05}), except that values with seven or more integer digits
 * become Go-style exponents built from the integer digits ({@code 1e+06}, {@code 1.234567e+06}).
 */
public final class GoFloat
{
    private GoFloat()
    {
    }

    /**
     * @param value a sample value or a bucket bound.
     * @return its exposition text.
     */
    public static String format(final double value)
    {
        if (Double.isNaN(value))
        {
            return "NaN";
        }
        if (Double.isInfinite(value))
        {
            return value > 0 ? "+Inf" : "-Inf";
        }
        if (0.0 == value)
        {
            return 1.0 / value < 0 ? "-0.0" : "0.0";
        }
        final BigDecimal decimal = new BigDecimal(Double.toString(value)).stripTrailingZeros();
        final String digits = decimal.unscaledValue().abs().toString();
        final int exponent = digits.length() - 1 - decimal.scale();
        final String sign = value < 0 ? "-" : "";
        if (exponent < -4 || exponent >= 16)
        {
            final String mantissa = digits.length() > 1 ? digits.charAt(0) + "." + digits.substring(1) : digits;
            final int magnitude = Math.abs(exponent);
            return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") + magnitude;
        }
        if (exponent < 0)
        {
            return sign + "0." + "0".repeat(-exponent - 1) + digits;
        }
        final String integerDigits = digits.length() > exponent + 1 ?
            digits.substring(0, exponent + 1) : digits + "0".repeat(exponent + 1 - digits.length());
        if (value > 0 && exponent >= 6)
        {
            String mantissa = integerDigits.charAt(0) + "." + integerDigits.substring(1);
            int end = mantissa.length();
            while (end > 0 && (mantissa.charAt(end - 1) == '0' || mantissa.charAt(end - 1) == '.'))
            {
                end--;
            }
            mantissa = mantissa.substring(0, end);
            return mantissa + "e+0" + exponent;
        }
        final String fraction = digits.length() > exponent + 1 ? digits.substring(exponent + 1) : "0";
        return sign + integerDigits + "." + fraction;
    }
}
