package dev.tapedeck.protocol.enginecore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HexFormat;

/**
 * Finds third-party data shipped under {@code traces/data} from any module's working directory.
 */
final class TestData
{
    private TestData()
    {
    }

    static Path path(final String relative)
    {
        Path dir = Paths.get("").toAbsolutePath();
        while (null != dir)
        {
            final Path candidate = dir.resolve("traces/data").resolve(relative);
            if (Files.exists(candidate))
            {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("traces/data/" + relative + " not found");
    }

    static byte[] hex(final String relative) throws IOException
    {
        return HexFormat.of().parseHex(Files.readString(path(relative)).trim());
    }
}
