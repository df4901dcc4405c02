package dev.tapedeck.http;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;

import org.junit.jupiter.api.Test;

import dev.tapedeck.engine.Request;
import dev.tapedeck.tokens.ChatTemplate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RequestParser}: what a valid chat or completions body becomes, and the 400 (type, param, message) every
 * malformed, mistyped, missing or out-of-range field gets.
 */
class RequestParserTest
{
    private static final String VALIDATION = "Bad Request";
    private static final String BAD_REQUEST = "BadRequestError";
    private static final String USER_HI = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

    private final RequestParser parser = new RequestParser();

    private ParsedRequest chat(final String json)
    {
        return parse(json, ParsedRequest.Endpoint.CHAT);
    }

    private ParsedRequest completions(final String json)
    {
        return parse(json, ParsedRequest.Endpoint.COMPLETIONS);
    }

    private ParsedRequest parse(final String json, final ParsedRequest.Endpoint endpoint)
    {
        return parser.parse(Unpooled.wrappedBuffer(json.getBytes(StandardCharsets.UTF_8)), endpoint);
    }

    /**
     * Parse a chat body that must fail, and check the failure.
     *
     * @return the exception, for more checks on its message.
     */
    private ApiException chatError(final String json, final String type, final String param)
    {
        return error(json, ParsedRequest.Endpoint.CHAT, type, param);
    }

    private ApiException completionsError(final String json, final String type, final String param)
    {
        return error(json, ParsedRequest.Endpoint.COMPLETIONS, type, param);
    }

    private ApiException error(final String json, final ParsedRequest.Endpoint endpoint, final String type,
        final String param)
    {
        final ApiException ex = assertThrows(ApiException.class, () -> parse(json, endpoint), json);
        assertEquals(HttpResponseStatus.BAD_REQUEST, ex.status(), json);
        assertEquals(type, ex.type(), json);
        assertEquals(param, ex.param(), json);
        return ex;
    }

    @Test
    void shouldParseAMinimalChatRequestWithVllmDefaults()
    {
        final ParsedRequest request = chat("{" + USER_HI + "}");
        assertEquals(ParsedRequest.Endpoint.CHAT, request.endpoint);
        assertEquals(List.of(new ChatTemplate.Message("user", "hi")), request.messages);
        assertNull(request.prompts);
        assertNull(request.model);
        assertNull(request.requestId);
        assertEquals(Request.UNSET, request.maxTokens, "chat leaves max_tokens to the context");
        assertEquals("max_tokens", request.maxTokensParam);
        assertEquals(0, request.minTokens);
        assertEquals(1, request.n);
        assertFalse(request.stream);
        assertFalse(request.includeUsage);
        assertFalse(request.continuousUsageStats);
        assertFalse(request.ignoreEos);
        assertFalse(request.includeStopStrInOutput);
        assertEquals(List.of(), request.stop);
        assertNull(request.stopTokenIds);
        assertFalse(request.seeded);
        assertEquals(0, request.priority);
        assertNull(request.cacheSalt);
        assertFalse(request.echo);
    }

    @Test
    void shouldReadEveryHonouredChatField()
    {
        final ParsedRequest request = chat("{\"model\":\"m\",\"request_id\":\"abc\"," +
            "\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":\"hi\"}]," +
            "\"max_tokens\":50,\"min_tokens\":2,\"n\":3,\"stream\":true," +
            "\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true},\"ignore_eos\":true," +
            "\"include_stop_str_in_output\":true,\"stop\":[\"END\",\"\",\"###\"],\"stop_token_ids\":[7,8]," +
            "\"seed\":12345678901,\"priority\":-4,\"cache_salt\":\"tenant-1\",\"temperature\":0.7,\"top_p\":0.9}");
        assertEquals("m", request.model);
        assertEquals("abc", request.requestId);
        assertEquals(List.of(new ChatTemplate.Message("system", "be brief"), new ChatTemplate.Message("user", "hi")),
            request.messages);
        assertEquals(50, request.maxTokens);
        assertEquals(2, request.minTokens);
        assertEquals(3, request.n);
        assertTrue(request.stream);
        assertTrue(request.includeUsage);
        assertTrue(request.continuousUsageStats);
        assertTrue(request.ignoreEos);
        assertTrue(request.includeStopStrInOutput);
        assertEquals(List.of("END", "###"), request.stop, "empty stop strings are dropped");
        assertArrayEquals(new int[] {7, 8}, request.stopTokenIds);
        assertTrue(request.seeded);
        assertEquals(12_345_678_901L, request.seed);
        assertEquals(-4, request.priority);
        assertEquals("tenant-1", request.cacheSalt);
    }

