package dev.tapedeck.cli.inspect;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

import dev.tapedeck.testing.CliRun;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tapedeck inspect conformance}: the project's own manifest of real vLLM captures passes; hand-made goldens
 * show each assertion failing for its reason (a changed byte, a capture of another line, another configuration, an
 * engine registration key tapedeck lacks), a golden not present is skipped, and a bad manifest is bad input.
 */
class ConformanceCommandTest
{
    private static final Path REPO_MANIFEST = Path.of("../../conformance/manifest.toml");
    private static final String HASH = "008ec925f30d74759b6c62bd5e78b16efb7b450c687554c053726dad9740a9dd";

    @TempDir
    Path dir;

    @Test
    void shouldPassTheProjectsGoldensOfRealEngines()
    {
        final CliRun run = CliRun.of("inspect", "conformance", "--manifest", REPO_MANIFEST.toString(), "--json",
            dir.resolve("conformance.json").toString());
        assertEquals(0, run.exitCode(), run.out() + run.err());
        assertTrue(run.out().contains("schema     PASS  ADD req-mm-large: 259 prompt tokens, max_tokens 16, 1 media"),
            run.out());
        assertTrue(run.out().contains("fidelity   PASS  4 requests replayed with the capture's timing"), run.out());
        assertTrue(run.out().contains("token streams identical (4 of 4 requests, finish reasons included)"),
            run.out());
        assertTrue(run.out().contains("result: PASS: 3 of 3 goldens"), run.out());
        assertTrue(Files.exists(dir.resolve("conformance.json")));
        final CliRun other = CliRun.of("inspect", "conformance", "--manifest", REPO_MANIFEST.toString(), "--line",
            "0.27");
        assertEquals(0, other.exitCode());
        assertTrue(other.out().contains("no goldens for line 0.27"), other.out());
    }

