package dev.tapedeck.http;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ResponseFormatJsonSchema;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionNamedToolChoice;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tool calling and structured outputs on a real socket, driven by the official OpenAI Java SDK: every call's
 * arguments and every {@code json_schema} answer validate against their schema (networknt's validator), streamed
 * calls reassemble (the SDK's accumulator) into the same shape, the finish reasons are vLLM's, and the errors are
 * vLLM's.
 */
@Timeout(120)
class ToolCallingIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final com.fasterxml.jackson.core.type.TypeReference<Map<String, Object>> MAP =
        new com.fasterxml.jackson.core.type.TypeReference<>()
        {
        };
    private static final String WEATHER_SCHEMA = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":" +
        "\"string\"},\"unit\":{\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\"]},\"days\":{\"type\":" +
        "\"integer\",\"minimum\":1,\"maximum\":7}},\"required\":[\"city\",\"unit\"],\"additionalProperties\":false}";
    private static final String SEARCH_SCHEMA = "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":" +
        "\"string\",\"minLength\":3},\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":50}},\"required\":" +
        "[\"query\"]}";
    private static final SchemaRegistry REGISTRY =
        SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

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

    private static FunctionDefinition function(final String name, final String schema) throws Exception
    {
        final Map<String, Object> parameters = JSON.readValue(schema, MAP);
        final FunctionParameters.Builder builder = FunctionParameters.builder();
        parameters.forEach((key, value) -> builder.putAdditionalProperty(key, JsonValue.from(value)));
        return FunctionDefinition.builder().name(name).description("a tool").parameters(builder.build()).build();
    }

    private static ChatCompletionCreateParams.Builder withTools() throws Exception
    {
        return ChatCompletionCreateParams.builder().model(TestServer.MODEL)
            .addUserMessage("What is the weather in Paris, and what does the web say about it?")
            .addFunctionTool(function("get_weather", WEATHER_SCHEMA))
            .addFunctionTool(function("search", SEARCH_SCHEMA));
    }

    private static void assertValid(final ChatCompletionMessageFunctionToolCall call)
    {
        final String schema = "get_weather".equals(call.function().name()) ? WEATHER_SCHEMA : SEARCH_SCHEMA;
        final Schema validator = REGISTRY.getSchema(schema, InputFormat.JSON);
        assertTrue(validator.validate(call.function().arguments(), InputFormat.JSON).isEmpty(),
            call.function().name() + " " + call.function().arguments());
        assertTrue(call.id().matches("chatcmpl-tool-[0-9a-f]{32}"), call.id());
    }

    @Test
    void shouldCallTheNamedFunctionWithArgumentsThatValidate() throws Exception
    {
        for (int i = 0; i < 10; i++)
        {
            final ChatCompletion completion = client.chat().completions().create(withTools()
                .toolChoice(ChatCompletionToolChoiceOption.ofNamedToolChoice(ChatCompletionNamedToolChoice.builder()
                    .function(ChatCompletionNamedToolChoice.Function.builder().name("search").build()).build()))
                .build());
            final ChatCompletion.Choice choice = completion.choices().get(0);
            final List<com.openai.models.chat.completions.ChatCompletionMessageToolCall> calls =
                choice.message().toolCalls().orElseThrow();
            assertEquals(1, calls.size());
            assertEquals("search", calls.get(0).asFunction().function().name());
            assertValid(calls.get(0).asFunction());
            assertEquals(ChatCompletion.Choice.FinishReason.STOP, choice.finishReason(), "named: stop, as OpenAI");
            assertEquals("", choice.message().content().orElseThrow(), "named: content is empty, not null");
            assertTrue(completion.usage().orElseThrow().completionTokens() > 3);
        }
    }

    @Test
    void shouldCallAToolWhenRequiredOrAutoAndAnswerInTextAfterItsResult() throws Exception
    {
        for (final ChatCompletionToolChoiceOption.Auto mode : List.of(ChatCompletionToolChoiceOption.Auto.REQUIRED,
            ChatCompletionToolChoiceOption.Auto.AUTO))
        {
            for (int i = 0; i < 10; i++)
            {
                final ChatCompletion.Choice choice = client.chat().completions().create(withTools().toolChoice(mode)
                    .build()).choices().get(0);
                assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, choice.finishReason(), mode.toString());
                assertValid(choice.message().toolCalls().orElseThrow().get(0).asFunction());
            }
        }
        final ChatCompletion.Choice call = client.chat().completions().create(withTools().build()).choices().get(0);
        final ChatCompletionMessageFunctionToolCall toolCall = call.message().toolCalls().orElseThrow().get(0)
            .asFunction();
        final ChatCompletion answer = client.chat().completions().create(withTools()
            .addMessage(call.message())
            .addMessage(ChatCompletionToolMessageParam.builder().toolCallId(toolCall.id()).content("21 degrees")
                .build())
            .maxCompletionTokens(12).build());
        assertFalse(answer.choices().get(0).message().toolCalls().map(l -> !l.isEmpty()).orElse(false),
            "after the tool's result, the model answers in text");
        assertFalse(answer.choices().get(0).message().content().orElse("").isEmpty());
        final ChatCompletion none = client.chat().completions().create(withTools()
            .toolChoice(ChatCompletionToolChoiceOption.Auto.NONE).maxCompletionTokens(8).build());
        assertEquals(ChatCompletion.Choice.FinishReason.LENGTH, none.choices().get(0).finishReason(), "none: text");
    }

    @Test
    void shouldStreamToolCallsThatReassembleAsTheSdkExpects() throws Exception
    {
        for (final ChatCompletionToolChoiceOption.Auto mode : List.of(ChatCompletionToolChoiceOption.Auto.REQUIRED,
            ChatCompletionToolChoiceOption.Auto.AUTO))
        {
            final ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
            int argumentChunks = 0;
            try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(
                withTools().toolChoice(mode).build()))
            {
                for (final ChatCompletionChunk chunk : (Iterable<ChatCompletionChunk>)stream.stream()::iterator)
                {
                    accumulator.accumulate(chunk);
                    final boolean arguments = chunk.choices().stream().anyMatch(c -> c.delta().toolCalls()
                        .map(calls -> calls.stream().anyMatch(t -> t.function().flatMap(f -> f.arguments())
                            .map(a -> !a.isEmpty()).orElse(false))).orElse(false));
                    argumentChunks += arguments ? 1 : 0;
                }
            }
            final ChatCompletion.Choice choice = accumulator.chatCompletion().choices().get(0);
            // how many pieces depends on how fast the client reads (a reader behind the engine gets the tokens it
            // missed merged into one delta, as from vLLM); that they come as argument deltas does not
            assertTrue(argumentChunks >= 1, "the arguments stream as deltas of the call: " + argumentChunks);
            assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, choice.finishReason());
            assertValid(choice.message().toolCalls().orElseThrow().get(0).asFunction());
        }
    }

    @Test
    void shouldAnswerJsonThatValidatesAgainstTheResponseFormatSchema() throws Exception
    {
        final Map<String, Object> schemaMap = JSON.readValue(WEATHER_SCHEMA, MAP);
        final ResponseFormatJsonSchema.JsonSchema.Schema.Builder schema =
            ResponseFormatJsonSchema.JsonSchema.Schema.builder();
        schemaMap.forEach((key, value) -> schema.putAdditionalProperty(key, JsonValue.from(value)));
        final Schema validator = REGISTRY.getSchema(WEATHER_SCHEMA, InputFormat.JSON);
        for (int i = 0; i < 10; i++)
        {
            final ChatCompletion.Choice choice = client.chat().completions().create(ChatCompletionCreateParams
                .builder().model(TestServer.MODEL).addUserMessage("the weather, as JSON")
                .responseFormat(ResponseFormatJsonSchema.builder().jsonSchema(ResponseFormatJsonSchema.JsonSchema
                    .builder().name("weather").schema(schema.build()).strict(true).build()).build())
                .build()).choices().get(0);
            final String content = choice.message().content().orElseThrow();
            assertTrue(validator.validate(content, InputFormat.JSON).isEmpty(), content);
            assertEquals(ChatCompletion.Choice.FinishReason.STOP, choice.finishReason());
        }
    }

    @Test
    void shouldHonourStructuredOutputsChoiceRegexAndJsonObjectOnBothEndpoints() throws Exception
    {
        final JsonNode chosen = ok("/v1/chat/completions", "{\"model\":\"" + TestServer.MODEL + "\",\"messages\":" +
            "[{\"role\":\"user\",\"content\":\"pick\"}],\"structured_outputs\":{\"choice\":[\"red\",\"green\"]}}");
        assertTrue(List.of("red", "green").contains(chosen.at("/choices/0/message/content").asText()));
        final JsonNode matched = ok("/v1/completions", "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":" +
            "\"a phone number:\",\"max_tokens\":50,\"structured_outputs\":{\"regex\":\"\\\\d{3}-\\\\d{4}\"}}");
        assertTrue(matched.at("/choices/0/text").asText().matches("\\d{3}-\\d{4}"), matched.toString());
        final JsonNode object = ok("/v1/completions", "{\"model\":\"" + TestServer.MODEL + "\",\"prompt\":\"{\"," +
            "\"max_tokens\":200,\"response_format\":{\"type\":\"json_object\"}}");
        assertTrue(JSON.readTree(object.at("/choices/0/text").asText()).isObject(), object.toString());
        final JsonNode cut = ok("/v1/chat/completions", "{\"model\":\"" + TestServer.MODEL + "\",\"messages\":" +
            "[{\"role\":\"user\",\"content\":\"go\"}],\"max_tokens\":3,\"tools\":[{\"type\":\"function\"," +
            "\"function\":{\"name\":\"search\",\"parameters\":" + SEARCH_SCHEMA + "}}],\"tool_choice\":\"required\"}");
        assertEquals("length", cut.at("/choices/0/finish_reason").asText(), "a call cut short is no call");
        assertEquals(0, cut.at("/choices/0/message/tool_calls").size());
    }

    @Test
    void shouldRefuseMalformedToolRequestsAsVllmDoes() throws Exception
    {
        final String base = "{\"model\":\"" + TestServer.MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":" +
            "\"x\"}]";
        assertError(base + ",\"tool_choice\":\"required\"}", "When using `tool_choice`, `tools` must be set.");
        assertError(base + ",\"tools\":[]}", "`tools` must not be an empty array");
        assertError(base + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],\"tool_choice\":" +
            "{\"type\":\"function\",\"function\":{\"name\":\"b\"}}}", "does not match any of the specified `tools`");
        assertError(base + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],\"tool_choice\":" +
            "\"sometimes\"}", "Invalid value for `tool_choice`: sometimes!");
        assertError(base + ",\"response_format\":{\"type\":\"json_schema\"}}", "the 'json_schema' field must be");
        assertError(base + ",\"structured_outputs\":{\"regex\":\"(open\"}}", "cannot read the regular expression");
        assertError(base + ",\"structured_outputs\":{\"regex\":\"a\",\"choice\":[\"b\"]}}",
            "only use one kind of constraints");
        // what the samplers cannot draw from is a 400 naming why, never a dropped connection
        assertError(base + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\",\"parameters\":" +
            "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\",\"pattern\":\"(?=lookahead)\"}}," +
            "\"required\":[\"x\"]}}}],\"tool_choice\":\"required\"}", "lookarounds");
        assertError(base + ",\"structured_outputs\":{\"regex\":\"a{99999}\"}}", "repetition counts");
        assertError("{\"model\":\"" + TestServer.MODEL + "\",\"messages\":[{\"role\":\"assistant\",\"content\":" +
            "\"x\",\"tool_calls\":[1]},{\"role\":\"user\",\"content\":\"y\"}]}", "");
        assertEquals(200, server.post("/v1/chat/completions", base + ",\"max_tokens\":2}").statusCode(),
            "and the server goes on");
    }

    private static void assertError(final String body, final String message) throws Exception
    {
        final java.net.http.HttpResponse<String> response = server.post("/v1/chat/completions", body);
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
