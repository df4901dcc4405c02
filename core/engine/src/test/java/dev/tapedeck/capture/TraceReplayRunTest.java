package dev.tapedeck.capture;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.tools.DemoTraceGenerator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TraceReplayRun}: vllm-vcr's prompt tokens from block hashes, and a {@code gen-demo} trace (made by this
 * engine with the 8B step model) replayed with the same settings gives back its own timings.
 */
class TraceReplayRunTest
{
    @TempDir
    Path dir;

    @Test
    void mixTokenMatchesVllmVcrVectors()
    {
        assertEquals(0, TraceReplayRun.mixToken(0, 0));
        assertEquals(18761, TraceReplayRun.mixToken(1, 0));
        assertEquals(26789, TraceReplayRun.mixToken(1, 1));
        assertEquals(3511, TraceReplayRun.mixToken(12345, 7));
    }

    @Test
    void promptsShareTheirBlocksAndNothingElse()
    {
        final int[] a = TraceReplayRun.promptTokenIds(0, new long[] {11, 22}, 40, 16);
        final int[] b = TraceReplayRun.promptTokenIds(1, new long[] {11, 33}, 40, 16);
        assertArrayEquals(Arrays.copyOf(a, 16), Arrays.copyOf(b, 16), "the shared first block");
        assertFalse(Arrays.equals(Arrays.copyOfRange(a, 16, 32), Arrays.copyOfRange(b, 16, 32)));
        assertFalse(Arrays.equals(Arrays.copyOfRange(a, 32, 40), Arrays.copyOfRange(b, 32, 40)), "own tails");
        assertEquals(10, TraceReplayRun.promptTokenIds(3, new long[] {11}, 10, 16).length, "cut to the prompt");
    }

    @Test
    void aDemoTraceReplayedWithItsOwnSettingsKeepsItsTimings() throws Exception
    {
        final Path demo = dir.resolve("demo.jsonl");
        DemoTraceRun.write(new DemoTraceGenerator.Options(150, 5, true), demo);
        final List<TraceRecord> records = TraceReader.readAll(demo).records();
        final TraceReplayRun.Result result = TraceReplayRun.replay(records, settings(
            StepCoefficients.DENSE_8B_RTXPRO6000));
        assertEquals(0, result.refused());
        assertEquals(150, result.replayed().size());
        final Map<String, TraceRecord> replayed = new HashMap<>();
        result.replayed().forEach(record -> replayed.put(record.extra().get("request_id").asText(), record));
        final double[] ttftErrors = new double[150];
        int i = 0;
        long cachedSource = 0;
        long cachedReplay = 0;
        for (final TraceRecord source : result.source())
        {
            final TraceRecord copy = replayed.get(source.extra().get("request_id").asText());
            assertEquals(source.arrivalMs(), copy.arrivalMs(), 1e-6, "same arrival");
            assertEquals(source.outputTokens(), copy.outputTokens());
            assertEquals(source.promptTokens(), copy.promptTokens());
            ttftErrors[i++] = Math.abs(copy.ttftMs() - source.ttftMs()) / source.ttftMs();
            cachedSource += source.cachedTokens();
            cachedReplay += copy.cachedTokens();
        }
        assertEquals(cachedSource, cachedReplay, "the same prefix-cache hits from the block hashes");
        Arrays.sort(ttftErrors);
        assertTrue(ttftErrors[75] < 0.01, "median TTFT error " + ttftErrors[75]);

        final TraceReplayRun.Result other = TraceReplayRun.replay(records, settings(
            StepCoefficients.DENSE_32B_TP2_RTXPRO6000));
        final TraceRecord first = other.replayed().stream().filter(r -> "replay-0".equals(
            r.extra().get("request_id").asText())).findFirst().orElseThrow();
        assertTrue(first.ttftMs() > 1.5 * result.source().get(0).ttftMs(), "a 32B model is slower: " +
            first.ttftMs());

        final EngineConfig delayed = settings(StepCoefficients.DENSE_8B_RTXPRO6000).frontendDelayNs(5_000_000L);
        final TraceReplayRun.Result behindAFrontend = TraceReplayRun.replay(records, delayed);
        assertEquals(replayed.get("replay-0").ttftMs() + 5, byId(behindAFrontend, "replay-0").ttftMs(), 1e-6,
            "the settings' frontend delay is in the replay's TTFT");
        assertNull(delayed.requestObserver(), "the replay runs a copy of the settings");
    }

    private static TraceRecord byId(final TraceReplayRun.Result result, final String id)
    {
        return result.replayed().stream().filter(r -> id.equals(r.extra().get("request_id").asText())).findFirst()
            .orElseThrow();
    }

    @Test
    void aTraceWithoutArrivalsCannotBeReplayed()
    {
        final TraceRecord record = new TraceRecord().promptTokens(5).outputTokens(1).ttftMs(3);
        assertThrows(IllegalArgumentException.class, () -> TraceReplayRun.replay(List.of(record),
            settings(StepCoefficients.DENSE_8B_RTXPRO6000)));
    }

    private static EngineConfig settings(final StepCoefficients coefficients)
    {
        return new EngineConfig().maxNumSeqs(DemoTraceGenerator.MAX_NUM_SEQS)
            .maxNumBatchedTokens(DemoTraceGenerator.MAX_NUM_BATCHED_TOKENS).blockSize(DemoTraceGenerator.BLOCK_SIZE)
            .latencyModel(new StepLatencyModel(coefficients));
    }
}