    @Test
    void shouldFailEachAssertionForItsReason() throws Exception
    {
        final Path ours = trace("ours.jsonl", "0.27.1", HASH, registration("max_model_len", "num_gpu_blocks",
            "vllm_version"));
        final Path foreign = trace("foreign.jsonl", "0.27.1", HASH, registration("max_model_len", "future_field"));
        Files.writeString(dir.resolve("compat.toml"), "[[vllm]]\nline = \"0.27\"\ntag = \"v0.27.1\"\n" +
            "protocol_rev = \"0.27\"\ndefault = true\n");
        final Path manifest = dir.resolve("manifest.toml");
        Files.writeString(manifest, golden("0.27", ours, sha256(ours), HASH) +
            golden("0.27", ours, "0".repeat(64), HASH) +
            golden("0.23", ours, sha256(ours), HASH) +
            golden("0.27", ours, sha256(ours), "1".repeat(64)) +
            golden("0.27", foreign, sha256(foreign), HASH) +
            golden("0.27", dir.resolve("absent.jsonl"), "2".repeat(64), HASH));
        final CliRun run = CliRun.of("inspect", "conformance", "--manifest", manifest.toString());
        assertEquals(1, run.exitCode(), run.out() + run.err());
        final String[] goldens = run.out().split("\n(?=\\S)");
        assertTrue(goldens[0].contains("line       PASS  0.27.1") && goldens[0].contains("provenance PASS") &&
            goldens[0].contains("schema     PASS  tapedeck's registration carries all 3 keys"), goldens[0]);
        assertTrue(goldens[1].contains("integrity  FAIL  sha256 "), goldens[1]);
        assertTrue(goldens[2].contains("line       FAIL  captured on 0.27.1, filed under line 0.23") ||
            goldens[2].contains("line       FAIL  line 0.23 is not in compat.toml"), goldens[2]);
        assertTrue(goldens[3].contains("provenance FAIL  the capture's config_hash is " + HASH), goldens[3]);
        assertTrue(goldens[4].contains("schema     FAIL  tapedeck's registration lacks [future_field]"), goldens[4]);
        assertTrue(goldens[5].contains("fetch      SKIP"), goldens[5]);
        assertTrue(run.out().contains("result: FAIL: 1 of 6 goldens checked without a failed assertion, 1 not " +
            "present"), run.out());

        Files.writeString(manifest, golden("0.27", dir.resolve("absent.jsonl"), "2".repeat(64), HASH));
        final CliRun absent = CliRun.of("inspect", "conformance", "--manifest", manifest.toString());
        assertEquals(1, absent.exitCode(), "nothing checked is no pass: " + absent.out());
        assertTrue(absent.out().contains("1 not present: nothing was checked"), absent.out());
        Files.writeString(manifest, "[golden]\nline = \"0.27\"\n");
        final CliRun table = CliRun.of("inspect", "conformance", "--manifest", manifest.toString());
        assertEquals(2, table.exitCode(), table.err());
        assertTrue(table.err().contains("no [[golden]] entries"), table.err());

        Files.writeString(manifest, golden("0.27", ours, sha256(ours), HASH).replace("role = \"schema\"",
            "role = \"speed\""));
        final CliRun bad = CliRun.of("inspect", "conformance", "--manifest", manifest.toString());
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains("[[golden]] 1: role must be schema or fidelity, got 'speed'"), bad.err());
    }

    @Test
    void shouldRefuseAnInconsistentCaptureAndNameTheFirstTokenThatDiffers() throws Exception
    {
        // a record that claims 2 output tokens but holds 3 ids is not a capture to hold anyone to
        final Path file = dir.resolve("tokens.jsonl");
        Files.writeString(file, "{\"meta\": {\"model\": \"Qwen/Qwen3-8B\", \"block_size\": 16}}\n" +
            "{\"prompt_tokens\": 20, \"output_tokens\": 2, \"ttft_ms\": 30.0, \"itl_ms\": [10.0], " +
            "\"arrival_ms\": 0.0, \"output_token_ids\": [8, 9, 10], \"finish_reason\": \"length\"}\n");
        Files.writeString(dir.resolve("compat.toml"), "[[vllm]]\nline = \"0.27\"\ntag = \"v0.27.1\"\n" +
            "protocol_rev = \"0.27\"\ndefault = true\n");
        final Path manifest = dir.resolve("manifest.toml");
        Files.writeString(manifest, golden("0.27", file, sha256(file), "").replace("role = \"schema\"",
            "role = \"fidelity\""));
        final CliRun run = CliRun.of("inspect", "conformance", "--manifest", manifest.toString());
        assertEquals(1, run.exitCode(), run.out() + run.err());
        assertTrue(run.out().contains("schema     FAIL  not a readable trace: ") &&
            run.out().contains("output_token_ids has 3 ids but output_tokens is 2"), run.out());

        final dev.tapedeck.trace.TraceRecord recorded = new dev.tapedeck.trace.TraceRecord().outputTokenIds(
            new int[] {5, 6, 7}).finishReason("stop");
        recorded.extra().put("request_id", com.fasterxml.jackson.databind.node.TextNode.valueOf("replay-0"));
        final dev.tapedeck.trace.TraceRecord same = new dev.tapedeck.trace.TraceRecord().outputTokenIds(
            new int[] {5, 6, 7}).finishReason("stop");
        same.extra().put("request_id", com.fasterxml.jackson.databind.node.TextNode.valueOf("replay-0"));
        assertEquals("token streams identical (1 of 1 requests, finish reasons included)",
            ConformanceRun.compareStreams(java.util.List.of(recorded), java.util.List.of(same)));
        final dev.tapedeck.trace.TraceRecord other = new dev.tapedeck.trace.TraceRecord().outputTokenIds(
            new int[] {5, 9}).finishReason("length");
        other.extra().put("request_id", com.fasterxml.jackson.databind.node.TextNode.valueOf("replay-0"));
        assertEquals("token streams differ: replay-0 at token 1 of 3 (2 produced)",
            ConformanceRun.compareStreams(java.util.List.of(recorded), java.util.List.of(other)));
        final dev.tapedeck.trace.TraceRecord finish = new dev.tapedeck.trace.TraceRecord().outputTokenIds(
            new int[] {5, 6, 7}).finishReason("length");
        finish.extra().put("request_id", com.fasterxml.jackson.databind.node.TextNode.valueOf("replay-0"));
        assertEquals("token streams differ: replay-0 finished length, recorded stop",
            ConformanceRun.compareStreams(java.util.List.of(recorded), java.util.List.of(finish)));
        assertEquals("token streams differ: replay-0 produced no tokens",
            ConformanceRun.compareStreams(java.util.List.of(recorded), java.util.List.of()));
    }

    private static String golden(final String line, final Path path, final String sha256, final String configHash)
    {
        return "[[golden]]\nline = \"" + line + "\"\npath = \"" + path.toString().replace("\\", "/") + "\"\n" +
            "sha256 = \"" + sha256 + "\"\nconfig_hash = \"" + configHash + "\"\nworkload = \"w\"\n" +
            "role = \"schema\"\n\n";
    }

    private Path trace(final String name, final String version, final String configHash, final String registration)
        throws Exception
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, "{\"meta\": {\"model\": \"Qwen/Qwen3-8B\", \"source\": \"tap\", \"vllm_version\": \"" +
            version + "\", \"config_hash\": \"" + configHash + "\", \"ready_response_hex\": \"" + registration +
            "\"}}\n{\"prompt_tokens\": 20, \"output_tokens\": 3, \"ttft_ms\": 30.0, \"itl_ms\": [10.0, 10.0], " +
            "\"arrival_ms\": 0.0}\n");
        return file;
    }

    private static String registration(final String... keys) throws Exception
    {
        try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker())
        {
            packer.packMapHeader(keys.length);
            for (final String key : keys)
            {
                packer.packString(key).packInt(1);
            }
            return HexFormat.of().formatHex(packer.toByteArray());
        }
    }

    private static String sha256(final Path file) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
