package dev.tapedeck.http;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --trace-out}: every answered request is a record whose token counts equal the usage the client got.
 */
@Timeout(60)
class TraceCaptureServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void shouldRecordWhatEachClientWasServed() throws Exception
    {
        final Path file = dir.resolve("serve.jsonl");
        final TraceRecorder recorder = TraceRecorder.start(file, new TraceMeta().source("tapedeck-serve"), false, 16,
            System.nanoTime());
        final List<String> usage = new ArrayList<>();
        final double prefixHits;
        try (TestServer server = new TestServer(TestServer.context(), c -> c.requestObserver(recorder)))
        {
            for (int i = 0; i < 6; i++)
            {
                final JsonNode body = JSON.readTree(server.post("/v1/completions", "{\"prompt\":\"" +
                    "tell me a story about the number ".repeat(i + 1) + i + "\",\"max_tokens\":" + (3 + i) + "}")
                    .body());
                final JsonNode u = body.get("usage");
                usage.add(u.get("prompt_tokens").asInt() + "/" + u.get("completion_tokens").asInt() + "/" +
                    body.get("choices").get(0).get("finish_reason").asText());
            }
            prefixHits = server.metric("vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"Qwen/Qwen3-8B\"}");
        }
        recorder.close();
        final TraceReader.Trace trace = TraceReader.readAll(file);
        final List<String> recorded = new ArrayList<>();
        long cachedTokens = 0;
        for (final TraceRecord record : trace.records())
        {
            recorded.add(record.promptTokens() + "/" + record.outputTokens() + "/" + record.finishReason());
            assertEquals(record.outputTokens() - 1, record.itlMs().length);
            assertTrue(record.ttftMs() > 0);
            assertEquals(0, record.cachedTokens() % 16, "whole blocks");
            assertTrue(record.cachedTokens() < record.promptTokens());
            cachedTokens += record.cachedTokens();
            assertEquals(record.promptTokens() / 16, null == record.blockHashes() ? 0 : record.blockHashes().length);
        }
        assertEquals(usage, recorded, "sequential requests finish in order");
        // each prompt starts with the previous one: the capture records the engine's prefix-cache hits
        assertEquals(0, trace.records().get(0).cachedTokens());
        assertTrue(cachedTokens > 0);
        assertEquals(prefixHits, cachedTokens, "the capture's cached tokens are the engine's hits");
        for (int i = 1; i < trace.records().size(); i++)
        {
            assertTrue(trace.records().get(i).arrivalMs() > trace.records().get(i - 1).arrivalMs());
        }
    }
}
