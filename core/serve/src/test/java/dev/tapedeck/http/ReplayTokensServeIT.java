package dev.tapedeck.http;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.tapedeck.engine.TokenReplay;
import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;
import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * {@code serve --replay-tokens} over loopback: a prompt that was recorded gets the recorded answer back as text
 * (detokenized by the server's tokenizer), streamed or not; another prompt gets ordinary output.
 */
@Timeout(60)
@ExtendWith(NoNettyLeaks.class)
class ReplayTokensServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "Tell me, in one sentence, why the sky above the open sea looks blue on a " +
        "clear summer afternoon.";
    private static final String ANSWER = " Sunlight scatters off air molecules, and blue light scatters the most.";

    @Test
    void shouldAnswerARecordedPromptWithTheRecordedText() throws Exception
    {
        final int[] prompt = TestServer.tokenizer().encode(PROMPT);
        final int[] answer = TestServer.tokenizer().encode(ANSWER);
        final TraceRecord recorded = new TraceRecord().promptTokens(prompt.length).outputTokens(answer.length)
            .ttftMs(20).itlMs(new double[answer.length - 1]).arrivalMs(0.0)
            .blockHashes(PromptBlockHashes.of(prompt, prompt.length, 16)).outputTokenIds(answer).finishReason("stop");
        try (TestServer server = new TestServer(TestServer.context(),
            c -> c.tokenReplay(TokenReplay.of(List.of(recorded), 16, "test"))))
        {
            final JsonNode full = JSON.readTree(server.post("/v1/completions", "{\"prompt\":\"" + PROMPT +
                "\",\"max_tokens\":100}").body());
            assertEquals(ANSWER, full.at("/choices/0/text").asText());
            assertEquals("stop", full.at("/choices/0/finish_reason").asText());
            assertEquals(answer.length, full.at("/usage/completion_tokens").asInt());
            final Sse.Stream stream = Sse.parse(server.post("/v1/completions", "{\"prompt\":\"" + PROMPT +
                "\",\"max_tokens\":100,\"stream\":true}").body());
            assertEquals(ANSWER, stream.text(0), "the same prompt again: the recording again");
            final JsonNode other = JSON.readTree(server.post("/v1/completions", "{\"prompt\":\"" + PROMPT +
                " Please.\",\"max_tokens\":5}").body());
            assertNotEquals(ANSWER, other.at("/choices/0/text").asText());
            assertEquals("length", other.at("/choices/0/finish_reason").asText());
        }
    }
}
