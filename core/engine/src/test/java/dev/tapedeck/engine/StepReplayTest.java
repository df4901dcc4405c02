package dev.tapedeck.engine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --replay-steps}: recorded first chunks and decode steps (gap, tokens) served verbatim to matching requests,
 * in the engine with a manual clock.
 */
class StepReplayTest
{
    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    private static TraceRecord record(final int[] prompt, final long output, final double[] gapsMs,
        final int[] tokens, final double atMs)
    {
        return new TraceRecord().promptTokens(prompt.length).outputTokens(output).ttftMs(10).itlMs(gapsMs)
            .itlTokens(tokens).arrivalMs(atMs).blockHashes(PromptBlockHashes.of(prompt, prompt.length, 16))
            .finishReason("stop");
    }

    private static EngineHarness harness(final StepReplay replay, final long stepNs)
    {
        return new EngineHarness(EngineHarness.config(new FixedStepModel(stepNs)).maxModelLen(1000)
            .stepReplay(replay));
    }

    private static List<Long> gapsMs(final List<Long> times)
    {
        final List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < times.size(); i++)
        {
            if (!times.get(i).equals(times.get(i - 1)))
            {
                gaps.add((times.get(i) - times.get(i - 1)) / MS);
            }
        }
        return gaps;
    }

    @Test
    void shouldServeTheRecordedGapsAndBurstsOfAMatchingRequestWithSpecAccounting()
    {
        final int[] prompt = EngineHarness.prompt("p", 40);
        final StepReplay replay = StepReplay.of(List.of(record(prompt, 6, new double[] {12, 11, 30},
            new int[] {1, 2, 2}, 0)), StepReplay.Match.PREFIX, 16, "test");
        assertEquals(1, replay.numSpecTokens(), "K = max(itl_tokens) - 1");
        final EngineHarness h = harness(replay, 5 * MS);
        final Request r = h.submit("any-id", prompt, 100);
        h.runUntilIdle();
        assertEquals(List.of(1, 1, 2, 2), SpeculativeDecodingTest.chunkSizes(h.sink.timesOf(r)));
        assertEquals(List.of(12L, 11L, 30L), gapsMs(h.sink.timesOf(r)), "the recorded gaps, verbatim");
        assertEquals(FinishReason.STOP, r.finishReason(), "at the recorded total, as recorded");
        assertEquals(3, h.engine.metrics().specDrafts(), "one draft per decode step, K = 1");
        assertEquals(2, h.engine.metrics().specAcceptedTokens(), "bursts of 2 accepted their draft");
    }

    @Test
    void shouldServeALongFirstChunkAndCutAtMaxTokens()
    {
        final int[] prompt = EngineHarness.prompt("p", 32);
        final StepReplay replay = StepReplay.of(List.of(record(prompt, 7, new double[] {10, 10}, null, 0)),
            StepReplay.Match.PREFIX, 16, "test");
        final EngineHarness h = harness(replay, 5 * MS);
        final Request whole = h.submit("a", prompt, 100);
        h.runUntilIdle();
        assertEquals(List.of(5, 1, 1), SpeculativeDecodingTest.chunkSizes(h.sink.timesOf(whole)),
            "the first output has output_tokens - sum(itl_tokens) = 5 tokens");
        assertEquals(0, h.engine.metrics().numSpeculativeTokens(), "an autoregressive trace: no spec accounting");
        final Request cut = h.submit("b", prompt, 6);
        h.runUntilIdle();
        assertEquals(List.of(5, 1), SpeculativeDecodingTest.chunkSizes(h.sink.timesOf(cut)));
        assertEquals(FinishReason.LENGTH, cut.finishReason());
    }

    @Test
    void shouldLetTheRecordedRequestPaceStepsItSharesWithUnmatchedOnes()
    {
        final int[] prompt = EngineHarness.prompt("p", 32);
        final StepReplay replay = StepReplay.of(List.of(record(prompt, 4, new double[] {50, 50, 50}, null, 0)),
            StepReplay.Match.PREFIX, 16, "test");
        final EngineHarness h = harness(replay, 10 * MS);
        final Request recorded = h.submit("a", prompt, 100);
        final Request other = h.submit("b", EngineHarness.prompt("q", 32), 6);
        h.runUntilIdle();
        assertEquals(List.of(50L, 50L, 50L), gapsMs(h.sink.timesOf(recorded)));
        assertEquals(List.of(50L, 50L, 50L, 10L, 10L), gapsMs(h.sink.timesOf(other)),
            "the unmatched request decodes at the recorded pace while they share steps, then on the model");
    }

    @Test
    void shouldMatchByTheIndexSuffixOfTheRequestId()
    {
        final int[] prompt = EngineHarness.prompt("p", 8);
        final StepReplay replay = StepReplay.of(List.of(record(prompt, 2, new double[] {70}, null, 5),
            record(prompt, 2, new double[] {30}, null, 1)), StepReplay.Match.INDEX, 16, "test");
        final EngineHarness h = harness(replay, MS);
        final Request second = h.submit("sim-1", EngineHarness.prompt("x", 8), 10);
        final Request none = h.submit("sim-7", EngineHarness.prompt("y", 8), 3);
        h.runUntilIdle();
        assertEquals(List.of(70L), gapsMs(h.sink.timesOf(second)), "record 1 in arrival order (arrival_ms 5)");
        assertEquals(2, h.sink.tokensOf(second).size());
        assertEquals(3, h.sink.tokensOf(none).size(), "no record 7: the model");
    }

    @Test
    void shouldRefuseATraceWithoutGaps() throws Exception
    {
        final Path plain = dir.resolve("plain.jsonl");
        Files.writeString(plain, "{\"prompt_tokens\":40,\"output_tokens\":1,\"ttft_ms\":1}\n");
        final IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
            () -> StepReplay.read(plain, StepReplay.Match.INDEX));
        assertTrue(none.getMessage().startsWith(plain + ": --replay-steps needs records with itl_ms"),
            none.getMessage());
    }
}
