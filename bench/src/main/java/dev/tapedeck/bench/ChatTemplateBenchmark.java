package dev.tapedeck.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import dev.tapedeck.tokens.ChatTemplate;
import dev.tapedeck.tokens.JinjaChatTemplate;

/**
 * What rendering a chat request's prompt costs: the built-in ChatML template (the baseline) against a model's own
 * Jinja template (Qwen3's, from the tokenizer_config.json the build fetches), for a conversation with a tool, an
 * earlier call and its result. Run after {@code ./mvnw install}; {@code -p config=PATH} names another
 * tokenizer_config.json.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ChatTemplateBenchmark
{
    private static final List<Map<String, Object>> TOOLS = List.of(Map.of("type", "function", "function", Map.of(
        "name", "get_weather", "description", "Get the weather", "parameters", Map.of("type", "object",
        "properties", Map.of("city", Map.of("type", "string")), "required", List.of("city")))));
    private static final List<ChatTemplate.Message> MESSAGES = List.of(
        new ChatTemplate.Message("system", "be brief"),
        new ChatTemplate.Message("user", "What is the weather in Paris?"),
        new ChatTemplate.Message("assistant", "", List.of(Map.of("id", "c1", "type", "function", "function",
            Map.of("name", "get_weather", "arguments", Map.of("city", "Paris")))), null),
        new ChatTemplate.Message("tool", "21 degrees", List.of(), "c1"),
        new ChatTemplate.Message("user", "thanks"));

    /** The tokenizer_config.json whose template is measured. */
    @Param("core/common/target/test-data/qwen3/tokenizer_config.json")
    public String config;

    private JinjaChatTemplate jinja;

    /**
     * @throws IOException if the template cannot be read.
     */
    @Setup
    public void setUp() throws IOException
    {
        final Path file = Path.of(config);
        if (!Files.isRegularFile(file))
        {
            throw new IllegalStateException(file + " is missing: run ./mvnw install first (the build fetches it)");
        }
        jinja = JinjaChatTemplate.read(file);
    }

    /**
     * @return the prompt.
     */
    @Benchmark
    public String builtinChatml()
    {
        return ChatTemplate.CHATML.render(MESSAGES, TOOLS);
    }

    /**
     * @return the prompt.
     */
    @Benchmark
    public String modelJinja()
    {
        return jinja.render(MESSAGES, TOOLS);
    }
}
