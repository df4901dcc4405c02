package dev.tapedeck.cli;

import picocli.CommandLine;

import dev.tapedeck.build.TapedeckVersion;

/**
 * {@code --version}: tapedeck's version (from the build), the Java runtime, and the vLLM version {@code serve}
 * reports by default.
 */
public final class VersionProvider implements CommandLine.IVersionProvider
{
    @Override
    public String[] getVersion()
    {
        return new String[] {
            "tapedeck " + TapedeckVersion.version(),
            "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")",
            "emulates vLLM " + ServeCommand.DEFAULT_VLLM_VERSION + " by default (serve --vllm-version)",
        };
    }
}
