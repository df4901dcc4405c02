package dev.tapedeck.metrics;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The renamed metrics an older vLLM line still exports under their old names, by vLLM's deprecation policy
 * (deprecated in X.Y, hidden in X.Y+1 unless {@code --show-hidden-metrics-for-version=X.Y}, removed in X.Y+2):
 * <ul>
 *   <li>{@code vllm:gpu_cache_usage_perc}, {@code vllm:gpu_prefix_cache_queries}, {@code vllm:gpu_prefix_cache_hits}
 *       (now {@code kv_cache_usage_perc}, {@code prefix_cache_*}; deprecated in 0.9.2): exported up to 0.10, in 0.11
 *       with {@code =0.10}, gone from 0.12;</li>
 *   <li>{@code vllm:time_per_output_token_seconds} (now {@code inter_token_latency_seconds}; its help says DEPRECATED
 *       from 0.10.2, deprecated in 0.11): exported up to 0.11, in 0.12 with {@code =0.11}, gone from 0.13.</li>
 * </ul>
 * Each reports the same values as its new name. Immutable.
 *
 * @param gpuCacheNames export the {@code gpu_*} cache names.
 * @param timePerOutputToken export {@code time_per_output_token_seconds}.
 * @param timePerOutputTokenDeprecated its help text carries the DEPRECATED note.
 */
public record DeprecatedMetrics(boolean gpuCacheNames, boolean timePerOutputToken,
    boolean timePerOutputTokenDeprecated)
{
    /** The newest lines: none. */
    public static final DeprecatedMetrics NONE = new DeprecatedMetrics(false, false, false);

    private static final Pattern VERSION = Pattern.compile("v?(\\d+)\\.(\\d+)(?:\\.(\\d+))?.*");

    /**
     * @param vllmVersion the vLLM version imitated ({@code --vllm-version}, e.g. {@code 0.10.1}).
     * @param showHiddenFor {@code --show-hidden-metrics-for-version}, or null.
     * @return what that line exports.
     * @throws IllegalArgumentException when a version cannot be read.
     */
    public static DeprecatedMetrics of(final String vllmVersion, final String showHiddenFor)
    {
        final Matcher version = VERSION.matcher(vllmVersion.trim());
        if (!version.matches())
        {
            throw new IllegalArgumentException("--vllm-version: cannot read '" + vllmVersion +
                "' as MAJOR.MINOR[.PATCH]");
        }
        final int major = Integer.parseInt(version.group(1));
        final int minor = Integer.parseInt(version.group(2));
        final int patch = null == version.group(3) ? 0 : Integer.parseInt(version.group(3));
        if (null != showHiddenFor && !VERSION.matcher(showHiddenFor.trim()).matches())
        {
            throw new IllegalArgumentException("--show-hidden-metrics-for-version: cannot read '" + showHiddenFor +
                "' as MAJOR.MINOR");
        }
        // vLLM honours the flag only for the minor version just before its own
        final String previous = major + "." + (minor - 1);
        final boolean showPrevious = null != showHiddenFor && showHiddenFor.trim().replaceFirst("^v", "")
            .replaceFirst("^(\\d+\\.\\d+).*", "$1").equals(previous);
        if (major > 0)
        {
            return NONE;
        }
        return new DeprecatedMetrics(minor <= 10 || (11 == minor && showPrevious),
            minor <= 11 || (12 == minor && showPrevious), minor > 10 || (10 == minor && patch >= 2));
    }
}
