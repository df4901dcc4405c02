package dev.tapedeck.system;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.enginecore.TestFrontend;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.record.RecordContext;
import dev.tapedeck.record.RecordingTap;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceValidation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code record} between the spec-written test frontend and {@code play} (every socket real, loopback TCP): the
 * frontend is served through the tap as if it talked to the engine, and the trace says what was served. Lives in
 * this package to use {@link TestFrontend}.
 */
@Timeout(120)
class RecordPlayIT
{
    private static final LatencyModel FAST =
        new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test"));
    private static final double SLACK_MS = 1e-6;

    /** What the frontend saw of one request. */
    private static final class Seen
    {
        long sentNs;
        long firstNs;
        long lastNs;
        int tokens;
        int messagesWithTokens;
        Integer finish;
    }

    @TempDir
    Path dir;

    private TestFrontend frontend;
    private RecordingTap tap;
    private Play server;

    @AfterEach
    void stop() throws InterruptedException
    {
        if (null != tap)
        {
            tap.stop();
            tap.awaitEnd(20_000);
        }
        if (null != server)
        {
            server.shutdown(0);
        }
        if (null != frontend)
        {
            frontend.close();
        }
    }

    private static int[] prompt(final int length)
    {
        final int[] prompt = new int[length];
        for (int i = 0; i < length; i++)
        {
            prompt[i] = 200 + i;
        }
        return prompt;
    }

    @Test
    void shouldRecordWhatPlayServedThroughTheTap() throws Exception
    {
        frontend = new TestFrontend(1);
        final Path trace = dir.resolve("capture.jsonl.gz");
        tap = RecordingTap.start(new RecordContext().frontendHandshake(frontend.handshakeAddress).traceOut(trace)
            .model("Qwen/Qwen3-8B").handshakeTimeoutNs(20_000_000_000L));
        server = Play.start(new PlayContext().handshakeAddress(tap.engineHandshakeEndpoint())
            .handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0)
            .engine(new EngineConfig().maxModelLen(4096).latencyModel(FAST)));
        frontend.awaitEngines(1);
        assertTrue(tap.awaitRelaying(20_000), "relaying: " + tap.failure());
        assertEquals("0.28.0", TestFrontend.get(frontend.registrations.get(0), "vllm_version").asStringValue()
            .asString(), "play's registration reached the frontend through the tap");

        frontend.utility(0, 0x8000000000000001L, "get_supported_tasks");
        final TestFrontend.Outputs reply = frontend.next(0);
        assertNotNull(reply, "the utility reply came back through the tap");
        assertEquals("[\"generate\"]", reply.utility().asArrayValue().get(2).asArrayValue().get(1).toString());

        final int requests = 5;
        final Map<String, Seen> seen = new HashMap<>();
        final List<String> ids = new ArrayList<>();
        for (int i = 0; i < requests; i++)
        {
            final String id = "r" + i;
            final int[] prompt = prompt(17 + 8 * i);
            final Seen s = new Seen();
            seen.put(id, s);
            ids.add(id);
            s.sentNs = System.nanoTime();
            // r1 may stop on a stop token drawn from its prompt; the others run to max_tokens
            frontend.send(0, 0, (byte)0, TestFrontend.addPayload(id, prompt, 20 + i, 0,
                1 == i ? new int[] {prompt[0], prompt[1]} : new int[0], false));
        }
        frontend.add(0, "doomed", prompt(9), 3000, 0);
        boolean doomedAborted = false;
        boolean doomedFinished = false;
        int finished = 0;
        while (finished < requests || !doomedFinished)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "outputs keep coming through the tap");
            final long atNs = System.nanoTime();
            for (final TestFrontend.Output output : message.outputs())
            {
                final Seen s = seen.get(output.requestId());
                if (null == s)
                {
                    if (!doomedAborted && !output.tokens().isEmpty())
                    {
                        frontend.abort(0, "doomed");
                        doomedAborted = true;
                    }
                    continue;
                }
                if (!output.tokens().isEmpty())
                {
                    s.firstNs = 0 == s.firstNs ? atNs : s.firstNs;
                    s.lastNs = atNs;
                    s.tokens += output.tokens().size();
                    s.messagesWithTokens++;
                }
                if (null != output.finishReason())
                {
                    s.finish = output.finishReason();
                    finished++;
                }
            }
            doomedFinished |= message.finished().contains("doomed");
        }
        tap.stop();
        assertTrue(tap.awaitEnd(20_000));

        assertRecorded(TraceReader.readAll(trace), seen, ids);
    }

    private static void assertRecorded(final TraceReader.Trace captured, final Map<String, Seen> seen,
        final List<String> ids)
    {
        final int requests = ids.size();
        assertTrue(captured.warnings().isEmpty(), captured.warnings().toString());
        assertEquals(requests, captured.records().size(), "every finished request, not the aborted one");
        assertEquals("tap", captured.meta().source());
        assertEquals("0.28.0", captured.meta().vllmVersion());
        final Map<Long, TraceRecord> byPrompt = new HashMap<>();
        captured.records().forEach(r -> byPrompt.put(r.promptTokens(), r));
        double previousArrivalMs = -1;
        for (int i = 0; i < requests; i++)
        {
            final Seen s = seen.get(ids.get(i));
            final TraceRecord r = byPrompt.get(17L + 8 * i);
            assertNotNull(r, "record of " + ids.get(i));
            assertTrue(TraceValidation.problems(r).isEmpty(), TraceValidation.problems(r).toString());
            assertEquals(s.tokens, r.outputTokens(), ids.get(i) + ": output tokens");
            assertEquals(0 == s.finish ? "stop" : "length", r.finishReason(), ids.get(i));
            assertEquals(i + 1, r.concurrency(), "requests in flight at arrival, this one included");
            assertTrue(r.arrivalMs() >= previousArrivalMs, "arrivals in sending order");
            previousArrivalMs = r.arrivalMs();
            // every prompt extends the previous one (ids 200, 201, ...): request i hits the full blocks the previous
            // (shorter) prompt cached, leaving its own last token to compute
            final long expectedCached = 0 == i ? 0 : 16L * Math.min((9 + 8 * i) / 16, (16 + 8 * i) / 16);
            assertEquals(expectedCached, r.cachedTokens(), ids.get(i) + ": cached tokens");
            assertEquals((17 + 8 * i) / 16, r.blockHashes().length);
            assertNull(r.outputTokenIds());
            assertTrue(r.ttftMs() > 0, "ttft");
            assertTrue(r.ttftMs() <= (s.firstNs - s.sentNs) / 1e6 + SLACK_MS, ids.get(i) + ": the tap saw the " +
                "arrival after the frontend sent it and the first token before the frontend got it");
            assertEquals(s.messagesWithTokens - 1, r.itlMs().length, "one gap per later chunk");
            final double spanMs = r.ttftMs() + Arrays.stream(r.itlMs()).sum();
            assertTrue(spanMs <= (s.lastNs - s.sentNs) / 1e6 + SLACK_MS, ids.get(i) + ": arrival to last chunk");
            assertTrue(Arrays.stream(r.itlMs()).allMatch(gap -> gap >= 0), "gaps");
            assertTrue(Arrays.stream(r.itlContext().numRunning()).allMatch(n -> n >= 1 && n <= requests + 1),
                "running counts from play's scheduler_stats");
        }
    }
}
