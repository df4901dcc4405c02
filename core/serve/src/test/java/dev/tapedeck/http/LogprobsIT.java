package dev.tapedeck.http;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionTokenLogprob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Synthetic log-probabilities on a real socket: one entry per generated token whose strings spell the text, the
 * emitted token first and the alternatives sorted with probabilities summing below one, {@code text_offset} adding
 * up, {@code prompt_logprobs} one per prompt token after a null; streamed chunks carry their own tokens' entries;
 * vLLM's refusals. Chat through the official OpenAI SDK.
 */
@Timeout(120)
class LogprobsIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestServer server;
    private static OpenAIClient client;

    @BeforeAll
    static void start() throws Exception
    {
        server = TestServer.start();
        client = OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + server.ports.get(0) + "/v1")
            .apiKey("none").maxRetries(0).build();
    }

    @AfterAll
    static void stop()
    {
        client.close();
        server.close();
    }

    @Test
    void shouldGiveChatLogprobsThatSpellTheTextWithSortedAlternatives()
    {
        final ChatCompletion completion = client.chat().completions().create(ChatCompletionCreateParams.builder()
            .model(TestServer.MODEL).addUserMessage("say something").maxCompletionTokens(24).logprobs(true)
            .topLogprobs(5).build());
        final ChatCompletion.Choice choice = completion.choices().get(0);
        final List<ChatCompletionTokenLogprob> content = choice.logprobs().orElseThrow().content().orElseThrow();
        assertEquals(completion.usage().orElseThrow().completionTokens(), content.size(), "one entry per token");
        final StringBuilder spelled = new StringBuilder();
        for (final ChatCompletionTokenLogprob entry : content)
        {
            spelled.append(entry.token());
            assertEquals(5, entry.topLogprobs().size());
            assertEquals(entry.token(), entry.topLogprobs().get(0).token(), "the emitted token is the top one");
            assertEquals(entry.logprob(), entry.topLogprobs().get(0).logprob());
            double mass = 0;
            double previous = 0;
            for (final ChatCompletionTokenLogprob.TopLogprob top : entry.topLogprobs())
            {
                assertTrue(top.logprob() <= previous, "sorted: " + entry.topLogprobs());
                previous = top.logprob();
                mass += Math.exp(top.logprob());
            }
            assertTrue(mass <= 1.0, "probabilities sum below one: " + mass);
        }
        assertEquals(choice.message().content().orElseThrow(), spelled.toString());
    }

    @Test
    void shouldGiveCompletionLogprobsAndPromptLogprobsInVllmShapes() throws Exception
    {
        final JsonNode body = ok("/v1/completions", "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"the " +
            "quick brown fox\",\"max_tokens\":12,\"logprobs\":3,\"prompt_logprobs\":2}");
        final JsonNode logprobs = body.at("/choices/0/logprobs");
        final int tokens = body.at("/usage/completion_tokens").asInt();
        assertEquals(tokens, logprobs.get("tokens").size());
        assertEquals(tokens, logprobs.get("token_logprobs").size());
        final StringBuilder text = new StringBuilder();
        for (int i = 0; i < tokens; i++)
        {
            assertEquals(text.codePointCount(0, text.length()), logprobs.get("text_offset").get(i).asInt());
            text.append(logprobs.get("tokens").get(i).asText());
            assertEquals(3, logprobs.get("top_logprobs").get(i).size());
        }
        assertEquals(body.at("/choices/0/text").asText(), text.toString());
        final JsonNode prompt = body.at("/choices/0/prompt_logprobs");
        assertEquals(body.at("/usage/prompt_tokens").asInt(), prompt.size());
        assertTrue(prompt.get(0).isNull(), "the first prompt token has none");
        assertEquals(2, prompt.get(1).size());
        assertEquals(1, prompt.get(1).elements().next().get("rank").asInt());

        final JsonNode chat = ok("/v1/chat/completions", "{\"model\":\"" + TestServer.MODEL + "\",\"messages\":[{" +
            "\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2,\"prompt_logprobs\":0}");
        assertEquals(chat.at("/usage/prompt_tokens").asInt(), chat.get("prompt_logprobs").size(),
            "chat: top-level prompt_logprobs");
    }

    @Test
    void shouldStreamEachChunksOwnLogprobs() throws Exception
    {
        final String stream = server.post("/v1/chat/completions", "{\"model\":\"" + TestServer.MODEL + "\"," +
            "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":10,\"stream\":true," +
            "\"logprobs\":true,\"top_logprobs\":1}").body();
        int entries = 0;
        final StringBuilder text = new StringBuilder();
        final StringBuilder spelled = new StringBuilder();
        for (final String line : stream.split("\n"))
        {
            if (!line.startsWith("data: {"))
            {
                continue;
            }
            final JsonNode choice = JSON.readTree(line.substring(6)).at("/choices/0");
            text.append(choice.at("/delta/content").asText(""));
            for (final JsonNode entry : choice.at("/logprobs/content"))
            {
                spelled.append(entry.get("token").asText());
                entries++;
            }
        }
        assertEquals(10, entries);
        assertEquals(text.toString(), spelled.toString());

        // a streamed tool call carries its tokens' logprobs too, one entry per token, the call's wrapper included
        final String call = server.post("/v1/chat/completions", "{\"model\":\"" + TestServer.MODEL + "\"," +
            "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true,\"logprobs\":true," +
            "\"stream_options\":{\"include_usage\":true},\"tools\":[{\"type\":\"function\",\"function\":" +
            "{\"name\":\"f\",\"parameters\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":" +
            "\"string\"}},\"required\":[\"q\"]}}}],\"tool_choice\":\"required\"}").body();
        int callEntries = 0;
        int completion = -1;
        for (final String line : call.split("\n"))
        {
            if (line.startsWith("data: {"))
            {
                final JsonNode chunk = JSON.readTree(line.substring(6));
                callEntries += chunk.at("/choices/0/logprobs/content").size();
                completion = chunk.has("usage") ? chunk.at("/usage/completion_tokens").asInt() : completion;
            }
        }
        assertTrue(call.contains("\"tool_calls\""), call);
        assertEquals(completion, callEntries);
    }

    @Test
    void shouldRefuseWhatVllmRefuses() throws Exception
    {
        final String chat = "{\"model\":\"" + TestServer.MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":" +
            "\"x\"}]";
        assertError("/v1/chat/completions", chat + ",\"top_logprobs\":2}", "`logprobs` must be set to true");
        assertError("/v1/chat/completions", chat + ",\"logprobs\":true,\"top_logprobs\":21}",
            "Requested sample logprobs of 21, which is greater than max allowed: 20");
        assertError("/v1/chat/completions", chat + ",\"logprobs\":true,\"top_logprobs\":-2}",
            "must be a positive value or -1");
        assertError("/v1/chat/completions", chat + ",\"stream\":true,\"prompt_logprobs\":1}",
            "`prompt_logprobs` are not available when `stream=True`.");
        assertError("/v1/completions", "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"x\",\"logprobs\":-3}",
            "`logprobs` must be a positive value or -1.");
    }

    private static void assertError(final String path, final String body, final String message) throws Exception
    {
        final java.net.http.HttpResponse<String> response = server.post(path, body);
        assertEquals(400, response.statusCode(), response.body());
        assertTrue(JSON.readTree(response.body()).at("/error/message").asText().contains(message), response.body());
    }

    private static JsonNode ok(final String path, final String body) throws Exception
    {
        final java.net.http.HttpResponse<String> response = server.post(path, body);
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }
}
