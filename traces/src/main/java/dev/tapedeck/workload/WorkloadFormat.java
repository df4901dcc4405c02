package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The request-trace formats tapedeck reads (docs/workloads.md has each one's fields, units and block sizes). Formats
 * with measured results per request ({@link #hasResults()}) also convert to a vllm-vcr trace
 * ({@link TraceConversion}). Immutable.
 */
public enum WorkloadFormat
{
    /** tapedeck's own workload file: JSONL, meta line with {@code "kind":"workload"}, times in ms. */
    TAPEDECK("tapedeck", false),
    /** A vllm-vcr or tapedeck trace: records with {@code arrival_ms}, {@code block_hashes} of meta.block_size. */
    TRACE("trace", false),
    /** Mooncake FAST'25 JSONL: {@code timestamp} ms, {@code input_length}, {@code hash_ids} of 512 tokens. */
    MOONCAKE("mooncake", false),
    /** Azure LLM inference CSV: {@code TIMESTAMP} wall clock, {@code ContextTokens}, {@code GeneratedTokens}. */
    AZURE("azure", false),
    /** kv-cache-tester / WEKA conversation JSON (or a directory of them): {@code t} s, hash ids of 64 tokens. */
    KVCACHE_TESTER("kvcache-tester", false),
    /** A guidellm benchmark report (benchmarks.json): successful requests with their measured timings. */
    GUIDELLM("guidellm", true),
    /** guidellm's trace_synthetic JSONL: {@code timestamp} in seconds (any origin), input and output lengths. */
    GUIDELLM_REPLAY("guidellm-replay", false),
    /** {@code vllm bench serve --save-result --save-detailed} result JSON: per-request arrays. */
    VLLM_BENCH("vllm-bench", true),
    /** AIPerf's multi_turn JSONL: a conversation per line, {@code session_id} and {@code turns} of text, ms times. */
    AIPERF_MULTI_TURN("aiperf-multi-turn", false),
    /** BurstGPT CSV: {@code Timestamp} s, {@code Request tokens}, {@code Response tokens}, optional Session ID. */
    BURSTGPT("burstgpt", false);

    private final String cliName;
    private final boolean hasResults;

    WorkloadFormat(final String cliName, final boolean hasResults)
    {
        this.cliName = cliName;
        this.hasResults = hasResults;
    }

    /**
     * @return the name used on the command line and in {@link Workload#source()}.
     */
    public String cliName()
    {
        return cliName;
    }

    /**
     * @return true when the source holds measured per-request results (TTFT, ITL) and so converts to a trace.
     */
    public boolean hasResults()
    {
        return hasResults;
    }

    /**
     * @param name a format's command-line name, case-insensitive.
     * @return the format.
     * @throws IllegalArgumentException naming the known formats when there is none by that name.
     */
    public static WorkloadFormat of(final String name)
    {
        for (final WorkloadFormat format : values())
        {
            if (format.cliName.equalsIgnoreCase(name) || format.name().equalsIgnoreCase(name))
            {
                return format;
            }
        }
        throw new IllegalArgumentException("unknown format '" + name + "'; one of " + names());
    }

    /**
     * @return every format's command-line name, comma separated.
     */
    public static String names()
    {
        return Arrays.stream(values()).map(WorkloadFormat::cliName).collect(Collectors.joining(", "));
    }

    /**
     * Tell a file's format from its content (a directory is a set of kv-cache-tester conversations).
     *
     * @param path the file or directory.
     * @return its format.
     * @throws IOException if it cannot be read.
     * @throws IllegalArgumentException naming the formats when the content fits none, or fits two that differ in
     *     units (a JSONL of {@code timestamp}/{@code input_length} without {@code hash_ids}).
     */
    public static WorkloadFormat detect(final Path path) throws IOException
    {
        return FormatDetection.detect(path);
    }

    @Override
    public String toString()
    {
        return cliName;
    }
}