    @Test
    void shouldPreferMaxCompletionTokensAndNameItInErrors()
    {
        final ParsedRequest request = chat("{" + USER_HI + ",\"max_tokens\":9,\"max_completion_tokens\":4}");
        assertEquals(4, request.maxTokens);
        assertEquals("max_completion_tokens", request.maxTokensParam);
        final ApiException ex = chatError("{" + USER_HI + ",\"max_completion_tokens\":0}", BAD_REQUEST,
            "max_completion_tokens");
        assertEquals("max_completion_tokens must be at least 1, got 0.", ex.getMessage());
    }

    @Test
    void shouldTakeTheDeveloperRoleAndNullToolFieldsButRefuseANullName()
    {
        final ParsedRequest request = chat("{\"messages\":[{\"role\":\"developer\",\"content\":\"be brief\"}," +
            "{\"role\":\"user\",\"content\":\"hi\",\"name\":\"ana\"},{\"role\":\"assistant\",\"content\":\"hello\"," +
            "\"tool_calls\":null},{\"role\":\"tool\",\"content\":\"42\",\"tool_call_id\":null}]}");
        assertEquals(List.of("developer", "user", "assistant", "tool"),
            request.messages.stream().map(ChatTemplate.Message::role).toList());
        final ApiException name = chatError("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"name\":null}]}",
            VALIDATION, "body.messages.0.name");
        assertTrue(name.getMessage().contains("'type': 'string_type'"), name.getMessage());
    }

    @Test
    void shouldJoinTextContentPartsAndTreatNullContentAsEmpty()
    {
        final ParsedRequest request = chat("{\"messages\":[{\"role\":\"assistant\",\"content\":null}," +
            "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"input_text\"," +
            "\"text\":\"two\"},{\"text\":\"three\"}]}]}");
        assertEquals(List.of(new ChatTemplate.Message("assistant", ""),
            new ChatTemplate.Message("user", "one\ntwo\nthree")), request.messages);
    }

    @Test
    void shouldDefaultCompletionsToSixteenTokensAndReadEcho()
    {
        final ParsedRequest request = completions("{\"prompt\":\"once upon\",\"echo\":true}");
        assertEquals(ParsedRequest.Endpoint.COMPLETIONS, request.endpoint);
        assertEquals(List.of("once upon"), request.prompts);
        assertNull(request.messages);
        assertEquals(16, request.maxTokens);
        assertTrue(request.echo);
    }

    @Test
    void shouldAcceptEveryPromptShape()
    {
        final List<Object> ids = completions("{\"prompt\":[1,2,3]}").prompts;
        assertEquals(1, ids.size());
        assertArrayEquals(new int[] {1, 2, 3}, (int[])ids.get(0));

        assertEquals(List.of("a", "b"), completions("{\"prompt\":[\"a\",\"b\"]}").prompts);

        final List<Object> mixed = completions("{\"prompt\":[[4,5],\"c\",[6]]}").prompts;
        assertEquals(3, mixed.size());
        assertArrayEquals(new int[] {4, 5}, (int[])mixed.get(0));
        assertEquals("c", mixed.get(1));
        assertArrayEquals(new int[] {6}, (int[])mixed.get(2));
    }

