package dev.tapedeck.cli;

import java.util.List;

import org.junit.jupiter.api.Test;

import picocli.CommandLine;
import dev.tapedeck.kv.BlockHashAlgo;
import dev.tapedeck.testing.CliRun;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command line: help on every command, version, and clear errors for bad flags, in-process.
 */
class CliTest
{
    private static CliRun run(final String... args)
    {
        return CliRun.of(args);
    }

    @Test
    void shouldPrintHelpForEveryCommand()
    {
        final CliRun top = run("--help");
        assertEquals(0, top.exitCode());
        assertTrue(top.out().contains("serve"), top.out());
        for (final String command : Main.commandLine().getSubcommands().keySet())
        {
            if ("help".equals(command))
            {
                continue;
            }
            final CliRun help = run(command, "--help");
            assertEquals(0, help.exitCode(), command);
            assertTrue(help.out().startsWith("Usage: tapedeck " + command), help.out());
        }
    }

    @Test
    void shouldDocumentEveryServeFlagWithItsDefault()
    {
        final String help = run("serve", "--help").out();
        for (final String flag : new String[] {"--model", "--served-model-name", "--host", "--port", "--instances",
            "--mode", "--max-num-seqs", "--max-num-batched-tokens", "--max-model-len", "--max-waiting-queue-length",
            "--long-prefill-token-threshold", "--scheduling-policy", "--latency-model", "--step-profile",
            "--time-to-first-token", "--inter-token-latency", "--prefill-overhead", "--prefill-time-per-token",
            "--time-factor-under-load", "--tokenizer", "--chat-template", "--max-request-body-size",
            "--shutdown-timeout", "--seed", "--transport", "--block-size", "--kv-cache-size", "enable-prefix-caching",
            "--prefix-caching-hash-seed", "--prefix-caching-hash-algo"})
        {
            assertTrue(help.contains(flag), "serve --help lacks " + flag);
        }
        assertTrue(help.contains("default: 256"), "defaults are shown");
    }

    @Test
    void shouldPrintTheVersion()
    {
        final CliRun version = run("--version");
        assertEquals(0, version.exitCode());
        assertTrue(version.out().startsWith("tapedeck "), version.out());
    }

