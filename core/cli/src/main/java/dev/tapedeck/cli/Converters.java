package dev.tapedeck.cli;

import java.util.Locale;

import picocli.CommandLine;

import dev.tapedeck.latency.Durations;

/**
 * picocli converters for durations (to nanoseconds) and byte sizes.
 */
final class Converters
{
    private Converters()
    {
    }

    /** A URL; one that does not parse (no scheme: {@code 127.0.0.1:8000}) is refused in words a user can act on. */
    static final class Url implements CommandLine.ITypeConverter<java.net.URI>
    {
        @Override
        public java.net.URI convert(final String value)
        {
            try
            {
                return new java.net.URI(value);
            }
            catch (final java.net.URISyntaxException ex)
            {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a URL; give its scheme, e.g. " +
                    "http://" + value);
            }
        }
    }

    /** {@code 100ms}, {@code 1.5s}, {@code 250us}, or a number of milliseconds, to nanoseconds. */
    static final class DurationNs implements CommandLine.ITypeConverter<Long>
    {
        @Override
        public Long convert(final String value)
        {
            try
            {
                return Durations.parseNs(value);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException(ex.getMessage());
            }
        }
    }

    /**
     * A duration that must carry its unit ({@code 20s}, {@code 500ms}): for flags whose bare numbers used to mean
     * seconds, so that an old {@code --warmup 20} is refused rather than read as 20 ms.
     */
    static final class DurationNsWithUnit implements CommandLine.ITypeConverter<Long>
    {
        @Override
        public Long convert(final String value)
        {
            if (value.trim().matches("[0-9.]+") && Double.parseDouble(value.trim()) != 0)
            {
                throw new CommandLine.TypeConversionException("'" + value + "' has no unit: give one, e.g. " +
                    value.trim() + "s or " + value.trim() + "ms");
            }
            return new DurationNs().convert(value);
        }
    }

    /** {@code 4m}, {@code 512k}, {@code 1g}, {@code 4MiB} or a number of bytes. */
    static final class ByteSize implements CommandLine.ITypeConverter<Integer>
    {
        @Override
        public Integer convert(final String value)
        {
            final String text = value.trim().toLowerCase(Locale.ROOT).replace("ib", "").replace("b", "");
            long multiplier = 1;
            String digits = text;
            if (text.endsWith("k") || text.endsWith("m") || text.endsWith("g"))
            {
                final char unit = text.charAt(text.length() - 1);
                multiplier = 'k' == unit ? 1L << 10 : 'm' == unit ? 1L << 20 : 1L << 30;
                digits = text.substring(0, text.length() - 1);
            }
            try
            {
                final long bytes = (long)(Double.parseDouble(digits) * multiplier);
                if (bytes < 0 || bytes > Integer.MAX_VALUE)
                {
                    throw new NumberFormatException();
                }
                return (int)bytes;
            }
            catch (final NumberFormatException ex)
            {
                throw new CommandLine.TypeConversionException(
                    "invalid size '" + value + "': use e.g. 4m, 512k, 1g or a number of bytes");
            }
        }
    }
}