    @Test
    void shouldTurnStreamOptionsIntoUsageFlagsOnlyWhenStreaming()
    {
        final ParsedRequest implicit = chat("{" + USER_HI + ",\"stream\":true,\"stream_options\":{}}");
        assertTrue(implicit.includeUsage, "include_usage defaults to true once stream_options is present");
        assertFalse(implicit.continuousUsageStats);

        final ParsedRequest off = chat("{" + USER_HI + ",\"stream\":true,\"stream_options\":{\"include_usage\":" +
            "false,\"continuous_usage_stats\":true}}");
        assertFalse(off.includeUsage);
        assertFalse(off.continuousUsageStats, "continuous usage needs include_usage");

        final ApiException ex = chatError("{" + USER_HI + ",\"stream_options\":{\"include_usage\":true}}",
            BAD_REQUEST, "stream_options");
        assertEquals("Stream options can only be defined when `stream=True`.", ex.getMessage());
        chatError("{" + USER_HI + ",\"stream\":true,\"stream_options\":true}", VALIDATION, "body.stream_options");
        final ApiException usage = assertThrows(ApiException.class, () -> chat("{" + USER_HI + ",\"stream\":true," +
            "\"stream_options\":{\"include_usage\":[1]}}"));
        assertEquals(VALIDATION, usage.type());
        assertTrue(usage.getMessage().contains("'type': 'bool_type'"), usage.getMessage());
    }

    @Test
    void shouldAcceptIntegralFloatsForIntegerFields()
    {
        assertEquals(10, chat("{" + USER_HI + ",\"max_tokens\":10.0}").maxTokens);
        chatError("{" + USER_HI + ",\"max_tokens\":10.5}", VALIDATION, "body.max_tokens");
    }

    @Test
    void shouldRejectMalformedJsonAsAPydanticJsonError()
    {
        final ApiException ex = chatError("{oops}", VALIDATION, "body");
        assertTrue(ex.getMessage().startsWith("1 validation error:\n  {'type': 'json_invalid', 'loc': ('body', "),
            ex.getMessage());
        assertTrue(ex.getMessage().contains("'msg': 'JSON decode error'"), ex.getMessage());
        assertTrue(ex.getMessage().contains("'ctx': {'error': 'Unexpected character (\"o\" (code 111))"),
            "quotes inside the cause become double quotes, so the Python-style dict stays valid: " + ex.getMessage());
    }

    @Test
    void shouldRejectTrailingContentAfterTheJsonObject()
    {
        final ApiException ex = chatError("{" + USER_HI + "} {\"n\":2}", VALIDATION, "body");
        assertTrue(ex.getMessage().contains("'type': 'json_invalid'"), ex.getMessage());
        assertEquals(1, chat("{" + USER_HI + "}\r\n \n").n, "trailing white space is fine");
    }

    @Test
    void shouldRejectJsonBeyondTheParserLimitsAsJsonErrors()
    {
        final ApiException deep = chatError("[".repeat(1200) + "]".repeat(1200), VALIDATION, "body");
        assertTrue(deep.getMessage().contains("'type': 'json_invalid'"), deep.getMessage());
        assertTrue(deep.getMessage().contains("nesting depth"), deep.getMessage());
        final ApiException longNumber = chatError("{" + USER_HI + ",\"max_tokens\":1" + "0".repeat(1200) + "}",
            VALIDATION, "body");
        assertTrue(longNumber.getMessage().contains("'type': 'json_invalid'"), longNumber.getMessage());
    }

    @Test
    void shouldRejectBodiesThatAreNotObjects()
    {
        for (final String body : new String[] {"[1,2]", "\"text\"", "42", "null", "", "   "})
        {
            final ApiException ex = chatError(body, VALIDATION, "body");
            assertTrue(ex.getMessage().contains("'type': 'model_attributes_type'"), body + ": " + ex.getMessage());
        }
    }

    @Test
    void shouldRejectMissingMessagesOrPromptAsMissingFields()
    {
        final ApiException messages = chatError("{\"model\":\"m\"}", VALIDATION, "body.messages");
        assertEquals("1 validation error:\n  {'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field " +
            "required'}", messages.getMessage());
        chatError("{\"messages\":null}", VALIDATION, "body.messages");
        final ApiException prompt = completionsError("{\"max_tokens\":3}", VALIDATION, "body.prompt");
        assertTrue(prompt.getMessage().contains("'loc': ('body', 'prompt'), 'msg': 'Field required'"),
            prompt.getMessage());
        chatError("{\"messages\":[{\"content\":\"x\"}]}", VALIDATION, "body.messages.0.role");
        chatError("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},{\"role\":7}]}", VALIDATION,
            "body.messages.1.role");
    }