    @Test
    void shouldRejectAMalformedFlagValue()
    {
        final CliRun bad = run("serve", "--max-num-seqs", "many");
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains("--max-num-seqs"), bad.err());
        final CliRun duration = run("serve", "--inter-token-latency", "fast");
        assertEquals(2, duration.exitCode());
        assertTrue(duration.err().contains("invalid duration 'fast'"), duration.err());
        final CliRun noScheme = run("load", "--url", "127.0.0.1:8000", "--concurrency", "1");
        assertEquals(2, noScheme.exitCode());
        assertEquals(List.of("tapedeck load: error: Invalid value for option '--url' (URL): '127.0.0.1:8000' is " +
            "not a URL; give its scheme, e.g. http://127.0.0.1:8000 (tapedeck load --help lists every flag)"),
            noScheme.err().lines().toList(), "one line, no usage dump");
        assertEquals(1, run("serve", "--no-such-flag").err().lines().count(), "one line for an unknown flag too");
        final CliRun bareWarmup = run("load", "--url", "http://127.0.0.1:9", "--concurrency", "1", "--duration", "1s",
            "--warmup", "20");
        assertEquals(2, bareWarmup.exitCode());
        assertTrue(bareWarmup.err().contains("'20' has no unit: give one, e.g. 20s or 20ms"), bareWarmup.err());
        final CliRun ftp = run("load", "--url", "ftp://127.0.0.1:9", "--concurrency", "1", "--duration", "1s");
        assertEquals(2, ftp.exitCode());
        assertTrue(ftp.err().contains("--url must be an http:// or https:// URL"), ftp.err());
    }

    @Test
    void shouldRejectInvalidSettingsWithOneClearLine()
    {
        final CliRun zero = run("serve", "--port", "0", "--max-num-seqs", "0");
        assertEquals(2, zero.exitCode());
        assertTrue(zero.err().contains("--max-num-seqs must be >= 1"), zero.err());
        assertTrue(!zero.err().contains("\tat "), "no stack trace: " + zero.err());
        final CliRun knob = run("serve", "--port", "0", "--time-to-first-token", "100ms",
            "--time-to-first-token-std-dev", "50ms");
        assertEquals(2, knob.exitCode());
        assertTrue(knob.err().contains("at most 30%"), knob.err());
        final CliRun pool = run("serve", "--port", "0", "--kv-cache-size", "10", "--max-model-len", "8192");
        assertEquals(2, pool.exitCode());
        assertTrue(pool.err().contains("--max-model-len 8192 needs 512 KV blocks of 16 tokens but the KV cache " +
            "holds 10 blocks"), pool.err());
        final CliRun profile = run("serve", "--port", "0", "--step-profile", "h200");
        assertEquals(2, profile.exitCode());
        assertTrue(profile.err().contains("unknown step profile 'h200'"), profile.err());
    }

    @Test
    void shouldSizeTheKvCacheFromGpuMemory()
    {
        final EngineOptions h100 = new EngineOptions();
        new CommandLine(h100).setCaseInsensitiveEnumValuesAllowed(true).parseArgs("--gpu-memory-gb", "80");
        // (80e9 x 0.9 - 8,190,735,360 x 2 - overhead) / (147,456 B per token x 16)
        assertEquals(23_049, h100.capacityModel("Qwen/Qwen3-8B").template().kvCacheBlocks());
        final EngineOptions custom = new EngineOptions();
        new CommandLine(custom).setCaseInsensitiveEnumValuesAllowed(true).parseArgs("--gpu-memory-gb", "48",
            "--gpu-memory-utilization", "0.5", "--kv-bytes-per-token", "65536", "--model-weights-gb", "10");
        // (24e9 - 10e9 - overhead) / (65,536 x 16)
        assertEquals(12_171, custom.capacityModel("my/unknown").template().kvCacheBlocks());
        final EngineOptions defaults = new EngineOptions();
        new CommandLine(defaults).setCaseInsensitiveEnumValuesAllowed(true).parseArgs();
        assertEquals(33_600, defaults.template().kvCacheBlocks());

        final CliRun both = run("serve", "--port", "0", "--gpu-memory-gb", "80", "--kv-cache-size", "1000");
        assertEquals(2, both.exitCode());
        assertTrue(both.err().contains("give --kv-cache-size or --gpu-memory-gb, not both"), both.err());
        final CliRun unknown = run("serve", "my/unknown", "--port", "0", "--gpu-memory-gb", "80");
        assertEquals(2, unknown.exitCode());
        assertTrue(unknown.err().contains("no built-in dimensions for model 'my/unknown'"), unknown.err());
        final CliRun small = run("serve", "--port", "0", "--gpu-memory-gb", "16");
        assertEquals(2, small.exitCode());
        assertTrue(small.err().contains("no memory left for the KV cache"), small.err());
    }

    @Test
    void shouldServeLoraModulesWithoutEnableLoraAsLlmdAndRefuseMalformedModules()
    {
        final CliRun halfTls = run("serve", "--port", "0", "--ssl-certfile", "cert.pem");
        assertEquals(2, halfTls.exitCode());
        assertTrue(halfTls.err().contains("--ssl-certfile and --ssl-keyfile go together"), halfTls.err());
        final CliRun cpu = run("serve", "--port", "0", "--enable-lora", "--max-loras", "4", "--max-cpu-loras", "2");
        assertEquals(2, cpu.exitCode());
        assertTrue(cpu.err().contains("max_cpu_loras (2) must be greater than or equal to max_loras (4)"), cpu.err());
        final picocli.CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--lora-modules", "sql=/adapters/sql");
        final dev.tapedeck.serve.ServeContext without = ((ServeCommand)cli.getSubcommands().get("serve").getCommand())
            .context().conclude();
        assertTrue(without.serveOptions().lora().enabled(), "llm-d-inference-sim's deployments give only the modules");
        assertEquals("sql", without.serveOptions().lora().modules().get(0).name());
        final CliRun malformed = run("serve", "--port", "0", "--enable-lora", "--lora-modules", "sql");
        assertEquals(2, malformed.exitCode());
        assertTrue(malformed.err().contains("--lora-modules: 'sql' is neither NAME=PATH nor a JSON object"),
            malformed.err());
        final CliRun maxLoras = run("serve", "--port", "0", "--enable-lora", "--max-loras", "0");
        assertEquals(2, maxLoras.exitCode());
        assertTrue(maxLoras.err().contains("--max-loras must be >= 1"), maxLoras.err());
        for (final String command : new String[] {"serve", "play"})
        {
            assertTrue(run(command, "--help").out().contains("--max-loras"), command);
        }
        final String serveHelp = run("serve", "--help").out();
        for (final String flag : new String[] {"--enable-lora", "--lora-modules", "--max-lora-rank"})
        {
            assertTrue(serveHelp.contains(flag), flag);
        }
    }

    @Test
    void shouldParseVllmsSpeculativeConfigAndRejectABadOneWithOneLine()
    {
        final EngineOptions spec = new EngineOptions();
        new CommandLine(spec).setCaseInsensitiveEnumValuesAllowed(true).parseArgs("--speculative-config",
            "{\"method\":\"ngram\",\"num_speculative_tokens\":4,\"prompt_lookup_max\":5}",
            "--spec-acceptance-rate", "0.9,0.7,0.5,0.2");
        assertEquals(4, spec.template().numSpeculativeTokens());
        assertEquals(0.5, spec.template().speculativeDecoding().acceptanceRate(2), 1e-12);
        final EngineOptions none = new EngineOptions();
        new CommandLine(none).setCaseInsensitiveEnumValuesAllowed(true).parseArgs();
        assertEquals(0, none.template().numSpeculativeTokens());
        for (final String command : new String[] {"serve", "play", "simulate"})
        {
            final String[] required = "simulate".equals(command) ? new String[] {"--workload", "w.jsonl"} :
                "play".equals(command) ? new String[] {"--handshake-address", "tcp://127.0.0.1:1"} :
                new String[] {"--port", "0"};
            final CliRun bad = run(command, required[0], required[1], "--speculative-config",
                "{num_speculative_tokens: 3");
            assertEquals(2, bad.exitCode(), command);
            assertTrue(bad.err().startsWith("tapedeck " + command + ": error: --speculative-config is not valid " +
                "JSON"), bad.err());
            assertEquals(1, bad.err().trim().lines().count(), bad.err());
            assertTrue(run(command, "--help").out().contains("--speculative-config"), command);
        }
        final CliRun zero = run("serve", "--port", "0", "--speculative-config", "{\"num_speculative_tokens\":0}");
        assertEquals(2, zero.exitCode());
        assertEquals("tapedeck serve: error: --speculative-config: num_speculative_tokens must be an integer >= 1, " +
            "got 0", zero.err().trim());
        final CliRun rates = run("serve", "--port", "0", "--speculative-config", "{\"num_speculative_tokens\":2}",
            "--spec-acceptance-rate", "0.5,0.6");
        assertEquals(2, rates.exitCode());
        assertTrue(rates.err().contains("--spec-acceptance-rate: acceptance rates must not increase"), rates.err());
        final CliRun alone = run("serve", "--port", "0", "--spec-acceptance-rate", "0.5");
        assertEquals(2, alone.exitCode());
        assertTrue(alone.err().contains("--spec-acceptance-rate needs --speculative-config"), alone.err());
    }

    @Test
    void shouldRejectAnUnusableReplayTokensFileWithOneLine() throws Exception
    {
        final CliRun missing = run("serve", "--port", "0", "--replay-tokens", "/nonexistent/trace.jsonl");
        assertEquals(2, missing.exitCode());
        assertEquals("tapedeck serve: error: --replay-tokens: no such file: /nonexistent/trace.jsonl",
            missing.err().trim());
        final java.nio.file.Path plain = java.nio.file.Files.createTempFile("plain", ".jsonl");
        try
        {
            java.nio.file.Files.writeString(plain, "{\"prompt_tokens\":40,\"output_tokens\":1,\"ttft_ms\":1}\n");
            final CliRun noIds = run("serve", "--port", "0", "--replay-tokens", plain.toString());
            assertEquals(2, noIds.exitCode());
            assertTrue(noIds.err().contains(plain + ": --replay-tokens needs records with both output_token_ids"),
                noIds.err());
        }
        finally
        {
            java.nio.file.Files.delete(plain);
        }
    }

    @Test
    void shouldRejectConflictingOrUnusableLatencyTraces() throws Exception
    {
        final java.nio.file.Path single = java.nio.file.Files.createTempFile("single", ".jsonl");
        try
        {
            java.nio.file.Files.writeString(single, "{\"prompt_tokens\":40,\"output_tokens\":1,\"ttft_ms\":1}\n");
            final CliRun both = run("serve", "--port", "0", "--latency-trace", single.toString(), "--latency-model",
                "knob");
            assertEquals(2, both.exitCode());
            assertTrue(both.err().contains("give --latency-trace or --latency-model and its knobs, not both"),
                both.err());
            final CliRun noItl = run("serve", "--port", "0", "--latency-trace", single.toString());
            assertEquals(2, noItl.exitCode());
            assertTrue(noItl.err().contains("no record has ITL data"), noItl.err());
            assertEquals(1, noItl.err().trim().lines().count(), noItl.err());
        }
        finally
        {
            java.nio.file.Files.delete(single);
        }
    }

    @Test
    void shouldTurnPrefixCachingOnByDefaultAndOffOnRequest()
    {
        final EngineOptions defaults = new EngineOptions();
        new CommandLine(defaults).setCaseInsensitiveEnumValuesAllowed(true).parseArgs();
        assertTrue(defaults.template().enablePrefixCaching());
        assertEquals("0", defaults.template().prefixCachingHashSeed());
        final EngineOptions off = new EngineOptions();
        new CommandLine(off).setCaseInsensitiveEnumValuesAllowed(true)
            .parseArgs("--no-enable-prefix-caching", "--prefix-caching-hash-seed", "42");
        assertTrue(!off.template().enablePrefixCaching());
        assertEquals("42", off.template().prefixCachingHashSeed());
        assertEquals(BlockHashAlgo.SHA256_CBOR, defaults.template().prefixCachingHashAlgo());
        final EngineOptions xxhash = new EngineOptions();
        new CommandLine(xxhash).setCaseInsensitiveEnumValuesAllowed(true)
            .parseArgs("--prefix-caching-hash-algo", "xxhash_cbor");
        assertEquals(BlockHashAlgo.XXHASH_CBOR, xxhash.template().prefixCachingHashAlgo());
        final EngineOptions pickle = new EngineOptions();
        new CommandLine(pickle).setCaseInsensitiveEnumValuesAllowed(true)
            .parseArgs("--prefix-caching-hash-algo", "sha256");
        assertThrows(IllegalArgumentException.class, pickle::template);
    }

    @Test
    void shouldParseKvEventFlagsOnServeAndPlayAndPickTheEncodingByVllmLine()
    {
        for (final String command : new String[] {"serve", "play"})
        {
            final String help = run(command, "--help").out();
            for (final String flag : new String[] {"--enable-kv-cache-events", "--kv-events-endpoint",
                "--kv-events-topic", "--kv-events-replay-endpoint", "--kv-events-format", "--kv-events-buffer-steps"})
            {
                assertTrue(help.contains(flag), command + " --help lacks " + flag);
            }
        }
        final KvEventsOptions defaults = new KvEventsOptions();
        new CommandLine(defaults).parseArgs();
        final dev.tapedeck.kvevents.KvEventsSettings old = defaults.settings(
            dev.tapedeck.protocol.enginecore.VllmLine.of("0.19.0"), "kv@h:1@m", 0);
        assertEquals("tcp://127.0.0.1:5557", old.endpoint(), "vLLM's port, on loopback");
        assertTrue(old.bindsPublisher(), "the default binds, on loopback only");
        final KvEventsOptions everywhere = new KvEventsOptions();
        new CommandLine(everywhere).parseArgs("--kv-events-endpoint", "tcp://*:5557");
        assertTrue(everywhere.settings(dev.tapedeck.protocol.enginecore.VllmLine.of("0.19.0"), "", 0)
            .bindsPublisher(), "every interface, asked for");
        final KvEventsOptions subscriber = new KvEventsOptions();
        new CommandLine(subscriber).parseArgs("--kv-events-endpoint", "tcp://127.0.0.1:5557");
        assertTrue(!subscriber.settings(dev.tapedeck.protocol.enginecore.VllmLine.of("0.19.0"), "", 0)
            .bindsPublisher(), "a plain address given is connected to, as vLLM does");
        assertEquals("kv@h:1@m", old.topic());
        assertEquals(null, old.replayEndpoint());
        assertEquals(10_000, old.bufferSteps());
        assertTrue(!old.eventsAsMaps(), "arrays up to 0.22");
        assertTrue(defaults.settings(dev.tapedeck.protocol.enginecore.VllmLine.of("0.23"), "", 0).eventsAsMaps(),
            "maps from 0.23");
        final KvEventsOptions forced = new KvEventsOptions();
        new CommandLine(forced).parseArgs("--kv-events-format", "ARRAY", "--kv-events-topic", "kv@pod@model",
            "--kv-events-replay-endpoint", "tcp://*:5558");
        final dev.tapedeck.kvevents.KvEventsSettings settings = forced.settings(
            dev.tapedeck.protocol.enginecore.VllmLine.of("0.28"), "ignored", 3);
        assertTrue(!settings.eventsAsMaps());
        assertEquals("kv@pod@model", settings.topic());
        assertEquals(3, settings.dataParallelRank());
        assertEquals("tcp://*:5559", settings.forReplica(1).replayEndpoint());
    }

    @Test
    void shouldLoadEitherUrlsOrAPrefillDecodePair()
    {
        final String[] run = {"--model", "m", "--concurrency", "1", "--max-requests", "1", "--quiet"};
        final CliRun both = run(concat(new String[] {"load", "--url", "http://127.0.0.1:9", "--prefill-url",
            "http://127.0.0.1:8100", "--decode-url", "http://127.0.0.1:8200"}, run));
        assertEquals(2, both.exitCode(), both.err());
        assertTrue(both.err().contains("mutually exclusive"), both.err());
        final CliRun half = run(concat(new String[] {"load", "--prefill-url", "http://127.0.0.1:8100"}, run));
        assertEquals(2, half.exitCode(), half.err());
        assertTrue(half.err().contains("Missing required argument(s): --decode-url"), half.err());
        final CliRun none = run(concat(new String[] {"load"}, run));
        assertEquals(2, none.exitCode(), none.err());
        assertTrue(none.err().contains("--url"), none.err());
        final CliRun ftp = run(concat(new String[] {"load", "--prefill-url", "ftp://127.0.0.1:8100",
            "--decode-url", "http://127.0.0.1:8200"}, run));
        assertEquals(2, ftp.exitCode(), ftp.err());
        assertEquals("tapedeck load: error: --prefill-url must be an http:// or https:// URL such as " +
            "http://127.0.0.1:8000 (a path prefix is kept), got 'ftp://127.0.0.1:8100'", ftp.err().trim());
        final String help = run("load", "--help").out();
        assertTrue(help.contains("--prefill-url") && help.contains("--decode-url"), help);
    }

    private static String[] concat(final String[] first, final String[] second)
    {
        final String[] all = java.util.Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, all, first.length, second.length);
        return all;
    }

    @Test
    void shouldRejectABadKvEventsEndpointWithOneLine()
    {
        final CliRun bad = run("serve", "--port", "0", "--enable-kv-cache-events", "--kv-events-endpoint",
            "localhost:5557");
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains("--kv-events-endpoint must be a ZeroMQ endpoint such as tcp://*:5557, got " +
            "'localhost:5557'"), bad.err());
        final CliRun format = run("serve", "--kv-events-format", "json");
        assertEquals(2, format.exitCode());
        assertTrue(format.err().contains("expected auto, array or map, got 'json'"), format.err());
    }
}
