package dev.tapedeck.cli;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import dev.tapedeck.testing.CliRun;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --expect-config-hash}: serve, play and simulate start only on traces captured for that fingerprint.
 */
class ExpectConfigHashTest
{
    private static final String HASH = "008ec925f30d74759b6c62bd5e78b16efb7b450c687554c053726dad9740a9dd";
    private static final String OTHER = "207648ae" + "0".repeat(56);

    @TempDir
    Path dir;

    private Path trace(final String name, final String configHash) throws Exception
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, "{\"meta\": {\"model\": \"Qwen/Qwen3-8B\"" + (null == configHash ? "" :
            ", \"config_hash\": \"" + configHash + "\"") + "}}\n{\"prompt_tokens\": 20, \"output_tokens\": 3, " +
            "\"ttft_ms\": 30.0, \"itl_ms\": [10.0, 10.0], \"arrival_ms\": 0.0}\n");
        return file;
    }

    private static EngineOptions options(final String... args)
    {
        final EngineOptions options = new EngineOptions();
        new CommandLine(options).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(args);
        return options.capacityModel("Qwen/Qwen3-8B");
    }

    @Test
    void shouldStartOnlyOnTracesOfTheExpectedConfiguration() throws Exception
    {
        final Path stamped = trace("stamped.jsonl", HASH);
        assertNotNull(options("--latency-trace", stamped.toString(), "--expect-config-hash", HASH.toUpperCase())
            .template().latencyModel());
        final IllegalArgumentException other = assertThrows(IllegalArgumentException.class, () -> options(
            "--latency-trace", stamped.toString(), "--expect-config-hash", OTHER).template());
        assertEquals(stamped + ": captured for config_hash " + HASH + ", not " + OTHER + " (--expect-config-hash)",
            other.getMessage());
        final Path unstamped = trace("unstamped.jsonl", null);
        final IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> options(
            "--latency-trace", stamped.toString(), "--replay-steps", unstamped.toString(), "--expect-config-hash",
            HASH).template());
        assertTrue(none.getMessage().startsWith(unstamped + ": the trace records no config_hash"), none.getMessage());
        final IllegalArgumentException nothing = assertThrows(IllegalArgumentException.class, () -> options(
            "--expect-config-hash", HASH).template());
        assertTrue(nothing.getMessage().contains("none is given"), nothing.getMessage());
        assertThrows(IllegalArgumentException.class, () -> options("--latency-trace", stamped.toString(),
            "--expect-config-hash", "abc").template());

        final CliRun simulate = CliRun.of("simulate", "--workload", stamped.toString(), "--latency-trace",
            stamped.toString(), "--expect-config-hash", OTHER);
        assertEquals(2, simulate.exitCode(), simulate.out() + simulate.err());
        assertTrue(simulate.err().contains("captured for config_hash " + HASH), simulate.err());
    }
}