    @Test
    void shouldCoerceScalarsAsPydanticsLaxModeDoes()
    {
        final ParsedRequest request = chat("{" + USER_HI + ",\"max_tokens\":\" 8 \",\"n\":\"2\"," +
            "\"priority\":3.0,\"stream\":\"yes\",\"ignore_eos\":1,\"include_stop_str_in_output\":\"off\"," +
            "\"seed\":\"42\",\"temperature\":\"0.5\",\"top_p\":true,\"top_k\":\"-1\"}");
        assertEquals(8, request.maxTokens);
        assertEquals(2, request.n);
        assertEquals(3, request.priority);
        assertTrue(request.stream);
        assertTrue(request.ignoreEos);
        assertFalse(request.includeStopStrInOutput);
        assertEquals(42, request.seed);
        assertEquals(1, chat("{" + USER_HI + ",\"max_tokens\":true}").maxTokens, "a boolean is an integer too");
    }

    @Test
    void shouldCheckTheSamplingParametersWithVllmsRanges()
    {
        chatError("{" + USER_HI + ",\"temperature\":-1}", BAD_REQUEST, "temperature");
        chatError("{" + USER_HI + ",\"top_p\":0}", BAD_REQUEST, "top_p");
        chatError("{" + USER_HI + ",\"top_k\":-2}", BAD_REQUEST, "top_k");
        chatError("{" + USER_HI + ",\"min_p\":1.5}", BAD_REQUEST, "min_p");
        chatError("{" + USER_HI + ",\"presence_penalty\":3}", BAD_REQUEST, "presence_penalty");
        chatError("{" + USER_HI + ",\"frequency_penalty\":\"-2.5\"}", BAD_REQUEST, "frequency_penalty");
        final ApiException zero = chatError("{" + USER_HI + ",\"repetition_penalty\":0}", BAD_REQUEST,
            "repetition_penalty");
        assertEquals("repetition_penalty must be greater than zero, got 0.0.", zero.getMessage());
        chat("{" + USER_HI + ",\"temperature\":0,\"top_p\":1,\"top_k\":0,\"min_p\":0,\"presence_penalty\":-2," +
            "\"frequency_penalty\":2,\"repetition_penalty\":1.1}");
    }

    @Test
    void shouldNameJsonErrorsWithoutJavaNames()
    {
        for (final String body : new String[] {"{" + USER_HI + "} x", "{" + USER_HI + "}{\"a\":1}",
            "[".repeat(1100) + "]".repeat(1100), "{" + USER_HI + ",\"n\":" + "9".repeat(1100) + "}", "{\"a\":"})
        {
            final ApiException ex = chatError(body, VALIDATION, "body");
            assertFalse(ex.getMessage().matches("(?s).*(com\\.fasterxml|Feature|Constraints|`|\\.java).*"),
                ex.getMessage());
        }
        assertTrue(chatError("{" + USER_HI + "}{}", VALIDATION, "body").getMessage().contains("'error': 'Extra data'"));
    }

    @Test
    void shouldRejectWrongTypesWithTheFieldAsParam()
    {
        assertWrongType("\"model\":5", "body.model", "string_type");
        assertWrongType("\"request_id\":[]", "body.request_id", "string_type");
        assertWrongType("\"max_tokens\":\"ten\"", "body.max_tokens", "int_parsing");
        assertWrongType("\"max_tokens\":1e10", "body.max_tokens", "int_type");
        assertWrongType("\"min_tokens\":[1]", "body.min_tokens", "int_type");
        assertWrongType("\"n\":\"two\"", "body.n", "int_parsing");
        assertWrongType("\"priority\":1.5", "body.priority", "int_from_float");
        assertWrongType("\"stream\":\"maybe\"", "body.stream", "bool_parsing");
        assertWrongType("\"ignore_eos\":2", "body.ignore_eos", "bool_parsing");
        assertWrongType("\"include_stop_str_in_output\":[true]", "body.include_stop_str_in_output", "bool_type");
        assertWrongType("\"temperature\":\"hot\"", "body.temperature", "float_parsing");
        assertWrongType("\"top_p\":{}", "body.top_p", "float_type");
        assertWrongType("\"stop\":5", "body.stop", "list_type");
        assertWrongType("\"stop\":[\"a\",5]", "body.stop", "string_type");
        assertWrongType("\"stop_token_ids\":7", "body.stop_token_ids", "list_type");
        assertWrongType("\"stop_token_ids\":[-1]", "body.stop_token_ids", "int_type");
        assertWrongType("\"stop_token_ids\":[\"7\"]", "body.stop_token_ids", "int_type");
        assertWrongType("\"seed\":1.5", "body.seed", "int_from_float");
        assertWrongType("\"seed\":\"x1\"", "body.seed", "int_parsing");
        assertWrongType("\"cache_salt\":1", "body.cache_salt", "string_type");
    }

