package dev.tapedeck.engine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --replay-tokens}: recorded outputs served to requests whose prompt matches by content, in the engine with a
 * manual clock.
 */
class TokenReplayTest
{
    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    private static TraceRecord record(final int[] prompt, final int[] output, final String finish, final double atMs)
    {
        return new TraceRecord().promptTokens(prompt.length).outputTokens(output.length).ttftMs(10)
            .itlMs(new double[Math.max(0, output.length - 1)]).arrivalMs(atMs)
            .blockHashes(PromptBlockHashes.of(prompt, prompt.length, 16)).outputTokenIds(output).finishReason(finish);
    }

    private static EngineHarness harness(final TokenReplay replay)
    {
        return new EngineHarness(EngineHarness.config(new FixedStepModel(MS)).maxModelLen(1000).tokenReplay(replay));
    }

    @Test
    void shouldServeTheRecordedTokensOfAMatchingPromptAndFinishAsRecorded()
    {
        final int[] prompt = EngineHarness.prompt("p", 40);
        final TokenReplay replay = TokenReplay.of(List.of(record(prompt, new int[] {501, 502, 503, 504}, "stop", 0)),
            16, "test");
        final EngineHarness h = harness(replay);
        final Request matched = h.submit("a", prompt, 50);
        final Request other = h.submit("b", EngineHarness.prompt("q", 40), 3);
        h.runUntilIdle();
        assertEquals(List.of(501, 502, 503, 504), h.sink.tokensOf(matched));
        assertEquals(FinishReason.STOP, matched.finishReason(), "the recording ended with stop");
        assertEquals(3, h.sink.tokensOf(other).size(), "an unmatched prompt keeps the normal token source");
        assertTrue(h.sink.tokensOf(other).stream().allMatch(t -> t >= 11 && t <= 20));
    }

    @Test
    void shouldCutTheRecordingAtMaxTokensAndRequireTheSameLength()
    {
        final int[] prompt = EngineHarness.prompt("p", 40);
        final TokenReplay replay = TokenReplay.of(List.of(record(prompt, new int[] {501, 502, 503, 504}, "stop", 0)),
            16, "test");
        final EngineHarness h = harness(replay);
        final Request cut = h.submit("cut", prompt, 2);
        final int[] longer = java.util.Arrays.copyOf(prompt, 41);
        final Request notSame = h.submit("longer", longer, 2);
        h.runUntilIdle();
        assertEquals(List.of(501, 502), h.sink.tokensOf(cut));
        assertEquals(FinishReason.LENGTH, cut.finishReason());
        assertTrue(!h.sink.tokensOf(notSame).contains(501), "one more prompt token is another prompt");
    }

    @Test
    void shouldServeRecordIOfTheArrivalOrderToARequestWhoseIdEndsInIWhenMatchedByIndex()
    {
        // file order 1, 0 by arrival; prompts need not match (vllm-vcr's replay-i requests carry made-up prompts)
        final TokenReplay replay = TokenReplay.of(List.of(
            record(EngineHarness.prompt("late", 40), new int[] {802, 803}, "stop", 20),
            record(EngineHarness.prompt("early", 40), new int[] {801}, "length", 10)), 16, "test",
            StepReplay.Match.INDEX);
        final EngineHarness h = harness(replay);
        final Request zero = h.submit("replay-0", EngineHarness.prompt("x", 40), 5);
        final Request one = h.submit("replay-1", EngineHarness.prompt("y", 3), 5);
        final Request none = h.submit("replay-7", EngineHarness.prompt("z", 40), 2);
        final Request framed = h.submit("chatcmpl-replay-1-0", EngineHarness.prompt("w", 20), 5);
        h.runUntilIdle();
        assertEquals(List.of(802, 803), h.sink.tokensOf(framed), "a frontend's prefix and choice suffix around it");
        assertEquals(List.of(801), h.sink.tokensOf(zero));
        assertEquals(FinishReason.LENGTH, zero.finishReason());
        assertEquals(List.of(802, 803), h.sink.tokensOf(one));
        assertEquals(FinishReason.STOP, one.finishReason());
        assertEquals(2, h.sink.tokensOf(none).size(), "no record 7: the normal token source");
        assertTrue(!h.sink.tokensOf(none).contains(801) && !h.sink.tokensOf(none).contains(802));
    }

    @Test
    void shouldServeRepeatedPromptsTheirRecordingsInArrivalOrderThenTheFirstAgain()
    {
        final int[] prompt = EngineHarness.prompt("p", 32);
        final TokenReplay replay = TokenReplay.of(List.of(record(prompt, new int[] {702}, "length", 20),
            record(prompt, new int[] {701}, "length", 10)), 16, "test");
        final EngineHarness h = harness(replay);
        final Request first = h.submit("1", prompt, 5);
        final Request second = h.submit("2", prompt, 5);
        final Request third = h.submit("3", prompt, 5);
        h.runUntilIdle();
        assertEquals(List.of(701), h.sink.tokensOf(first), "the earlier recording first (arrival_ms 10)");
        assertEquals(List.of(702), h.sink.tokensOf(second));
        assertEquals(List.of(701), h.sink.tokensOf(third), "all served: the first one again");
        assertEquals(FinishReason.LENGTH, third.finishReason());
    }

    @Test
    void shouldNameTheFileAndLineOfABadRecordAndRefuseATraceWithoutTokenIds() throws Exception
    {
        final Path bad = dir.resolve("bad.jsonl");
        Files.writeString(bad, "{\"prompt_tokens\":4,\"output_tokens\":1,\"ttft_ms\":1}\n{\"prompt_tokens\":\"x\"}\n");
        final IllegalArgumentException line = assertThrows(IllegalArgumentException.class,
            () -> TokenReplay.read(bad));
        assertTrue(line.getMessage().contains("bad.jsonl") && line.getMessage().contains("2"), line.getMessage());
        final Path plain = dir.resolve("plain.jsonl");
        Files.writeString(plain, "{\"prompt_tokens\":40,\"output_tokens\":1,\"ttft_ms\":1}\n");
        final IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
            () -> TokenReplay.read(plain));
        assertTrue(none.getMessage().startsWith(plain + ": --replay-tokens needs records with both " +
            "output_token_ids"), none.getMessage());
    }
}
