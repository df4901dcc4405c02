package dev.tapedeck.protocol.enginecore;

import java.util.Locale;

/**
 * A vLLM release line, as far as the engine-core wire differs (docs/engine-core.md): what READY must carry, where
 * cached-token counts go in an {@code EngineCoreOutput}, which finish reasons the frontend knows, and how KV events
 * are encoded. Requests are decoded by shape for every line, so one decoder serves all. Immutable.
 */
public enum VllmLine
{
    /** 0.10.0-0.10.1. */
    V0_10("0.10", "0.10.1", OutputTail.CACHED_AT_9, 2, true, false),
    /** 0.10.2-0.12. */
    V0_11("0.11", "0.11.0", OutputTail.CACHED_AT_10, 2, true, false),
    /** 0.13-0.18. */
    V0_15("0.15", "0.15.0", OutputTail.CACHED_AT_11, 3, true, false),
    /** 0.19-0.22. */
    V0_19("0.19", "0.19.0", OutputTail.PREFILL_STATS_AT_11, 3, false, false),
    /** 0.23. */
    V0_23("0.23", "0.23.0", OutputTail.PREFILL_STATS_AT_11, 3, false, true),
    /** 0.24-0.26. */
    V0_24("0.24", "0.24.0", OutputTail.PREFILL_STATS_AT_11, 3, false, true),
    /** 0.27. */
    V0_27("0.27", "0.27.0", OutputTail.PREFILL_STATS_AT_11, 3, false, true),
    /** 0.28 and main, the newest line the specification confirms. */
    V0_28("0.28", "0.28.0", OutputTail.PREFILL_STATS_AT_11, 4, false, true);

    /** Where an {@code EngineCoreOutput} reports the prompt's cached tokens, after the nine stable fields. */
    public enum OutputTail
    {
        /** {@code num_cached_tokens} at index 9. */
        CACHED_AT_9,
        /** {@code trace_headers} at 9, {@code num_cached_tokens} at 10. */
        CACHED_AT_10,
        /** {@code ec_transfer_params} at 9, {@code trace_headers} at 10, {@code num_cached_tokens} at 11. */
        CACHED_AT_11,
        /** {@code ec_transfer_params} at 9, {@code trace_headers} at 10, {@code prefill_stats} map at 11. */
        PREFILL_STATS_AT_11
    }

    /** The line used when none is given: the newest the specification confirms. */
    public static final VllmLine NEWEST = V0_28;

    private final String label;
    private final String version;
    private final OutputTail outputTail;
    private final int maxFinishReason;
    private final boolean readyNeedsNumGpuBlocks;
    private final boolean kvEventsAsMaps;

    VllmLine(final String label, final String version, final OutputTail outputTail, final int maxFinishReason,
        final boolean readyNeedsNumGpuBlocks, final boolean kvEventsAsMaps)
    {
        this.label = label;
        this.version = version;
        this.outputTail = outputTail;
        this.maxFinishReason = maxFinishReason;
        this.readyNeedsNumGpuBlocks = readyNeedsNumGpuBlocks;
        this.kvEventsAsMaps = kvEventsAsMaps;
    }

    /**
     * @param text a line ({@code 0.23}) or a version ({@code 0.23.1}).
     * @return the line that version belongs to.
     * @throws IllegalArgumentException naming the supported lines.
     */
    public static VllmLine of(final String text)
    {
        final String[] parts = text.trim().toLowerCase(Locale.ROOT).replaceFirst("^v", "").split("\\.");
        if (parts.length >= 2 && "0".equals(parts[0]))
        {
            try
            {
                final int minor = Integer.parseInt(parts[1]);
                final int patch = parts.length > 2 ? Integer.parseInt(parts[2].replaceAll("[^0-9].*$", "")) : 0;
                if (minor == 10)
                {
                    return patch >= 2 ? V0_11 : V0_10;
                }
                if (minor >= 10)
                {
                    return minor <= 12 ? V0_11 : minor <= 18 ? V0_15 : minor <= 22 ? V0_19 : minor == 23 ? V0_23 :
                        minor <= 26 ? V0_24 : minor == 27 ? V0_27 : V0_28;
                }
            }
            catch (final NumberFormatException ignored)
            {
                // reported below
            }
        }
        throw new IllegalArgumentException("unsupported vLLM line '" + text + "'; supported: 0.10 to 0.28 and newer " +
            "(lines: 0.10, 0.11, 0.15, 0.19, 0.23, 0.24, 0.27, 0.28)");
    }

    /**
     * @return the short name ({@code 0.23}).
     */
    public String label()
    {
        return label;
    }

    /**
     * @return the version reported in the registration payload.
     */
    public String version()
    {
        return version;
    }

    /**
     * @return where cached-token counts go in an output.
     */
    public OutputTail outputTail()
    {
        return outputTail;
    }

    /**
     * @return the largest FinishReason value the frontend decodes (2 = ABORT, 3 = ERROR, 4 = REPETITION).
     */
    public int maxFinishReason()
    {
        return maxFinishReason;
    }

    /**
     * @return true when the frontend reads {@code num_gpu_blocks} from READY (up to 0.18).
     */
    public boolean readyNeedsNumGpuBlocks()
    {
        return readyNeedsNumGpuBlocks;
    }

    /**
     * @return true when KV-cache events are msgpack maps (0.23 and newer), false for positional arrays.
     */
    public boolean kvEventsAsMaps()
    {
        return kvEventsAsMaps;
    }
}