    private void assertWrongType(final String field, final String param, final String pydanticType)
    {
        final ApiException ex = chatError("{" + USER_HI + "," + field + "}", VALIDATION, param);
        assertTrue(ex.getMessage().startsWith("1 validation error:\n  {'type': '" + pydanticType + "'"),
            field + ": " + ex.getMessage());
    }

    @Test
    void shouldStandMediaPartsForRunsOfPlaceholderTokensKnownByTheirMedia()
    {
        final String image = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":" +
            "\"what is this?\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"%s\"}},{\"type\":\"input_audio\"," +
            "\"input_audio\":{\"data\":\"AAAA\",\"format\":\"wav\"}},{\"type\":\"text\",\"text\":\"thanks\"}]}]}";
        final dev.tapedeck.tokens.Tokenizer tokenizer = new dev.tapedeck.tokens.BuiltinTokenizer();
        final ParsedRequest cat = chat(String.format(image, "https://x/cat.png"));
        final String text = cat.messages.get(0).content();
        final MediaParts.Tokenized tokens = cat.media.tokenize("<user>" + text + "</user>", tokenizer, 4096);
        final dev.tapedeck.kv.MediaSpans spans = tokens.spans();
        assertEquals(2, spans.count());
        assertEquals(256, spans.length(0), "an image");
        assertEquals(188, spans.length(1), "an audio clip");
        final int imagePad = tokens.ids()[spans.offset(0)];
        for (int i = 0; i < 256; i++)
        {
            assertEquals(imagePad, tokens.ids()[spans.offset(0) + i], "identical placeholders");
        }
        assertArrayEquals(tokenizer.encode("<user>what is this?\n"), java.util.Arrays.copyOf(tokens.ids(),
            spans.offset(0)), "the text before the image as the tokenizer encodes it");
        assertEquals(spans.offset(0) + 256 + tokenizer.encode("\n").length, spans.offset(1));
        assertEquals(spans.offset(1) + 188 + tokenizer.encode("\nthanks</user>").length, tokens.ids().length);

        final ParsedRequest again = chat(String.format(image, "https://x/cat.png"));
        final dev.tapedeck.kv.MediaSpans same = again.media.tokenize(again.messages.get(0).content(), tokenizer, 4096)
            .spans();
        assertEquals(spans.identifier(0), same.identifier(0), "the same image, the same identifier");
        final ParsedRequest dog = chat(String.format(image, "https://x/dog.png"));
        final dev.tapedeck.kv.MediaSpans other = dog.media.tokenize(dog.messages.get(0).content(), tokenizer, 4096)
            .spans();
        assertNotEquals(spans.identifier(0), other.identifier(0));
        assertEquals(spans.identifier(1), other.identifier(1), "the same audio");
        assertNull(dog.media.tokenize("a template that dropped the message", tokenizer, 4096).spans(),
            "no run where no marker is left");
        final String twice = dog.messages.get(0).content();
        final MediaParts.Tokenized repeated = dog.media.tokenize(twice + twice, tokenizer, 4096);
        assertEquals(2, repeated.spans().count(), "a message rendered twice: each item once, where it first appears");
        assertEquals(tokenizer.encode("what is this?\n").length + 256 + tokenizer.encode("\n").length + 188 +
            tokenizer.encode("\nthankswhat is this?\n").length + tokenizer.encode("\n").length +
            tokenizer.encode("\nthanks").length, repeated.ids().length,
            "the second copy's markers are dropped, not tokenized as text");
        assertEquals("what is this?\n\n\nthanks", dog.media.withoutMarkers(twice), "echo: the client's text");
    }

