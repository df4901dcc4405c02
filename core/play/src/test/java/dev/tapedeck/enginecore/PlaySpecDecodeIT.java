package dev.tapedeck.enginecore;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.SpeculativeDecoding;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.VllmLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * {@code play} with speculative decoding, over loopback TCP: each decode step's output carries its whole burst, and
 * the scheduler stats carry vLLM's {@code spec_decoding_stats} for the steps that verified drafts.
 */
@Timeout(60)
class PlaySpecDecodeIT
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
    void shouldSendBurstsAndSpecDecodingStats() throws Exception
    {
        frontend = new TestFrontend(1);
        server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).engineCount(1)
            .vllmLine(VllmLine.NEWEST).handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0)
            .engine(new EngineConfig().maxModelLen(4096)
                .latencyModel(new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test")))
                .speculativeDecoding(SpeculativeDecoding.of(3, new double[] {1.0}))));
        frontend.awaitEngines(1);
        frontend.add(0, "spec", new int[] {101, 102, 103, 104, 105, 106, 107, 108}, 20, 0);
        final List<Integer> perOutput = new ArrayList<>();
        long drafts = 0;
        long draftTokens = 0;
        long accepted = 0;
        final long[] perPosition = new long[3];
        Integer finish = null;
        while (null == finish)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "outputs keep coming");
            final Value spec = TestFrontend.get(message.stats(), "spec_decoding_stats");
            if (null != spec)
            {
                final MapValue map = spec.asMapValue();
                assertEquals(3, TestFrontend.get(map, "num_spec_tokens").asIntegerValue().toInt());
                drafts += TestFrontend.get(map, "num_drafts").asIntegerValue().toLong();
                draftTokens += TestFrontend.get(map, "num_draft_tokens").asIntegerValue().toLong();
                accepted += TestFrontend.get(map, "num_accepted_tokens").asIntegerValue().toLong();
                final List<Value> positions = TestFrontend.get(map, "num_accepted_tokens_per_pos").asArrayValue()
                    .list();
                assertEquals(3, positions.size());
                for (int p = 0; p < 3; p++)
                {
                    perPosition[p] += positions.get(p).asIntegerValue().toLong();
                }
            }
            for (final TestFrontend.Output output : message.outputs())
            {
                if (perOutput.isEmpty())
                {
                    assertNull(spec, "the prefill step drafted nothing: no spec_decoding_stats");
                }
                perOutput.add(output.tokens().size());
                finish = output.finishReason();
            }
        }
        assertEquals(List.of(1, 4, 4, 4, 4, 3), perOutput, "one token, then K + 1 per step, cut at max_tokens 20");
        assertEquals(1, finish, "LENGTH");
        assertEquals(5, drafts);
        assertEquals(15, draftTokens);
        assertEquals(15, accepted);
        assertEquals(List.of(5L, 5L, 5L), List.of(perPosition[0], perPosition[1], perPosition[2]));
    }
}
