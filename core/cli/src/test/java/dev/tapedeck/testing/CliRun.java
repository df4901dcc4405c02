package dev.tapedeck.testing;

import java.io.PrintWriter;
import java.io.StringWriter;

import picocli.CommandLine;

import dev.tapedeck.cli.Main;

/**
 * One {@code tapedeck} command run in-process through {@link Main#commandLine()}, with what it printed.
 *
 * @param exitCode the command's exit code.
 * @param out what went to standard output.
 * @param err what went to standard error.
 */
public record CliRun(int exitCode, String out, String err)
{
    /**
     * Run a command line on the calling thread.
     *
     * @param args the arguments, as after {@code tapedeck}.
     * @return what happened.
     */
    public static CliRun of(final String... args)
    {
        final CommandLine cli = Main.commandLine();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        final int code = cli.execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }
}
