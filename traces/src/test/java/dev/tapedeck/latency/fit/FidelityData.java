package dev.tapedeck.latency.fit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Finds the real-run data shipped in {@code traces/data/fidelity} from any module's working directory.
 */
public final class FidelityData
{
    private FidelityData()
    {
    }

    /**
     * @param run the run folder name, e.g. {@code RTXPRO6000_Llama-3.1-8B}.
     * @return its {@code requests.jsonl}.
     */
    public static Path llmServingSimRequests(final String run)
    {
        Path dir = Paths.get("").toAbsolutePath();
        for (int i = 0; i < 4 && null != dir; i++)
        {
            final Path candidate = dir.resolve("traces/data/fidelity/llmservingsim").resolve(run)
                .resolve("requests.jsonl");
            if (Files.isRegularFile(candidate))
            {
                return candidate;
            }
            final Path local = dir.resolve("data/fidelity/llmservingsim").resolve(run).resolve("requests.jsonl");
            if (Files.isRegularFile(local))
            {
                return local;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("traces/data/fidelity/llmservingsim/" + run + " not found from " +
            Paths.get("").toAbsolutePath());
    }
}
