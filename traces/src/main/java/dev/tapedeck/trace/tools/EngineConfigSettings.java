package dev.tapedeck.trace.tools;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import dev.tapedeck.trace.ConfigFingerprint;

/**
 * {@code inspect fingerprint --set key=value}: builds the canonical engine configuration of
 * {@link ConfigFingerprint} from separate settings. Each value is typed as the capture scripts type it and then
 * written as Python's {@code str()} writes it:
 * <ul>
 *   <li>{@code true} / {@code false} (any case): a boolean, written {@code true} / {@code false};</li>
 *   <li>an integer ({@code 16}, {@code -1}, {@code 016}): written without sign or leading zeros ({@code 16});</li>
 *   <li>a decimal number ({@code 0.90}, {@code 1e3}): a float, written as Python writes it ({@code 0.9},
 *       {@code 1000.0});</li>
 *   <li>anything else: the text as given ({@code Qwen/Qwen3-8B}, {@code none}).</li>
 * </ul>
 * Stateless; thread safe.
 */
public final class EngineConfigSettings
{
    private static final Pattern INTEGER = Pattern.compile("[-+]?\\d+");
    private static final Pattern DECIMAL = Pattern.compile("[-+]?(\\d+\\.\\d*|\\.\\d+|\\d+)([eE][-+]?\\d+)?");

    private EngineConfigSettings()
    {
    }

    /**
     * @param settings {@code key=value} strings.
     * @return the canonical engine configuration: {@code key=value} sorted by key, joined with {@code ;}.
     * @throws IllegalArgumentException naming the setting when one is malformed or a key repeats.
     */
    public static String canonical(final List<String> settings)
    {
        final Map<String, Object> typed = new LinkedHashMap<>();
        for (final String setting : settings)
        {
            final int equals = setting.indexOf('=');
            if (equals <= 0)
            {
                throw new IllegalArgumentException("setting '" + setting + "' is not key=value");
            }
            final String key = setting.substring(0, equals).trim();
            final String value = setting.substring(equals + 1).trim();
            if (key.isEmpty() || key.contains(";"))
            {
                throw new IllegalArgumentException("setting '" + setting + "' has a bad key");
            }
            if (value.contains(";"))
            {
                throw new IllegalArgumentException("setting '" + setting + "': a value must not contain ';'");
            }
            if (null != typed.put(key, typed(value)))
            {
                throw new IllegalArgumentException("setting '" + key + "' is given twice");
            }
        }
        return ConfigFingerprint.engineConfig(typed);
    }

    /**
     * @param value a setting's value as typed.
     * @return a Boolean, a BigInteger, a Double or the text.
     */
    static Object typed(final String value)
    {
        if ("true".equalsIgnoreCase(value) || "false".equalsIgnoreCase(value))
        {
            return Boolean.parseBoolean(value);
        }
        if (INTEGER.matcher(value).matches())
        {
            return new BigInteger(value.startsWith("+") ? value.substring(1) : value);
        }
        if (DECIMAL.matcher(value).matches())
        {
            return Double.parseDouble(value);
        }
        return value;
    }

    /**
     * @param engineConfig an engine configuration string.
     * @return true when its {@code key=value} pairs are sorted by key (as the canonical form is).
     */
    public static boolean isSorted(final String engineConfig)
    {
        String previous = null;
        for (final String pair : engineConfig.split(";", -1))
        {
            final int equals = pair.indexOf('=');
            final String key = equals < 0 ? pair : pair.substring(0, equals);
            if (null != previous && previous.compareTo(key) > 0)
            {
                return false;
            }
            previous = key;
        }
        return true;
    }
}
