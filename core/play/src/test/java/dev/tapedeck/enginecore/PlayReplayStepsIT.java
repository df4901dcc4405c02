package dev.tapedeck.enginecore;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.value.Value;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.StepReplay;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * {@code play --replay-steps} over loopback TCP: a recorded request's outputs carry the recorded bursts, stamped the
 * recorded gaps apart (engine time, the messages' timestamps), with spec-decoding stats for K = max(itl_tokens) - 1.
 */
@Timeout(60)
class PlayReplayStepsIT
{
    private TestFrontend frontend;
    private Play server;

    @AfterEach
    void stop()
    {
        if (null != server)
        {
            server.shutdown(0);
        }
        if (null != frontend)
        {
            frontend.close();
        }
    }

    @Test
    void shouldSendTheRecordedBurstsTheRecordedGapsApart() throws Exception
    {
        final int[] prompt = new int[48];
        for (int i = 0; i < prompt.length; i++)
        {
            prompt[i] = 300 + i;
        }
        final TraceRecord recorded = new TraceRecord().promptTokens(prompt.length).outputTokens(10).ttftMs(40)
            .itlMs(new double[] {21.5, 9.25, 40.0}).itlTokens(new int[] {3, 1, 4}).arrivalMs(0.0)
            .blockHashes(PromptBlockHashes.of(prompt, prompt.length, 16)).finishReason("stop");
        frontend = new TestFrontend(1);
        server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).engineCount(1)
            .vllmLine(VllmLine.NEWEST).handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0)
            .engine(new EngineConfig().maxModelLen(4096)
                .latencyModel(new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test")))
                .stepReplay(StepReplay.of(List.of(recorded), StepReplay.Match.PREFIX, 16, "test"))));
        frontend.awaitEngines(1);
        frontend.add(0, "replayed", prompt, 100, 0);
        final List<Integer> perOutput = new ArrayList<>();
        final List<Double> stamps = new ArrayList<>();
        long drafts = 0;
        long accepted = 0;
        Integer finish = null;
        while (null == finish)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "outputs keep coming");
            final Value spec = TestFrontend.get(message.stats(), "spec_decoding_stats");
            if (null != spec)
            {
                assertEquals(3, TestFrontend.get(spec.asMapValue(), "num_spec_tokens").asIntegerValue().toInt());
                drafts += TestFrontend.get(spec.asMapValue(), "num_drafts").asIntegerValue().toLong();
                accepted += TestFrontend.get(spec.asMapValue(), "num_accepted_tokens").asIntegerValue().toLong();
            }
            for (final TestFrontend.Output output : message.outputs())
            {
                perOutput.add(output.tokens().size());
                stamps.add(message.timestamp());
                finish = output.finishReason();
            }
        }
        assertEquals(List.of(2, 3, 1, 4), perOutput, "first chunk 10 - 8 = 2, then the recorded bursts");
        assertEquals(0, finish, "STOP, as recorded");
        final double[] expectedMs = {21.5, 9.25, 40.0};
        for (int i = 0; i < 3; i++)
        {
            assertEquals(expectedMs[i], (stamps.get(i + 1) - stamps.get(i)) * 1000, 1e-3, "gap " + i);
        }
        assertEquals(3, drafts);
        assertEquals(2 + 0 + 3, accepted);
    }
}
