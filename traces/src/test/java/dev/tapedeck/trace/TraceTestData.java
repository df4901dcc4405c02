package dev.tapedeck.trace;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Finds third-party data shipped under {@code traces/data} from any module's working directory.
 */
public final class TraceTestData
{
    private TraceTestData()
    {
    }

    /**
     * @param relative path under {@code traces/data}.
     * @return the file.
     */
    public static Path path(final String relative)
    {
        Path dir = Paths.get("").toAbsolutePath();
        while (null != dir)
        {
            for (final String base : new String[] {"traces/data", "data"})
            {
                final Path candidate = dir.resolve(base).resolve(relative);
                if (Files.exists(candidate))
                {
                    return candidate;
                }
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("traces/data/" + relative + " not found from " +
            Paths.get("").toAbsolutePath());
    }
}
