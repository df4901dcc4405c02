package dev.tapedeck.workload;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Loads any supported request trace as a {@link Workload} (formats: {@link WorkloadFormat}; details:
 * docs/workloads.md). Times become milliseconds from the first request; hash ids keep their source's block size
 * ({@link Workload#hashBlockSize()}); whatever a loader assumed, adjusted or skipped is in {@link Workload#notes()}.
 * Sessions are the source's, or, when it names none but has chained prefix block ids (Mooncake, captured traces),
 * inferred here by {@link SessionInference}: this is the one place sessions are inferred, so every command that loads
 * a file ({@code load}, {@code inspect convert}, {@code simulate}) sees the same sessions;
 * {@link Workload#withoutSessions()} drops them ({@code --sessions off}). Stateless; thread safe.
 * <pre>
 *   Workload mooncake = Workloads.load(Path.of("conversation_trace.jsonl"));          // detected
 *   Workload azure = Workloads.load(Path.of("code.csv"), WorkloadFormat.AZURE);
 * </pre>
 */
public final class Workloads
{
    private Workloads()
    {
    }

    /**
     * Load a file whose format is told from its content ({@link WorkloadFormat#detect(Path)}).
     *
     * @param path the file (or a directory of kv-cache-tester conversations).
     * @return the workload, with its sessions (the source's or inferred).
     * @throws IOException if it cannot be read.
     * @throws IllegalArgumentException if its format cannot be told or it is malformed (file and line named).
     */
    public static Workload load(final Path path) throws IOException
    {
        return load(path, WorkloadFormat.detect(path));
    }

    /**
     * @param path the file (or, for kv-cache-tester, a directory of conversations).
     * @param format its format.
     * @return the workload, with its sessions (the source's or inferred).
     * @throws IOException if it cannot be read.
     * @throws IllegalArgumentException if it is malformed (file and line named).
     */
    public static Workload load(final Path path, final WorkloadFormat format) throws IOException
    {
        return SessionInference.infer(read(path, format));
    }

    private static Workload read(final Path path, final WorkloadFormat format) throws IOException
    {
        return switch (format)
        {
            case TAPEDECK -> WorkloadReader.readAll(path);
            case TRACE -> TraceLoader.load(path);
            case MOONCAKE -> MooncakeLoader.load(path);
            case AZURE -> AzureLoader.load(path);
            case KVCACHE_TESTER -> KvCacheTesterLoader.load(path);
            case GUIDELLM -> GuidellmReport.read(path).toWorkload();
            case GUIDELLM_REPLAY -> GuidellmReplayLoader.load(path);
            case VLLM_BENCH -> VllmBenchResult.read(path).toWorkload();
            case AIPERF_MULTI_TURN -> AiperfMultiTurnLoader.load(path);
            case BURSTGPT -> BurstGptLoader.load(path);
        };
    }
}