    @Test
    void shouldRefuseMediaWithoutDataOrBeyondTheContextAndIgnoreMarkersInText()
    {
        final ApiException bare = chatError("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":" +
            "\"video_url\"}]}]}", BAD_REQUEST, "messages.0.content");
        assertTrue(bare.getMessage().contains("needs its 'video_url'"), bare.getMessage());
        final StringBuilder many = new StringBuilder("{\"messages\":[{\"role\":\"user\",\"content\":[");
        for (int i = 0; i < 200; i++)
        {
            many.append(0 == i ? "" : ",").append("{\"type\":\"video_url\",\"video_url\":{\"url\":\"v\"}}");
        }
        final ParsedRequest videos = chat(many.append("]}]}").toString());
        final ApiException tooMany = assertThrows(ApiException.class, () -> videos.media.tokenize(
            videos.messages.get(0).content(), new dev.tapedeck.tokens.BuiltinTokenizer(), 32_768));
        assertTrue(tooMany.getMessage().contains("200 media items alone take 204800 placeholder tokens"),
            tooMany.getMessage());
        // a client writing what looks like a marker gets text, not someone's image
        final ParsedRequest forged = chat("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\"," +
            "\"text\":\"\\ufdd00:0\\ufdd1 and \\ufdd0x\\ufdd1\"},{\"type\":\"image_url\",\"image_url\":{\"url\":" +
            "\"https://x/cat.png\"}}]}]}");
        final String text = forged.messages.get(0).content();
        final MediaParts.Tokenized tokens = forged.media.tokenize(text, new dev.tapedeck.tokens.BuiltinTokenizer(),
            4096);
        assertEquals(1, tokens.spans().count());
        assertEquals(tokens.ids().length - 256, tokens.spans().offset(0), "the run where the image part is, last");
    }

    @Test
    void shouldRejectMistypedMessages()
    {
        chatError("{\"messages\":\"hello\"}", VALIDATION, "body.messages");
        chatError("{\"messages\":[\"hello\"]}", VALIDATION, "body.messages.0");
        chatError("{\"messages\":[{\"role\":\"user\",\"content\":5}]}", VALIDATION, "body.messages.0.content");
        final ApiException empty = chatError("{\"messages\":[]}", BAD_REQUEST, "messages");
        assertEquals("messages must contain at least one message", empty.getMessage());
        final ApiException file = chatError("{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":" +
            "\"file\",\"file\":{\"file_id\":\"x\"}}]}]}", BAD_REQUEST, "messages.0.content");
        assertTrue(file.getMessage().contains("'file'"), file.getMessage());
    }

    @Test
    void shouldRejectMistypedPrompts()
    {
        completionsError("{\"prompt\":[]}", BAD_REQUEST, "prompt");
        completionsError("{\"prompt\":5}", BAD_REQUEST, "prompt");
        completionsError("{\"prompt\":{\"text\":\"x\"}}", BAD_REQUEST, "prompt");
        completionsError("{\"prompt\":[\"a\",5]}", VALIDATION, "body.prompt");
        completionsError("{\"prompt\":[1,-2]}", VALIDATION, "body.prompt");
        completionsError("{\"prompt\":[1,2.5]}", VALIDATION, "body.prompt");
        completionsError("{\"prompt\":[1,4294967296]}", VALIDATION, "body.prompt");
        completionsError("{\"prompt\":[[1],[\"x\"]]}", VALIDATION, "body.prompt");
        completionsError("{\"prompt\":\"x\",\"echo\":\"sure\"}", VALIDATION, "body.echo");
    }

    @Test
    void shouldRejectOutOfRangeValues()
    {
        assertEquals("n must be at least 1, got 0.", chatError("{" + USER_HI + ",\"n\":0}", BAD_REQUEST, "n")
            .getMessage());
        assertEquals(128, chat("{" + USER_HI + ",\"n\":128}").n);
        assertEquals("n must be at most 128 in tapedeck, got 129.",
            chatError("{" + USER_HI + ",\"n\":129}", BAD_REQUEST, "n").getMessage());
        assertEquals("max_tokens must be at least 1, got 0.",
            chatError("{" + USER_HI + ",\"max_tokens\":0}", BAD_REQUEST, "max_tokens").getMessage());
        completionsError("{\"prompt\":\"x\",\"max_tokens\":0}", BAD_REQUEST, "max_tokens");
        assertEquals("min_tokens must be greater than or equal to 0, got -3.",
            chatError("{" + USER_HI + ",\"min_tokens\":-3}", BAD_REQUEST, "min_tokens").getMessage());
        assertEquals("min_tokens must be less than or equal to max_tokens=4, got 5.",
            chatError("{" + USER_HI + ",\"max_tokens\":4,\"min_tokens\":5}", BAD_REQUEST, "min_tokens")
                .getMessage());
        assertEquals(500, chat("{" + USER_HI + ",\"min_tokens\":500}").minTokens,
            "without max_tokens, min_tokens is only bounded by the context (checked at admission)");
        completionsError("{\"prompt\":\"x\",\"min_tokens\":17}", BAD_REQUEST, "min_tokens");
        assertEquals("Parameter 'cache_salt' must be a non-empty string if provided.",
            chatError("{" + USER_HI + ",\"cache_salt\":\"\"}", BAD_REQUEST, "cache_salt").getMessage());
    }

