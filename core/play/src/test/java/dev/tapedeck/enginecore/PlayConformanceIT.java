package dev.tapedeck.enginecore;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.StepReplay;
import dev.tapedeck.engine.TokenReplay;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The conformance fidelity of a real capture through {@code play}, as vllm-vcr's runner does it: the gemma-4 tap
 * capture (a fidelity golden of conformance/manifest.toml) replayed with {@code --replay-tokens} and
 * {@code --replay-steps} matched by index behind a ZMQ frontend; request {@code replay-i} (prompt of the recorded
 * length, {@code max_tokens} the recorded count) streams the recorded token ids byte for byte, finishes as recorded,
 * and its outputs are stamped the recorded gaps apart. Records 1 to 3 are replayed (record 0 opens with the capture's
 * 14.6 s cold start).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PlayConformanceIT
{
    @Test
    void shouldStreamTheCapturedTokensTheCapturedGapsApart() throws Exception
    {
        final Path golden = golden("vllm-vcr-fixtures/gemma4_mm_trace.jsonl");
        final TraceReader.Trace trace = TraceReader.readAll(golden);
        final List<TraceRecord> records = new ArrayList<>(trace.records());
        records.removeIf(r -> null == r.arrivalMs());
        records.sort((a, b) -> Double.compare(a.arrivalMs(), b.arrivalMs()));
        Play server = null;
        try (TestFrontend frontend = new TestFrontend(1))
        {
            server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).engineCount(1)
                .vllmLine(VllmLine.V0_23).handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0)
                .engine(new EngineConfig().maxModelLen(4096)
                    .latencyModel(new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test")))
                    .tokenReplay(TokenReplay.read(golden, StepReplay.Match.INDEX))
                    .stepReplay(StepReplay.read(golden, StepReplay.Match.INDEX))));
            frontend.awaitEngines(1);
            for (int i = 1; i < records.size(); i++)
            {
                final TraceRecord recorded = records.get(i);
                final int[] prompt = new int[(int)recorded.promptTokens()];
                Arrays.fill(prompt, 42);
                frontend.add(0, "replay-" + i, prompt, recorded.outputTokenIds().length, 0);
                final List<Integer> tokens = new ArrayList<>();
                final List<Double> stamps = new ArrayList<>();
                Integer finish = null;
                while (null == finish)
                {
                    final TestFrontend.Outputs message = frontend.next(0);
                    assertNotNull(message, "outputs keep coming");
                    for (final TestFrontend.Output output : message.outputs())
                    {
                        output.tokens().forEach(t -> tokens.add(t.intValue()));
                        stamps.add(message.timestamp());
                        finish = output.finishReason();
                    }
                }
                assertArrayEquals(recorded.outputTokenIds(), tokens.stream().mapToInt(Integer::intValue).toArray(),
                    "replay-" + i + ": the captured tokens, byte for byte");
                assertEquals("stop".equals(recorded.finishReason()) ? 0 : 1, finish, "replay-" + i + ": finish");
                final double[] gapsMs = recorded.itlMs();
                assertEquals(gapsMs.length + 1, stamps.size(), "one output per recorded step");
                for (int g = 0; g < gapsMs.length; g++)
                {
                    assertEquals(gapsMs[g], (stamps.get(g + 1) - stamps.get(g)) * 1000, 0.01,
                        "replay-" + i + " gap " + g);
                }
            }
        }
        finally
        {
            if (null != server)
            {
                server.shutdown(0);
            }
        }
    }

    private static Path golden(final String relative)
    {
        Path dir = Path.of("").toAbsolutePath();
        while (null != dir)
        {
            final Path candidate = dir.resolve("traces/data").resolve(relative);
            if (Files.isRegularFile(candidate))
            {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new AssertionError("no " + relative + " under a traces/data above " + Path.of("").toAbsolutePath());
    }
}
