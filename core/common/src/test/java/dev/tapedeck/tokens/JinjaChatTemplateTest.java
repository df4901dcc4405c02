package dev.tapedeck.tokens;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Models' own chat templates rendered byte for byte as Python's jinja2 renders them for vLLM: Qwen3's (with tools,
 * an earlier tool call and a tool result, and thinking) and Llama 3's, from the tokenizer_config.json files the build
 * fetches, and a template of the Python string, dict and {@code tojson} features templates use. The expected texts
 * in {@code src/test/resources/chat-templates} were written by {@code render.py} there (jinja2 3.1, set up as
 * transformers sets it up).
 */
class JinjaChatTemplateTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String resource(final String name) throws IOException
    {
        try (InputStream in = JinjaChatTemplateTest.class.getResourceAsStream("/chat-templates/" + name))
        {
            assertNotNull(in, name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** A conversation file's messages as the frontend hands them over, and its tools. */
    private static String render(final PromptTemplate template, final String conversation) throws IOException
    {
        final JsonNode root = JSON.readTree(resource(conversation));
        final List<ChatTemplate.Message> messages = new ArrayList<>();
        for (final JsonNode message : root.get("messages"))
        {
            final List<Map<String, Object>> calls = message.has("tool_calls") ? JSON.convertValue(
                message.get("tool_calls"), new TypeReference<>()
                {
                }) : List.of();
            messages.add(new ChatTemplate.Message(message.get("role").asText(), message.get("content").asText(),
                calls, message.path("tool_call_id").asText(null)));
        }
        final List<Map<String, Object>> tools = root.has("tools") ? JSON.convertValue(root.get("tools"),
            new TypeReference<>()
            {
            }) : List.of();
        return template.render(messages, tools);
    }

    private static Path qwen3Config()
    {
        final Path tokenizer = Path.of(System.getProperty("tapedeck.test.qwen3Tokenizer"));
        return tokenizer.resolveSibling("tokenizer_config.json");
    }

    @Test
    void shouldRenderQwen3AsJinja2DoesWithToolsCallsAndThinking() throws IOException
    {
        final JinjaChatTemplate qwen3 = JinjaChatTemplate.besideTokenizer(Path.of(System.getProperty(
            "tapedeck.test.qwen3Tokenizer")));
        assertNotNull(qwen3, "the tokenizer_config.json beside the tokenizer is found");
        assertEquals(resource("qwen3-tools.txt"), render(qwen3, "tools-conversation.json"));
        assertEquals(resource("qwen3-plain.txt"), render(qwen3, "plain-conversation.json"));
    }

    @Test
    void shouldRenderLlama3AsJinja2Does() throws IOException
    {
        final JinjaChatTemplate llama3 = JinjaChatTemplate.read(Path.of(System.getProperty(
            "tapedeck.test.llama3Config")));
        assertEquals(resource("llama3-plain.txt"), render(llama3, "plain-conversation.json"));
        assertTrue(render(llama3, "plain-conversation.json").startsWith("<|begin_of_text|>"), "bos_token is set");
    }

    @Test
    void shouldGivePythonsStringDictAndJsonSemantics(@org.junit.jupiter.api.io.TempDir final Path dir)
        throws IOException
    {
        final Path file = dir.resolve("features.jinja");
        Files.writeString(file, resource("features.jinja"));
        assertEquals(resource("features-tools.txt"), render(JinjaChatTemplate.read(file), "tools-conversation.json"));
    }

    @Test
    void shouldRefuseWhatTheTemplateRefusesAndReadErrorsClearly(@org.junit.jupiter.api.io.TempDir final Path dir)
        throws IOException
    {
        final JinjaChatTemplate strict = new JinjaChatTemplate("{% if messages[0].role != 'user' %}" +
            "{{ raise_exception('Conversation must start with the user') }}{% endif %}ok", null, null, "test");
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> strict.render(List.of(new ChatTemplate.Message("assistant", "x")), List.of()));
        assertTrue(refused.getMessage().contains("Conversation must start with the user"), refused.getMessage());
        assertEquals("ok", strict.render(List.of(new ChatTemplate.Message("user", "x")), List.of()));
        final Path noTemplate = dir.resolve("tokenizer_config.json");
        Files.writeString(noTemplate, "{\"bos_token\":\"<s>\"}");
        final IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
            () -> JinjaChatTemplate.read(noTemplate));
        assertTrue(missing.getMessage().contains("has no chat_template"), missing.getMessage());
        assertEquals(null, JinjaChatTemplate.besideTokenizer(dir.resolve("tokenizer.json")),
            "a config without a template is no template");
        assertTrue(Files.isRegularFile(qwen3Config()));
    }

    @Test
    void shouldRefuseOrRenderTheEdgeCasesWithoutHanging()
    {
        final List<ChatTemplate.Message> hi = List.of(new ChatTemplate.Message("user", "a b"));
        final IllegalArgumentException empty = assertThrows(IllegalArgumentException.class, () ->
            new JinjaChatTemplate("{{ messages[0].content.split('') }}", null, null, "test").render(hi, List.of()));
        assertTrue(empty.getMessage().contains("split"), "refused, not an endless loop: " + empty.getMessage());
        final String date = new JinjaChatTemplate("{{ strftime_now('%A %d %b %Y, %H:%M %Q') }}", null, null, "test")
            .render(hi, List.of());
        assertTrue(date.matches("[A-Z][a-z]+day \\d{2} [A-Z][a-z]{2} \\d{4}, \\d{2}:\\d{2} %Q"), date);
        assertEquals("0", new JinjaChatTemplate("{{ '{# namespace( #}' if false }}{% set ns = " +
            "namespace(n=messages|length - 1) %}{{ ns.n }}", null, null, "test").render(hi, List.of()),
            "an unbalanced namespace( does not stop the next one from being read");
        assertEquals("a b|{# namespace( #}", new JinjaChatTemplate("{{ messages[0].content }}|{{ '{# namespace( #}' }}",
            null, null, "test").render(hi, List.of()), "an unbalanced namespace( in a string leaves the rest as it is");
    }

    @Test
    void shouldGiveBuiltInTemplatesTheToolsToo()
    {
        final List<Map<String, Object>> tools = List.of(Map.of("type", "function", "function", Map.of("name", "f")));
        final String withTools = ChatTemplate.CHATML.render(List.of(new ChatTemplate.Message("user", "hi")), tools);
        assertTrue(withTools.startsWith("<|im_start|>system\n# Tools"), withTools);
        assertTrue(withTools.contains("\"name\": \"f\""), "tools as Python's json.dumps writes them: " + withTools);
        final String withCall = ChatTemplate.CHATML.render(List.of(new ChatTemplate.Message("assistant", "",
            List.of(Map.of("id", "1", "function", Map.of("name", "f", "arguments", Map.of("a", 1)))), null)),
            List.of());
        assertTrue(withCall.contains("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>"),
            withCall);
    }
}
