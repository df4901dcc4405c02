package dev.tapedeck.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.StopReason;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolChoiceAny;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.ToolChoiceOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The other generation APIs vLLM serves on the same port, on real sockets and through their official SDKs:
 * {@code /v1/responses} (OpenAI Java SDK), {@code /v1/messages} (Anthropic Java SDK), and
 * {@code /inference/v1/generate} (token ids in and out). Text, tool calls, streams, limits and errors.
 */
@Timeout(120)
class OtherApisIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CITY_SCHEMA = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}," +
        "\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3}},\"required\":[\"city\",\"days\"]}";
    private static TestServer server;
    private static OpenAIClient openai;
    private static AnthropicClient anthropic;

    @BeforeAll
    static void start() throws Exception
    {
        server = TestServer.start();
        final String base = "http://127.0.0.1:" + server.ports.get(0);
        openai = OpenAIOkHttpClient.builder().baseUrl(base + "/v1").apiKey("none").maxRetries(0).build();
        anthropic = AnthropicOkHttpClient.builder().baseUrl(base).apiKey("none").maxRetries(0).build();
    }

    @AfterAll
    static void stop()
    {
        openai.close();
        anthropic.close();
        server.close();
    }

    @Test
    void shouldAnswerTheResponsesApiWholeAndStreamed()
    {
        final Response cut = openai.responses().create(ResponseCreateParams.builder().model(TestServer.MODEL)
            .instructions("be brief").input("hello").maxOutputTokens(6).build());
        assertEquals(ResponseStatus.INCOMPLETE, cut.status().orElseThrow());
        assertEquals("max_output_tokens", cut.incompleteDetails().orElseThrow().reason().orElseThrow().asString());
        assertEquals(6, cut.usage().orElseThrow().outputTokens());
        assertTrue(cut.id().startsWith("resp_"), cut.id());
        final String whole = cut.output().get(0).asMessage().content().get(0).asOutputText().text();
        assertFalse(whole.isEmpty());

        final StringBuilder deltas = new StringBuilder();
        String completed = null;
        try (StreamResponse<ResponseStreamEvent> stream = openai.responses().createStreaming(ResponseCreateParams
            .builder().model(TestServer.MODEL).input("hello").maxOutputTokens(8).build()))
        {
            for (final ResponseStreamEvent event : (Iterable<ResponseStreamEvent>)stream.stream()::iterator)
            {
                if (event.isOutputTextDelta())
                {
                    deltas.append(event.asOutputTextDelta().delta());
                }
                if (event.isCompleted())
                {
                    completed = event.asCompleted().response().output().get(0).asMessage().content().get(0)
                        .asOutputText().text();
                }
            }
        }
        assertEquals(deltas.toString(), completed, "the completed response repeats the streamed text");
    }

    @Test
    void shouldCallFunctionsThroughTheResponsesApi() throws Exception
    {
        final FunctionTool.Parameters.Builder parameters = FunctionTool.Parameters.builder();
        JSON.readTree(CITY_SCHEMA).properties().forEach(field ->
            parameters.putAdditionalProperty(field.getKey(), JsonValue.from(JSON.convertValue(field.getValue(),
                Object.class))));
        final Response response = openai.responses().create(ResponseCreateParams.builder().model(TestServer.MODEL)
            .input("weather in Oslo for two days?").addTool(FunctionTool.builder().name("forecast")
                .parameters(parameters.build()).strict(false).build())
            .toolChoice(ToolChoiceOptions.REQUIRED).build());
        final ResponseFunctionToolCall call = response.output().get(0).asFunctionCall();
        assertEquals("forecast", call.name());
        final JsonNode arguments = JSON.readTree(call.arguments());
        assertTrue(arguments.get("city").isTextual() && arguments.get("days").asInt() >= 1, call.arguments());
    }

    @Test
    void shouldAnswerAnthropicMessagesWholeStreamedAndWithTools() throws Exception
    {
        final Message message = anthropic.messages().create(MessageCreateParams.builder().model(TestServer.MODEL)
            .maxTokens(5).system("be brief").addUserMessage("hello").build());
        assertEquals(StopReason.MAX_TOKENS, message.stopReason().orElseThrow());
        assertEquals(5, message.usage().outputTokens());
        final java.net.http.HttpResponse<String> counted = server.post("/v1/messages/count_tokens", "{\"model\":\"" +
            TestServer.MODEL + "\",\"system\":\"be brief\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertEquals(200, counted.statusCode(), counted.body());
        assertEquals(message.usage().inputTokens(), JSON.readTree(counted.body()).get("input_tokens").asLong(),
            "count_tokens counts the prompt a message is charged");
        assertFalse(message.content().get(0).asText().text().isEmpty());

        final MessageAccumulator accumulator = MessageAccumulator.create();
        final List<String> types = new ArrayList<>();
        final Tool.InputSchema.Builder schema = Tool.InputSchema.builder();
        final JsonNode citySchema = JSON.readTree(CITY_SCHEMA);
        schema.properties(Tool.InputSchema.Properties.builder().putAdditionalProperty("city",
            com.anthropic.core.JsonValue.from(JSON.convertValue(citySchema.at("/properties/city"), Map.class)))
            .putAdditionalProperty("days", com.anthropic.core.JsonValue.from(JSON.convertValue(
                citySchema.at("/properties/days"), Map.class))).build()).required(List.of("city", "days"));
        try (com.anthropic.core.http.StreamResponse<RawMessageStreamEvent> stream = anthropic.messages()
            .createStreaming(MessageCreateParams.builder().model(TestServer.MODEL).maxTokens(200)
                .addUserMessage("weather?").addTool(Tool.builder().name("forecast").inputSchema(schema.build())
                    .build()).toolChoice(ToolChoiceAny.builder().build()).build()))
        {
            for (final RawMessageStreamEvent event : (Iterable<RawMessageStreamEvent>)stream.stream()::iterator)
            {
                accumulator.accumulate(event);
                types.add(event.isMessageStart() ? "message_start" : event.isMessageStop() ? "message_stop" : "");
            }
        }
        final Message streamed = accumulator.message();
        assertEquals(StopReason.TOOL_USE, streamed.stopReason().orElseThrow());
        final com.anthropic.models.messages.ToolUseBlock use = streamed.content().get(0).asToolUse();
        assertEquals("forecast", use.name());
        final JsonNode input = JSON.readTree(JSON.writeValueAsString(use._input().convert(Map.class)));
        assertTrue(input.get("city").isTextual() && input.get("days").asInt() >= 1, input.toString());
        assertEquals("message_start", types.get(0));
        assertEquals("message_stop", types.get(types.size() - 1));
    }

    @Test
    void shouldAnswerMessagesErrorsInAnthropicsShape() throws Exception
    {
        final java.net.http.HttpResponse<String> unknown = server.post("/v1/messages", "{\"model\":\"nope\"," +
            "\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(404, unknown.statusCode());
        assertEquals("error", JSON.readTree(unknown.body()).get("type").asText());
        assertEquals("NotFoundError", JSON.readTree(unknown.body()).at("/error/type").asText());
        final java.net.http.HttpResponse<String> missing = server.post("/v1/messages", "{\"model\":\"" +
            TestServer.MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertEquals(400, missing.statusCode());
        assertEquals("body.max_tokens", JSON.readTree(missing.body()).at("/error/param").asText(),
            "validation errors keep OpenAI's shape, as FastAPI answers them");
    }

    @Test
    void shouldGenerateTokenIdsFromTokenIds() throws Exception
    {
        final java.net.http.HttpResponse<String> whole = server.post("/inference/v1/generate", "{\"token_ids\":" +
            "[1,2,3,4,5],\"sampling_params\":{\"max_tokens\":7},\"request_id\":\"abc\"}");
        assertEquals(200, whole.statusCode(), whole.body());
        final JsonNode body = JSON.readTree(whole.body());
        assertEquals("generate-tokens-abc", body.get("request_id").asText());
        assertEquals(7, body.at("/choices/0/token_ids").size());
        assertEquals("length", body.at("/choices/0/finish_reason").asText());
        assertTrue(body.has("kv_transfer_params") && body.has("prompt_logprobs"));

        final String stream = server.post("/inference/v1/generate", "{\"token_ids\":[1,2,3],\"stream\":true," +
            "\"stream_options\":{\"include_usage\":true},\"sampling_params\":{\"max_tokens\":4}}").body();
        int ids = 0;
        JsonNode usage = null;
        for (final String line : stream.split("\n"))
        {
            if (line.startsWith("data: {"))
            {
                final JsonNode chunk = JSON.readTree(line.substring(6));
                for (final JsonNode choice : chunk.get("choices"))
                {
                    ids += choice.get("token_ids").size();
                }
                usage = chunk.has("usage") ? chunk.get("usage") : usage;
            }
        }
        assertEquals(4, ids);
        assertEquals(3, usage.get("prompt_tokens").asInt());
        assertTrue(stream.endsWith("data: [DONE]\n\n"));
        assertEquals(400, server.post("/inference/v1/generate", "{\"token_ids\":[]}").statusCode());
        assertEquals(400, server.post("/inference/v1/generate", "{\"sampling_params\":{}}").statusCode());
        assertEquals(400, server.post("/inference/v1/generate", "{\"token_ids\":[-1]}").statusCode());
    }
}
