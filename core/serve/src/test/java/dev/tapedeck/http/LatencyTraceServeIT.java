package dev.tapedeck.http;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.latency.TraceLatencyModel;
import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --latency-trace} over loopback: a trace file whose requests decoded in bursts of 1 or 3 tokens (K = 2)
 * gives streams in bursts of 1 or 3 and vLLM's spec-decode counters with positions 0 and 1.
 */
@Timeout(60)
@ExtendWith(NoNettyLeaks.class)
class LatencyTraceServeIT
{
    private static final String LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";

    @TempDir
    Path dir;

    @Test
    void shouldStreamTheTracesBurstsAndCountTheirDrafts() throws Exception
    {
        final List<String> lines = new ArrayList<>();
        lines.add("{\"meta\":{\"source\":\"test\"}}");
        for (int u = 10; u <= 2000; u += 10)
        {
            lines.add("{\"prompt_tokens\":" + u + ",\"output_tokens\":9,\"ttft_ms\":" + (20 + 0.01 * u) +
                ",\"itl_ms\":[30,32,31,30],\"itl_tokens\":[1,3,1,3],\"concurrency\":1,\"arrival_ms\":" + u + "}");
        }
        final Path trace = dir.resolve("trace.jsonl");
        Files.write(trace, lines);
        try (TestServer server = new TestServer(TestServer.context().mode(ServeOptions.Mode.ECHO),
            c -> c.latencyModel(readModel(trace))))
        {
            final String prompt = "a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n";
            final Sse.Stream stream = Sse.parse(server.post("/v1/completions", "{\"prompt\":\"" + prompt +
                "\",\"max_tokens\":40,\"stream\":true}").body());
            final List<Integer> perEvent = new ArrayList<>();
            for (final JsonNode event : stream.events())
            {
                final String text = event.path("choices").path(0).path("text").asText("");
                if (!text.isEmpty())
                {
                    perEvent.add(text.replace(" ", "").length());
                }
            }
            assertEquals(40, perEvent.stream().mapToInt(Integer::intValue).sum());
            assertTrue(perEvent.contains(3), "bursts of 3 from the trace: " + perEvent);
            final double drafts = server.metric("vllm:spec_decode_num_drafts_total" + LABELS);
            assertTrue(drafts >= perEvent.size() - 1, "a draft per decode step: " + drafts + " for " + perEvent);
            assertEquals(2.0 * drafts, server.metric("vllm:spec_decode_num_draft_tokens_total" + LABELS), "K = 2");
            assertTrue(server.metric("vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\"," +
                "model_name=\"Qwen/Qwen3-8B\",position=\"1\"}") > 0, "3-token bursts accepted both drafts");
        }
    }

    private static TraceLatencyModel readModel(final Path trace)
    {
        try
        {
            return TraceLatencyModel.read(List.of(trace), 8192);
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
