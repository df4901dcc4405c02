package dev.tapedeck.cli.inspect;

import picocli.CommandLine;

import dev.tapedeck.cli.VersionProvider;

/**
 * {@code tapedeck inspect}: offline tools for traces and workloads. Each tool is a subcommand; none opens a socket
 * except {@code perfetto --open}, which serves one file on 127.0.0.1.
 */
@CommandLine.Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Offline tools for traces, workloads and load reports (docs/inspect.md).",
    subcommands = {ConvertCommand.class, SummarizeCommand.class, PerfettoCommand.class, ValidateCommand.class,
        FingerprintCommand.class, GenDemoCommand.class, ReportCommand.class, CalibrateCommand.class, FitCommand.class,
        ConformanceCommand.class, CommandLine.HelpCommand.class})
public final class InspectCommand implements Runnable
{
    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public void run()
    {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
