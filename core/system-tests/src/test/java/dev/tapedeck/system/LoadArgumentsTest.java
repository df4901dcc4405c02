package dev.tapedeck.system;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mistakes on the {@code tapedeck load} command line: one line naming the problem, exit code 2, before any request is
 * sent (the URL below has nothing listening; none of these get as far as asking it).
 */
class LoadArgumentsTest
{
    private static final String URL = "http://127.0.0.1:9";

    private static void assertUsageError(final String expected, final String... args)
    {
        final LoadHarness.Cli cli = LoadHarness.load(args);
        assertEquals(2, cli.exitCode(), cli.err());
        final String[] lines = cli.err().strip().split("\n");
        assertEquals(1, lines.length, "one line: " + cli.err());
        assertTrue(lines[0].startsWith("tapedeck load: error: "), cli.err());
        assertTrue(lines[0].contains(expected), "'" + expected + "' in: " + cli.err());
    }

    @Test
    void shouldRefuseAMissingWorkload()
    {
        assertUsageError("no-such-file.jsonl", "--url", URL, "--workload", "no-such-file.jsonl");
    }

    @Test
    void shouldRefuseAnUnknownFormat()
    {
        assertUsageError("csv", "--url", URL, "--workload", "whatever.jsonl", "--format", "csv");
    }

    @Test
    void shouldRefuseARateWithoutADuration()
    {
        assertUsageError("--duration", "--url", URL, "--rate", "10");
        assertUsageError("--rate needs --duration", "--url", URL, "--rate", "10", "--max-requests", "5");
    }

    @Test
    void shouldRefuseMalformedSlos()
    {
        assertUsageError("--slo", "--url", URL, "--concurrency", "2", "--max-requests", "5", "--slo", "ttft_ms");
        assertUsageError("--slo", "--url", URL, "--concurrency", "2", "--max-requests", "5", "--slo", "ttft=5");
        assertUsageError("--slo", "--url", URL, "--concurrency", "2", "--max-requests", "5", "--slo", "ttft_ms=abc");
        assertUsageError("--slo", "--url", URL, "--concurrency", "2", "--max-requests", "5", "--slo", "e2e_ms=-1");
    }

    @Test
    void shouldRefuseMalformedSweeps()
    {
        assertUsageError("--sweep", "--url", URL, "--sweep", "concurrency=", "--max-requests", "5");
        assertUsageError("--sweep", "--url", URL, "--sweep", "threads=1,2", "--max-requests", "5");
        assertUsageError("--sweep", "--url", URL, "--sweep", "rate=1,,2", "--duration", "1s");
        assertUsageError("--sweep", "--url", URL, "--sweep", "concurrency=1,x", "--duration", "1s");
        assertUsageError("--sweep", "--url", URL, "--sweep", "concurrency=0", "--duration", "1s");
        assertUsageError("--sweep", "--url", URL, "--sweep", "concurrency=1.5", "--duration", "1s");
        assertUsageError("--sweep", "--url", URL, "--sweep", "rate=1.2.3", "--duration", "1s");
        assertUsageError("--sweep", "--url", URL, "--sweep", "rate=1,2", "--concurrency", "3", "--duration", "1s");
    }

    @Test
    void shouldRefuseOtherBadCombinations()
    {
        assertUsageError("--workload", "--url", URL);
        assertUsageError("--concurrency", "--url", URL, "--concurrency", "0", "--max-requests", "5");
        assertUsageError("--arrivals", "--url", URL, "--rate", "5", "--duration", "1s", "--arrivals", "bursty");
        assertUsageError("token count", "--url", URL, "--rate", "5", "--duration", "1s", "--prompt-tokens", "x");
        assertUsageError("--header", "--url", URL, "--model", "m", "--concurrency", "1", "--max-requests", "1",
            "--header", "bad name:x");
        assertUsageError("--header", "--url", URL, "--model", "m", "--concurrency", "1", "--max-requests", "1",
            "--header", "x-ok:line\rbreak");
    }
}
