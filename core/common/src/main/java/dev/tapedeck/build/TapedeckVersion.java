package dev.tapedeck.build;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * tapedeck's own version, as the build wrote it into {@code dev/tapedeck/version.properties}. Stateless; any thread.
 */
public final class TapedeckVersion
{
    private TapedeckVersion()
    {
    }

    /**
     * @return tapedeck's version, or "dev" when run from classes without a build.
     */
    public static String version()
    {
        try (InputStream in = TapedeckVersion.class.getResourceAsStream("/dev/tapedeck/version.properties"))
        {
            if (null == in)
            {
                return "dev";
            }
            final Properties properties = new Properties();
            properties.load(in);
            final String version = properties.getProperty("version", "dev");
            return version.startsWith("${") ? "dev" : version;
        }
        catch (final IOException ex)
        {
            return "dev";
        }
    }
}
