package dev.tapedeck.enginecore;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code play --trace-out --record-tokens}: what the test frontend received over the wire is what the trace says,
 * request by request (token ids, counts, finish reasons, block fingerprints), with timings that follow the step model.
 */
@Timeout(60)
class TraceCapturePlayIT
{
    private static final long STEP_NS = 2_000_000;

    @TempDir
    Path dir;

    @Test
    void shouldRecordEveryRequestAsTheFrontendSawIt() throws Exception
    {
        final Path file = dir.resolve("play.jsonl.gz");
        final long startNs = System.nanoTime();
        final TraceRecorder recorder = TraceRecorder.start(file, new TraceMeta().source("tapedeck-play"), true, 16,
            startNs);
        final EngineConfig config = new EngineConfig().seed(3).maxModelLen(4096).requestObserver(recorder)
            .latencyModel(new StepLatencyModel(new StepCoefficients("test", STEP_NS / 1000.0, 0, 0, 0, 0, "test")))
            .tokenSpace(new int[] {0}, -1).conclude();
        final Map<String, int[]> prompts = new HashMap<>();
        final Map<String, List<Long>> received = new HashMap<>();
        final Map<String, Integer> finishes = new HashMap<>();
        try (TestFrontend frontend = new TestFrontend(1))
        {
            final Play server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress)
                .handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0).engine(config));
            try
            {
                frontend.awaitEngines(1);
                for (int i = 0; i < 12; i++)
                {
                    final int[] prompt = new int[10 + 9 * i];
                    for (int t = 0; t < prompt.length; t++)
                    {
                        prompt[t] = 1000 + (t * 7 + i) % 500;
                    }
                    prompts.put("r" + i, prompt);
                    frontend.add(0, "r" + i, prompt, 5 + i, 0);
                }
                frontend.add(0, "long", new int[] {1, 2, 3}, 3000, 0);
                prompts.put("long", new int[] {1, 2, 3});
                boolean aborted = false;
                while (finishes.size() < prompts.size())
                {
                    final TestFrontend.Outputs message = frontend.next(0);
                    assertNotNull(message, "finished " + finishes.keySet());
                    for (final TestFrontend.Output output : message.outputs())
                    {
                        received.computeIfAbsent(output.requestId(), k -> new ArrayList<>()).addAll(output.tokens());
                        if (null != output.finishReason())
                        {
                            finishes.put(output.requestId(), output.finishReason());
                        }
                    }
                    for (final String id : message.finished())
                    {
                        finishes.putIfAbsent(id, 2); // an abort by the frontend: named in finished_requests
                    }
                    if (!aborted && received.getOrDefault("long", List.of()).size() >= 10)
                    {
                        frontend.abort(0, "long");
                        aborted = true;
                    }
                }
            }
            finally
            {
                server.shutdown(0);
            }
        }
        recorder.close();
        final TraceReader.Trace trace = TraceReader.readAll(file);
        assertTrue(trace.warnings().isEmpty(), trace.warnings().toString());
        assertEquals("tapedeck-play", trace.meta().source());
        assertEquals(prompts.size(), trace.records().size(), "one record per finished request, the aborted one too");
        int matched = 0;
        for (final TraceRecord record : trace.records())
        {
            final String id = idOf(record, prompts, received);
            final int[] prompt = prompts.get(id);
            final List<Long> tokens = received.get(id);
            assertEquals(prompt.length, record.promptTokens(), id);
            assertEquals(tokens.size(), record.outputTokens(), id);
            assertEquals("long".equals(id) ? "abort" : "length", record.finishReason(), id);
            assertArrayEquals(PromptBlockHashes.of(prompt, prompt.length, 16), record.blockHashes(), id);
            assertEquals(tokens.size() - 1, record.itlMs().length, id);
            assertEquals(record.itlMs().length, record.itlContext().numRunning().length);
            for (final double gapMs : record.itlMs())
            {
                assertTrue(gapMs >= STEP_NS / 1e6 - 1e-6, id + ": a gap is at least one step: " + gapMs);
            }
            assertTrue(record.ttftMs() >= STEP_NS / 1e6 - 1e-6, id + " ttft " + record.ttftMs());
            assertTrue(record.arrivalMs() >= 0 && record.concurrency() >= 1, id);
            matched++;
        }
        assertEquals(prompts.size(), matched);
    }

    /**
     * Find the request a record belongs to by its recorded token ids (the test frontend saw the same ids).
     */
    private static String idOf(final TraceRecord record, final Map<String, int[]> prompts,
        final Map<String, List<Long>> received)
    {
        for (final Map.Entry<String, List<Long>> entry : received.entrySet())
        {
            final List<Long> tokens = entry.getValue();
            final int[] ids = record.outputTokenIds();
            if (prompts.get(entry.getKey()).length == record.promptTokens() && tokens.size() == ids.length)
            {
                boolean same = true;
                for (int i = 0; i < ids.length && same; i++)
                {
                    same = tokens.get(i) == ids[i];
                }
                if (same)
                {
                    return entry.getKey();
                }
            }
        }
        throw new AssertionError("no request produced the recorded tokens of a " + record.promptTokens() +
            "-token prompt");
    }
}
