package dev.tapedeck.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;

import picocli.CommandLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck record}'s flags: every one documented with its default, bad values refused in one line with exit
 * code 2 before anything is bound.
 */
class RecordCommandTest
{
    private static String[] run(final String... args)
    {
        final CommandLine cli = Main.commandLine();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        final int code = cli.execute(args);
        return new String[] {String.valueOf(code), out.toString(), err.toString()};
    }

    @Test
    void shouldDocumentEveryFlagWithItsDefault()
    {
        final String help = run("record", "--help")[1];
        for (final String flag : new String[] {"--frontend-handshake", "--engine-handshake", "--input-address",
            "--output-address", "--trace-out", "--model", "--gpu", "--tp", "--config-hash", "--vllm-version",
            "--max-num-seqs", "--engine-config", "--block-size", "--record-tokens", "--step-stats-out",
            "--handshake-timeout"})
        {
            assertTrue(help.contains(flag), "record --help lacks " + flag);
        }
        final String unwrapped = help.replaceAll("\\s+", "");
        for (final String value : new String[] {"tcp://127.0.0.1:5570", "tcp://127.0.0.1:5580",
            "tcp://127.0.0.1:29560", "tcp://127.0.0.1:29561", "default:16", "default:off", "default:60m"})
        {
            assertTrue(unwrapped.contains("(default:" + value.replace("default:", "") + ")"),
                "record --help lacks " + value);
        }
    }

    @Test
    void shouldRefuseBadSettingsInOneLine()
    {
        final String[][] cases = {
            {"--trace-out", "s3://bucket/trace.jsonl.gz"},
            {"--trace-out", "t.jsonl", "--input-address", "tcp://0.0.0.0:29560"},
            {"--trace-out", "t.jsonl", "--engine-handshake", "ipc:///tmp/engine"},
            {"--trace-out", "t.jsonl", "--block-size", "-1"},
            {"--trace-out", "t.jsonl", "--record-tokens", "maybe"},
        };
        for (final String[] flags : cases)
        {
            final String[] args = new String[flags.length + 1];
            args[0] = "record";
            System.arraycopy(flags, 0, args, 1, flags.length);
            final String[] result = run(args);
            assertEquals("2", result[0], String.join(" ", flags) + ": " + result[2]);
            assertTrue(result[2].contains(flags[flags.length - 2]) || result[2].contains("record"), result[2]);
        }
    }
}