    @Test
    void shouldRejectMaxTokensOfMinusOneRatherThanTakeItForUnset()
    {
        assertEquals("max_tokens must be at least 1, got -1.",
            chatError("{" + USER_HI + ",\"max_tokens\":-1}", BAD_REQUEST, "max_tokens").getMessage());
        chatError("{" + USER_HI + ",\"max_completion_tokens\":-1}", BAD_REQUEST, "max_completion_tokens");
        completionsError("{\"prompt\":\"x\",\"max_tokens\":-1}", BAD_REQUEST, "max_tokens");
        chatError("{" + USER_HI + ",\"max_tokens\":-1,\"min_tokens\":5}", BAD_REQUEST, "max_tokens");
    }

    @Test
    void shouldRejectFeaturesTapedeckDoesNotSimulate()
    {
        chatError("{" + USER_HI + ",\"use_beam_search\":true}", BAD_REQUEST, "use_beam_search");
        assertEquals(1, chat("{" + USER_HI + ",\"logprobs\":false,\"use_beam_search\":false}").n);
    }

    @Test
    void shouldReadLogprobsAsVllmDoes()
    {
        assertEquals(new Logprobs.Request(0, -1), chat("{" + USER_HI + ",\"logprobs\":true}").logprobs);
        assertEquals(new Logprobs.Request(4, -1), chat("{" + USER_HI + ",\"logprobs\":true,\"top_logprobs\":4}")
            .logprobs);
        assertEquals(Logprobs.Request.NONE, chat("{" + USER_HI + ",\"logprobs\":false,\"top_logprobs\":0}")
            .logprobs, "top_logprobs 0 without logprobs is allowed and asks for none");
        assertEquals(new Logprobs.Request(2, 1), completions("{\"prompt\":\"x\",\"logprobs\":2," +
            "\"prompt_logprobs\":1}").logprobs);
        assertEquals(new Logprobs.Request(0, -1), completions("{\"prompt\":\"x\",\"logprobs\":0}").logprobs,
            "logprobs 0: the emitted token's only");
        chatError("{" + USER_HI + ",\"top_logprobs\":1}", BAD_REQUEST, "top_logprobs");
        completionsError("{\"prompt\":\"x\",\"logprobs\":-2}", BAD_REQUEST, "logprobs");
        completionsError("{\"prompt\":\"x\",\"stream\":true,\"prompt_logprobs\":1}", BAD_REQUEST,
            "prompt_logprobs");
    }

    @Test
    void shouldTreatNullAsAbsent()
    {
        final ParsedRequest request = chat("{" + USER_HI + ",\"model\":null,\"max_tokens\":null,\"n\":null," +
            "\"stream\":null,\"stream_options\":null,\"stop\":null,\"stop_token_ids\":null,\"seed\":null," +
            "\"cache_salt\":null,\"priority\":null}");
        assertNull(request.model);
        assertEquals(Request.UNSET, request.maxTokens);
        assertEquals(1, request.n);
        assertFalse(request.stream);
        assertEquals(List.of(), request.stop);
        assertNull(request.stopTokenIds);
        assertFalse(request.seeded);
        assertNull(request.cacheSalt);
        assertEquals(List.of(), chat("{" + USER_HI + ",\"stop\":\"\"}").stop, "an empty stop string is no stop");
        assertEquals(List.of("\n"), chat("{" + USER_HI + ",\"stop\":\"\\n\"}").stop);
    }
}
