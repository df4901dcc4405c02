package dev.tapedeck.simulate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.kv.BlockHashAlgo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * simulate's default block hash ({@code xxhash_cbor}) makes the same decisions as serve's ({@code sha256_cbor}): on a
 * Mooncake-style workload whose requests share prefixes and whose KV pool is small enough to evict, the report and
 * the {@code --trace-out} predictions are byte for byte the same under both.
 */
class SimulateHashAlgoTest
{
    @TempDir
    Path dir;

    @Test
    void shouldDefaultToXxhashCbor()
    {
        assertEquals(BlockHashAlgo.XXHASH_CBOR, new SimulateContext().prefixCachingHashAlgo());
    }

    @Test
    void shouldPredictTheSameUnderEitherHash() throws IOException
    {
        final Path workload = dir.resolve("shared-prefixes.jsonl");
        final List<String> lines = new ArrayList<>();
        for (int i = 0; i < 60; i++)
        {
            // four conversations, each turn repeating the ids of the turn before it and adding one
            final int conversation = i % 4;
            final int turn = i / 4;
            final StringBuilder ids = new StringBuilder().append(1000 * conversation);
            for (int t = 1; t <= turn; t++)
            {
                ids.append(',').append(1000 * conversation + t);
            }
            lines.add("{\"timestamp\": " + 400 * i + ", \"input_length\": " + (512 * (turn + 1) - 37) +
                ", \"output_length\": " + (20 + i % 7) + ", \"hash_ids\": [" + ids + "]}");
        }
        Files.write(workload, lines);

        final Run xxhash = run(workload, null, "xx");
        final Run sha256 = run(workload, BlockHashAlgo.SHA256_CBOR, "sha");
        assertEquals(sha256.report, xxhash.report);
        assertArrayEquals(Files.readAllBytes(sha256.traceOut), Files.readAllBytes(xxhash.traceOut));
        final String trace = Files.readString(xxhash.traceOut);
        assertTrue(Pattern.compile("\"cached_tokens\":[1-9]").matcher(trace).find(),
            "the workload hits the prefix cache");
    }

    private record Run(ObjectNode report, Path traceOut)
    {
    }

    private Run run(final Path workload, final BlockHashAlgo algo, final String name) throws IOException
    {
        final Path traceOut = dir.resolve(name + ".jsonl");
        final SimulateContext context = new SimulateContext()
            .workload(workload)
            .engine(new EngineConfig().kvCacheBlocks(1200).maxModelLen(8192).seed(7))
            .seed(7)
            .traceOut(traceOut);
        if (null != algo)
        {
            context.prefixCachingHashAlgo(algo);
        }
        return new Run(Simulate.run(context), traceOut);
    }
}
