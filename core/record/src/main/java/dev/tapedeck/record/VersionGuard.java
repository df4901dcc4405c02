package dev.tapedeck.record;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.tapedeck.protocol.enginecore.VllmLine;

/**
 * The {@code --vllm-version} guard and the choice of wire line. When the capture is tagged with a vLLM version
 * ({@code v0.23.0}, {@code 0.23}), the engine must report the same major.minor in its registration payload, or the
 * capture is refused: a trace stamped with the wrong version would later replay against the wrong fingerprint. When
 * either version cannot be read, or the engine reports none (vLLM 0.22 and older send no version), the tap warns and
 * goes on. Stateless; thread safe.
 */
final class VersionGuard
{
    private static final System.Logger LOG = System.getLogger(VersionGuard.class.getName());
    private static final Pattern MAJOR_MINOR = Pattern.compile("^\\s*[vV]?(\\d+)\\.(\\d+)");

    private VersionGuard()
    {
    }

    /**
     * @param tag {@code --vllm-version}, or null.
     * @param reported the engine's {@code vllm_version}, or null.
     * @throws IllegalArgumentException when both are readable and their major.minor differ.
     */
    static void check(final String tag, final String reported)
    {
        if (null == tag)
        {
            return;
        }
        final String tagged = majorMinor(tag);
        final String engine = null == reported ? null : majorMinor(reported);
        if (null == tagged)
        {
            LOG.log(System.Logger.Level.WARNING, "--vllm-version {0} is not a version such as v0.23.0; the engine''s " +
                "version is not checked", tag);
        }
        else if (null == reported)
        {
            LOG.log(System.Logger.Level.WARNING, "the engine reports no vLLM version (lines before 0.23 do not); " +
                "--vllm-version {0} is not checked", tag);
        }
        else if (null == engine)
        {
            LOG.log(System.Logger.Level.WARNING, "the engine reports vLLM version ''{0}'', which is not x.y...; " +
                "--vllm-version {1} is not checked", reported, tag);
        }
        else if (!tagged.equals(engine))
        {
            throw new IllegalArgumentException("--vllm-version " + tag + " (" + tagged + ") does not match the " +
                "engine, which reports vLLM " + reported + " (" + engine + "): refusing to record a trace stamped " +
                "with the wrong version; pass the engine's version or leave --vllm-version out");
        }
    }

    /**
     * @param version a version or tag.
     * @return {@code major.minor}, or null when it does not start with one.
     */
    static String majorMinor(final String version)
    {
        final Matcher m = MAJOR_MINOR.matcher(version);
        return m.find() ? Integer.parseInt(m.group(1)) + "." + Integer.parseInt(m.group(2)) : null;
    }

    /**
     * @param tag {@code --vllm-version}, or null.
     * @param reported the engine's version, or null.
     * @return the wire line the engine speaks: the tag's, else the reported version's, else the newest line.
     */
    static VllmLine line(final String tag, final String reported)
    {
        for (final String version : new String[] {tag, reported})
        {
            if (null != version)
            {
                try
                {
                    return VllmLine.of(version);
                }
                catch (final IllegalArgumentException ex)
                {
                    // try the next source
                }
            }
        }
        LOG.log(System.Logger.Level.WARNING, "the engine''s vLLM line is unknown; outputs are read as vLLM {0} " +
            "writes them (pass --vllm-version)", VllmLine.NEWEST.label());
        return VllmLine.NEWEST;
    }
}
