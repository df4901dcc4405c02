package dev.tapedeck.http;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.engine.SpeculativeDecoding;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve} with speculative decoding over loopback: a streamed completion arrives in one SSE event per decode
 * step carrying the step's whole burst, and {@code /metrics} has vLLM's {@code vllm:spec_decode_*} counters.
 */
@Timeout(60)
@ExtendWith(NoNettyLeaks.class)
class SpecDecodeServeIT
{
    private static final String LABELS = "{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}";

    @Test
    void shouldStreamBurstsAndExposeSpecDecodeCounters() throws Exception
    {
        try (TestServer server = new TestServer(TestServer.context().mode(ServeOptions.Mode.ECHO),
            c -> c.latencyModel(new StepLatencyModel(new StepCoefficients("50ms", 50_000, 0, 0, 0, 0, "test")))
                .speculativeDecoding(SpeculativeDecoding.of(3, new double[] {1.0}))))
        {
            // echo: the output is the prompt again, 20 one-letter tokens
            final String prompt = "a b c d e f g h i j k l m n o p q r s t";
            final HttpResponse<String> response = server.post("/v1/completions", "{\"prompt\":\"" + prompt +
                "\",\"max_tokens\":20,\"stream\":true}");
            assertEquals(200, response.statusCode());
            final Sse.Stream stream = Sse.parse(response.body());
            final List<Integer> lettersPerEvent = new ArrayList<>();
            final StringBuilder all = new StringBuilder();
            for (final JsonNode event : stream.events())
            {
                final JsonNode choices = event.get("choices");
                if (null == choices || choices.isEmpty() || choices.get(0).path("text").asText().isEmpty())
                {
                    continue;
                }
                final String text = choices.get(0).get("text").asText();
                all.append(text);
                lettersPerEvent.add(text.replace(" ", "").length());
            }
            assertEquals(prompt, all.toString().trim());
            // the first token, then K + 1 = 4 per step: [1, 4, 4, 4, 4, 3]; an event loop that runs late by a whole
            // step flushes two steps in one event, so the check is that every event ends on a step boundary
            final List<Integer> ends = new ArrayList<>();
            int sum = 0;
            for (final int letters : lettersPerEvent)
            {
                sum += letters;
                ends.add(sum);
            }
            assertTrue(List.of(1, 5, 9, 13, 17, 20).containsAll(ends), "events end on step boundaries: " +
                lettersPerEvent);
            assertTrue(lettersPerEvent.size() >= 3 && 1 == lettersPerEvent.get(0), "bursts: " + lettersPerEvent);
            final String metrics = server.get("/metrics").body();
            final Map<String, ExpositionParser.Family> families = ExpositionParser.parse(metrics);
            assertEquals("counter", families.get("vllm:spec_decode_num_drafts_total").type());
            assertEquals(5.0, server.metric("vllm:spec_decode_num_drafts_total" + LABELS));
            assertEquals(15.0, server.metric("vllm:spec_decode_num_draft_tokens_total" + LABELS));
            assertEquals(15.0, server.metric("vllm:spec_decode_num_accepted_tokens_total" + LABELS));
            for (int p = 0; p < 3; p++)
            {
                assertEquals(5.0, server.metric("vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\"," +
                    "model_name=\"Qwen/Qwen3-8B\",position=\"" + p + "\"}"), "position " + p);
            }
            assertEquals(20.0, server.metric("vllm:generation_tokens_total" + LABELS));
            assertTrue(metrics.contains("vllm:spec_decode_num_drafts_created"), "a _created gauge, as vLLM");
        }
    }

    @Test
    void shouldNotExposeSpecDecodeCountersWithoutSpeculativeDecoding() throws Exception
    {
        try (TestServer server = TestServer.start())
        {
            assertTrue(!server.get("/metrics").body().contains("spec_decode"), "vLLM has none without the config");
        }
    }
}
