package dev.tapedeck.cli;

import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;

import picocli.CommandLine;

/**
 * The {@code tapedeck} command line: one binary, one engine, several faces.
 */
@CommandLine.Command(
    name = "tapedeck",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "GPU-free vLLM engine simulator and load tool.",
    subcommands = {DemoCommand.class, ServeCommand.class, PlayCommand.class, RecordCommand.class, LoadCommand.class,
        SimulateCommand.class, dev.tapedeck.cli.inspect.InspectCommand.class,
        CommandLine.HelpCommand.class})
public final class Main implements Runnable
{
    /** Netty's buffer-leak detector level (a system property read once, when Netty first allocates). */
    static final String LEAK_DETECTION_LEVEL = "io.netty.leakDetection.level";

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    /**
     * Entry point.
     *
     * @param args command-line arguments.
     */
    public static void main(final String[] args)
    {
        nettyDefaults();
        configureLogging();
        final int exitCode = execute(commandLine(), args);
        if (0 != exitCode || !ServeCommand.isServing())
        {
            System.exit(exitCode);
        }
    }

    /**
     * Netty's defaults for a long run of the CLI, set before Netty reads them, where the user gave none: no buffer-leak
     * detector (by default it samples one buffer in 128 and records a stack trace for each, 1% of the serve event
     * loop's samples at 10,000 streams and of the load client's; the tests keep it on, the CLI's leaks show there).
     * {@code -Dio.netty.leakDetection.level=...} in {@code TAPEDECK_JAVA_OPTS} brings it back.
     */
    static void nettyDefaults()
    {
        if (null == System.getProperty(LEAK_DETECTION_LEVEL))
        {
            System.setProperty(LEAK_DETECTION_LEVEL, "disabled");
        }
    }

    /**
     * Run a command line as {@code main} does: a {@code --config FILE} is expanded into flags first
     * ({@link ConfigFile}), the command line's own flags overriding the file's.
     *
     * @param commandLine a command line from {@link #commandLine()}.
     * @param args the arguments.
     * @return the exit code.
     */
    public static int execute(final CommandLine commandLine, final String... args)
    {
        final String[] expanded;
        try
        {
            expanded = ConfigFile.expand(args, commandLine, commandLine.getErr());
        }
        catch (final IllegalArgumentException ex)
        {
            commandLine.getErr().println("tapedeck " + args[0] + ": error: " + printable(ex.getMessage()));
            return 2;
        }
        return commandLine.execute(expanded);
    }

    /**
     * @return the configured picocli command line (tests use it to run commands in-process).
     */
    public static CommandLine commandLine()
    {
        return new CommandLine(new Main())
            .setCaseInsensitiveEnumValuesAllowed(true)
            .setUsageHelpAutoWidth(true)
            .setOverwrittenOptionsAllowed(true) // a flag given twice keeps its last value, as vLLM's argparse
            .registerConverter(java.net.URI.class, new Converters.Url())
            .setParameterExceptionHandler(Main::reportBadFlag)
            .setExecutionExceptionHandler(Main::reportFailure);
    }

    /** One line of at most 500 characters, control characters (a binary file's bytes) shown as '?'. */
    private static String printable(final String message)
    {
        final String line = message.replaceAll("[\\p{Cntrl}&&[^\\n\\t]]|\ufffd", "?");
        return line.length() > 500 ? line.substring(0, 500) + "..." : line;
    }

    /**
     * A flag picocli cannot parse (unknown, missing its value, a value of the wrong form): one line naming it and where
     * to look, exit code 2, no usage dump.
     */
    private static int reportBadFlag(final CommandLine.ParameterException ex, final String[] args)
    {
        final CommandLine commandLine = ex.getCommandLine();
        commandLine.getErr().println("tapedeck " + commandLine.getCommandName() + ": error: " + ex.getMessage() +
            " (tapedeck " + commandLine.getCommandName() + " --help lists every flag)");
        return 2;
    }

    /**
     * Invalid settings and unreadable files are the user's to fix: one clear line and exit code 2, no stack trace.
     * Anything else is a bug: the stack trace and exit code 1.
     */
    private static int reportFailure(final Exception ex, final CommandLine commandLine,
        final CommandLine.ParseResult parseResult)
    {
        if (ex instanceof IllegalArgumentException || ex instanceof java.io.IOException)
        {
            commandLine.getErr().println("tapedeck " + commandLine.getCommandName() + ": error: " +
                printable(String.valueOf(ex.getMessage())));
            return 2;
        }
        if (ex instanceof io.netty.channel.unix.Errors.NativeIoException || ex instanceof java.net.BindException)
        {
            commandLine.getErr().println("tapedeck " + commandLine.getCommandName() + ": cannot listen: " +
                ex.getMessage());
            return 2;
        }
        ex.printStackTrace(commandLine.getErr());
        return 1;
    }

    @Override
    public void run()
    {
        spec.commandLine().usage(System.out);
    }

    /** Loggers given a level here, held so that the level stays (java.util.logging holds loggers weakly). */
    private static final java.util.List<Logger> QUIETED = java.util.List.of(Logger.getLogger("io.netty"),
        Logger.getLogger("ai.djl"), Logger.getLogger("ai.djl.util.cuda"), Logger.getLogger("ai.djl.util.Platform"));

    private static void configureLogging()
    {
        if (null == System.getProperty("java.util.logging.SimpleFormatter.format"))
        {
            System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT %4$s %3$s: %5$s%6$s%n");
        }
        LogManager.getLogManager().reset();
        final java.util.logging.ConsoleHandler handler = new java.util.logging.ConsoleHandler();
        handler.setLevel(Level.ALL);
        final Logger root = Logger.getLogger("");
        root.addHandler(handler);
        root.setLevel(Level.INFO);
        QUIETED.get(0).setLevel(Level.WARNING);
        QUIETED.get(1).setLevel(Level.WARNING);
        // DJL's tokenizer library probes for CUDA when it loads and warns when there is none: nothing a GPU-free
        // tool's user should read
        QUIETED.get(2).setLevel(Level.OFF);
        // its native library's platform match is not news either
        QUIETED.get(3).setLevel(Level.WARNING);
    }
}
