package dev.tapedeck.cli;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import dev.tapedeck.serve.Serve;
import dev.tapedeck.tokens.HfTokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code serve --tokenizer} a real Qwen3 {@code tokenizer.json} takes the chat template of the
 * {@code tokenizer_config.json} beside it, so a chat request with tools, an earlier tool call and a tool result
 * counts exactly the prompt tokens vLLM counts: those of the text Python's jinja2 renders from that template
 * ({@code core/common/src/test/resources/chat-templates/qwen3-tools.txt}), tokenized by the same tokenizer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChatTemplateServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path TEMPLATES = Path.of("..", "common", "src", "test", "resources", "chat-templates");

    @Test
    void shouldCountTheTokensOfTheModelsOwnTemplate() throws Exception
    {
        final Path qwen3 = Path.of(System.getProperty("tapedeck.test.qwen3Tokenizer", "missing"));
        assertTrue(Files.isRegularFile(qwen3.resolveSibling("tokenizer_config.json")),
            "the build fetches Qwen3's tokenizer_config.json beside its tokenizer.json");
        final int expected;
        try (HfTokenizer tokenizer = new HfTokenizer(qwen3))
        {
            expected = tokenizer.encode(Files.readString(TEMPLATES.resolve("qwen3-tools.txt"))).length;
        }
        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--model", "Qwen/Qwen3-8B", "--tokenizer", qwen3.toString());
        final ServeCommand serve = cli.getSubcommands().get("serve").getCommand();
        final Serve started = Serve.start(serve.context());
        try
        {
            final String base = "http://127.0.0.1:" + started.httpServer().ports().get(0);
            final ObjectNode body = (ObjectNode)JSON.readTree(Files.readString(TEMPLATES.resolve(
                "tools-conversation.json")));
            // the assistant's earlier call as a client sends it: arguments as a JSON string
            final ObjectNode function = (ObjectNode)body.at("/messages/2/tool_calls/0/function");
            function.put("arguments", function.get("arguments").toString());
            body.put("model", "Qwen/Qwen3-8B").put("max_tokens", 30);
            final JsonNode answer = post(base + "/v1/chat/completions", body);
            assertEquals(expected, answer.at("/usage/prompt_tokens").asInt(),
                "the prompt tokens of jinja2's rendering of Qwen3's template");
            assertEquals(expected, post(base + "/tokenize", body.without("max_tokens")).get("count").asInt());

            final ObjectNode refused = JSON.createObjectNode().put("model", "Qwen/Qwen3-8B");
            refused.putArray("messages").addObject().put("role", "assistant").put("content", "no user here");
            final HttpResponse<String> response = send(base + "/v1/chat/completions", refused);
            assertEquals(200, response.statusCode(), "Qwen3's template accepts an assistant-only turn: " +
                response.body());
        }
        finally
        {
            started.close();
        }
    }

    @Test
    void shouldTakeTheTokenizerTemplateAndDimensionsOfAModelDirectoryAsVllmDoes(
        @org.junit.jupiter.api.io.TempDir final Path dir) throws Exception
    {
        final Path qwen3 = Path.of(System.getProperty("tapedeck.test.qwen3Tokenizer", "missing"));
        final Path model = dir.resolve("Qwen3-8B");
        Files.createDirectories(model);
        Files.copy(qwen3, model.resolve("tokenizer.json"));
        Files.copy(qwen3.resolveSibling("tokenizer_config.json"), model.resolve("tokenizer_config.json"));
        // Qwen3-8B's published dimensions
        Files.writeString(model.resolve("config.json"), "{\"num_hidden_layers\":36,\"hidden_size\":4096," +
            "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"head_dim\":128,\"intermediate_size\":12288," +
            "\"vocab_size\":151936,\"tie_word_embeddings\":false}");
        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--model", model.toString(), "--gpu", "H100");
        final dev.tapedeck.serve.ServeContext context = ((ServeCommand)cli.getSubcommands().get("serve")
            .getCommand()).context().conclude();
        assertEquals(model.resolve("tokenizer.json"), context.tokenizerFile(), "its tokenizer");
        assertTrue(context.serveOptions().chatTemplate().displayName().contains("tokenizer_config.json"),
            "its chat template: " + context.serveOptions().chatTemplate().displayName());
        final String steps = context.engine().latencyModel().describe();
        assertTrue(steps.contains("Qwen3-8B"), "its dimensions drive the step model: " + steps);
        final CommandLine other = Main.commandLine();
        other.parseArgs("serve", "--port", "0", "--model", model.toString(), "--gpu", "H100", "--gpu-memory-gb",
            "80");
        final int blocks = ((ServeCommand)other.getSubcommands().get("serve").getCommand()).context().conclude()
            .engine().kvCacheBlocks();
        // 80 GB at 0.9, less 16.4 GB of weights and the overhead, over 147,456 bytes of KV a token (36 layers,
        // 8 KV heads of 128, bf16 keys and values), in blocks of 16
        assertTrue(blocks > 20_000 && blocks < 30_000, "the KV geometry of its dimensions: " + blocks + " blocks");
        final CommandLine profiled = Main.commandLine();
        profiled.parseArgs("serve", "--port", "0", "--model", model.toString(), "--step-profile",
            "dense-8b-rtxpro6000");
        assertTrue(((ServeCommand)profiled.getSubcommands().get("serve").getCommand()).context().conclude()
            .engine().latencyModel().describe().contains("dense-8b"), "a step profile given wins over the directory");
        Files.writeString(model.resolve("config.json"), "{\"n_layer\":12,\"n_embd\":768}");
        final CommandLine gpt2 = Main.commandLine();
        gpt2.parseArgs("serve", "--port", "0", "--model", model.toString());
        assertEquals(model.resolve("tokenizer.json"), ((ServeCommand)gpt2.getSubcommands().get("serve").getCommand())
            .context().conclude().tokenizerFile(), "a config.json it cannot read leaves the tokenizer");
    }

    private static JsonNode post(final String url, final JsonNode body) throws Exception
    {
        final HttpResponse<String> response = send(url, body);
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private static HttpResponse<String> send(final String url, final JsonNode body) throws Exception
    {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
            HttpResponse.BodyHandlers.ofString());
    }
}
