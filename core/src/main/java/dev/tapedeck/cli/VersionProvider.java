package dev.tapedeck.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

import picocli.CommandLine;

/**
 * {@code --version}: tapedeck's version (from the build), the Java runtime, and the vLLM version {@code serve}
 * reports by default.
 */
public final class VersionProvider implements CommandLine.IVersionProvider
{
    /**
     * @return tapedeck's version, or "dev" when run from classes without a build.
     */
    public static String version()
    {
        try (InputStream in = VersionProvider.class.getResourceAsStream("/dev/tapedeck/version.properties"))
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

    @Override
    public String[] getVersion()
    {
        return new String[] {
            "tapedeck " + version(),
            "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")",
            "emulates vLLM " + ServeCommand.DEFAULT_VLLM_VERSION + " by default (serve --vllm-version)",
        };
    }
}
