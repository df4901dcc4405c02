package dev.tapedeck.trace.tools;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceMeta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The workload of {@code inspect gen-demo}: reproducible, heavy-tailed, with shared prefixes (the timed trace is
 * tested in core, {@code DemoTraceRunTest}).
 */
class DemoTraceGeneratorTest
{
    @Test
    void shouldDrawTheSameRequestsForTheSameSeed()
    {
        final List<DemoTraceGenerator.DemoRequest> first =
            DemoTraceGenerator.requests(new DemoTraceGenerator.Options(120, 42, false));
        final List<DemoTraceGenerator.DemoRequest> second =
            DemoTraceGenerator.requests(new DemoTraceGenerator.Options(120, 42, false));
        final List<DemoTraceGenerator.DemoRequest> other =
            DemoTraceGenerator.requests(new DemoTraceGenerator.Options(120, 43, false));
        assertEquals(120, first.size());
        for (int i = 0; i < first.size(); i++)
        {
            assertEquals(first.get(i).arrivalMs(), second.get(i).arrivalMs());
            assertArrayEquals(first.get(i).promptTokenIds(), second.get(i).promptTokenIds());
            assertEquals(first.get(i).outputTokens(), second.get(i).outputTokens());
        }
        assertNotEquals(first.get(1).arrivalMs(), other.get(1).arrivalMs());
    }

    @Test
    void shouldDrawHeavyTailedRequestsWithSharedSystemPrompts()
    {
        final List<DemoTraceGenerator.DemoRequest> requests =
            DemoTraceGenerator.requests(new DemoTraceGenerator.Options(200, 0, false));
        assertEquals(0.0, requests.get(0).arrivalMs(), "the first request arrives at the capture start");
        final Map<Long, Integer> firstBlockUses = new HashMap<>();
        double lastArrivalMs = 0;
        int longestPrompt = 0;
        int longestOutput = 0;
        int lengths = 0;
        for (final DemoTraceGenerator.DemoRequest request : requests)
        {
            assertTrue(request.arrivalMs() >= lastArrivalMs, "arrival order");
            assertEquals(request.arrivalMs(), DemoTraceGenerator.roundMs(request.arrivalMs()), "whole microseconds");
            lastArrivalMs = request.arrivalMs();
            final int[] prompt = request.promptTokenIds();
            assertTrue(prompt.length >= 1);
            assertTrue(prompt.length + request.maxTokens() <= DemoTraceGenerator.MAX_MODEL_LEN, "fits the context");
            assertEquals(1024, request.maxTokens());
            assertTrue(request.outputTokens() >= 1 && request.outputTokens() <= request.maxTokens());
            assertEquals(request.outputTokens() == request.maxTokens() ? "length" : "stop", request.finishReason());
            lengths += "length".equals(request.finishReason()) ? 1 : 0;
            final long[] hashes = PromptBlockHashes.of(prompt, prompt.length, DemoTraceGenerator.BLOCK_SIZE);
            if (hashes.length > 0)
            {
                firstBlockUses.merge(hashes[0], 1, Integer::sum);
            }
            longestPrompt = Math.max(longestPrompt, prompt.length);
            longestOutput = Math.max(longestOutput, request.outputTokens());
        }
        assertTrue(lastArrivalMs > 20_000 && lastArrivalMs < 100_000, "about 4 per second: " + lastArrivalMs);
        assertTrue(firstBlockUses.values().stream().anyMatch(uses -> uses >= 10), "shared system prompts");
        assertTrue(longestPrompt > 8 * 600, "heavy-tailed prompts: max " + longestPrompt);
        assertTrue(longestOutput >= 5 * 150, "heavy-tailed outputs: max " + longestOutput);
        assertTrue(lengths < 20, "few outputs reach max_tokens: " + lengths);
    }

    @Test
    void shouldDrawShortRequestsWhenFast()
    {
        final List<DemoTraceGenerator.DemoRequest> requests =
            DemoTraceGenerator.requests(new DemoTraceGenerator.Options(200, 0, true));
        assertTrue(requests.stream().allMatch(request -> request.maxTokens() == 64 && request.outputTokens() <= 64));
        assertTrue(requests.get(199).arrivalMs() < 20_000, "20 per second: " + requests.get(199).arrivalMs());
        final TraceMeta meta = DemoTraceGenerator.meta(new DemoTraceGenerator.Options(200, 0, true));
        assertEquals("fast", meta.extra().get("gen_demo").get("profile").asText());
        assertEquals("gen-demo", meta.source());
        assertEquals(16L, meta.blockSize());
        assertThrows(IllegalArgumentException.class, () -> new DemoTraceGenerator.Options(0, 0, false));
    }
}
