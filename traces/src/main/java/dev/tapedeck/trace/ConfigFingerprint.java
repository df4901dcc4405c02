package dev.tapedeck.trace;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code config_hash} of a trace's meta line, scheme v3 (as vllm-vcr computes it): the lowercase hex SHA-256 of
 * exactly four newline-terminated lines
 * <pre>
 *   config-fingerprint-v3
 *   gpu=&lt;gpu&gt;
 *   vllm_tag=&lt;vLLM release tag or reported version&gt;
 *   engine_config=&lt;canonical engine configuration&gt;
 * </pre>
 * The canonical engine configuration is {@code key=value} pairs sorted by key and joined with {@code ;}; booleans are
 * {@code true}/{@code false} and numbers are written as Python's {@code str()} writes them ({@code 0.90} is
 * {@code 0.9}). Two captures replay against each other only when their hashes match. Stateless; thread safe.
 */
public final class ConfigFingerprint
{
    /** The first line of the hashed text. */
    public static final String SCHEME = "config-fingerprint-v3";

    private ConfigFingerprint()
    {
    }

    /**
     * @param gpu GPU name ("" when unknown).
     * @param vllmTag vLLM release tag (e.g. {@code v0.27.1}) or the engine-reported version.
     * @param engineConfig canonical engine configuration ({@link #engineConfig(Map)}).
     * @return 64 lowercase hex characters.
     */
    public static String hash(final String gpu, final String vllmTag, final String engineConfig)
    {
        final String text = canonicalText(gpu, vllmTag, engineConfig);
        try
        {
            final byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }

    /**
     * @param gpu GPU name.
     * @param vllmTag vLLM tag.
     * @param engineConfig canonical engine configuration.
     * @return the exact text that is hashed.
     */
    public static String canonicalText(final String gpu, final String vllmTag, final String engineConfig)
    {
        return SCHEME + "\ngpu=" + nullToEmpty(gpu) + "\nvllm_tag=" + nullToEmpty(vllmTag) + "\nengine_config=" +
            nullToEmpty(engineConfig) + "\n";
    }

    /**
     * @param settings engine settings (strings, booleans and numbers).
     * @return the canonical {@code key=value;...} form, sorted by key.
     */
    public static String engineConfig(final Map<String, ?> settings)
    {
        final StringBuilder text = new StringBuilder();
        for (final Map.Entry<String, ?> entry : new TreeMap<>(settings).entrySet())
        {
            if (text.length() > 0)
            {
                text.append(';');
            }
            text.append(entry.getKey()).append('=').append(pythonStr(entry.getValue()));
        }
        return text.toString();
    }

    /**
     * @param value a setting.
     * @return how Python's {@code str()} writes it (booleans lower case).
     */
    static String pythonStr(final Object value)
    {
        if (value instanceof Boolean b)
        {
            return b ? "true" : "false";
        }
        if (value instanceof Double || value instanceof Float)
        {
            return pythonFloat(((Number)value).doubleValue());
        }
        return String.valueOf(value);
    }

    private static String pythonFloat(final double value)
    {
        if (Double.isNaN(value))
        {
            return "nan";
        }
        if (Double.isInfinite(value))
        {
            return value > 0 ? "inf" : "-inf";
        }
        final BigDecimal shortest = new BigDecimal(Double.toString(value)).stripTrailingZeros();
        final double magnitude = Math.abs(value);
        if (0 != value && (magnitude >= 1e16 || magnitude < 1e-4))
        {
            // Python switches to exponent notation here: 1e+16, 1e-05, 1.5e-07
            final String digits = shortest.unscaledValue().abs().toString();
            final int exponent = digits.length() - 1 - shortest.scale();
            final String mantissa = digits.length() > 1 ? digits.charAt(0) + "." + digits.substring(1) :
                digits;
            return (value < 0 ? "-" : "") + mantissa + "e" + (exponent < 0 ? "-" : "+") +
                (Math.abs(exponent) < 10 ? "0" : "") + Math.abs(exponent);
        }
        final String plain = shortest.toPlainString();
        return plain.contains(".") ? plain : plain + ".0";
    }

    private static String nullToEmpty(final String value)
    {
        return null == value ? "" : value;
    }
}
