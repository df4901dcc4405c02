package dev.tapedeck.cli.inspect;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;
import dev.tapedeck.trace.ConfigFingerprint;
import dev.tapedeck.trace.tools.EngineConfigSettings;

/**
 * {@code tapedeck inspect fingerprint}: the {@code config_hash} (fingerprint v3) of a GPU, vLLM tag and engine
 * configuration.
 */
@CommandLine.Command(
    name = "fingerprint",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
        "Print the config_hash of a capture setup (config-fingerprint-v3: SHA-256 of the GPU, the vLLM tag and " +
            "the canonical engine configuration, as vllm-vcr stamps it).",
        "Example: tapedeck inspect fingerprint --gpu H200 --vllm-version v0.27.1 --set model=Qwen/Qwen3-8B " +
            "--set block_size=16 ..."})
public final class FingerprintCommand implements Callable<Integer>
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @CommandLine.Option(names = "--gpu", defaultValue = "", paramLabel = "NAME",
        description = "GPU name, e.g. H200 (default: empty, as the tap writes an unknown GPU).")
    String gpu;

    @CommandLine.Option(names = "--vllm-version", required = true, paramLabel = "TAG",
        description = "vLLM release tag (v0.27.1) or the engine-reported version.")
    String vllmVersion;

    @CommandLine.Option(names = "--engine-config", paramLabel = "TEXT",
        description = "The canonical engine configuration k=v;k=v..., hashed exactly as given.")
    String engineConfig;

    @CommandLine.Option(names = "--set", paramLabel = "KEY=VALUE",
        description = "One engine setting (repeatable); the settings are sorted by key and written as the capture " +
            "scripts write them (true/false, 0.90 -> 0.9). Instead of --engine-config.")
    List<String> settings = new ArrayList<>();

    @CommandLine.Option(names = "--show", description = "Also print the exact text that is hashed.")
    boolean show;

    @Override
    public Integer call()
    {
        if (null != engineConfig && !settings.isEmpty())
        {
            throw new IllegalArgumentException("give either --engine-config or --set, not both");
        }
        if (null == engineConfig && settings.isEmpty())
        {
            throw new IllegalArgumentException("give the engine configuration with --engine-config or --set");
        }
        final String config = null != engineConfig ? engineConfig : EngineConfigSettings.canonical(settings);
        if (null != engineConfig && !EngineConfigSettings.isSorted(engineConfig))
        {
            spec.commandLine().getErr().println("tapedeck fingerprint: note: --engine-config is not sorted by key, " +
                "so it is not in canonical form; it is hashed as given");
            spec.commandLine().getErr().flush();
        }
        final PrintWriter out = spec.commandLine().getOut();
        if (show)
        {
            out.print(ConfigFingerprint.canonicalText(gpu, vllmVersion, config));
        }
        out.println(ConfigFingerprint.hash(gpu, vllmVersion, config));
        out.flush();
        return 0;
    }
}
