package dev.tapedeck.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;
import org.zeromq.ZContext;

import picocli.CommandLine;

import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kv.MediaSpans;
import dev.tapedeck.serve.Serve;
import dev.tapedeck.testing.KvEventSubscriber;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An image in a chat, as vLLM serves a vision model: the prompt holds a run of 256 {@code <|image_pad|>} tokens (the
 * Qwen3 tokenizer's), the image's identifier is an extra key of every block the run touches, in the block hashes
 * (so only the same image hits the prefix cache past the run's start) and in the KV events' {@code extra_keys} (map
 * form, vLLM 0.23+), where a router recomputes the hashes from the event's tokens and keys.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MultimodalKvEventsIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int IMAGE_PAD = 151655;
    private static final String SYSTEM = "You describe pictures for a museum catalogue. Name the objects you see, " +
        "their colours and their arrangement, in two sentences at most, and say nothing you cannot see.";

    @Test
    void shouldHashAnImagesPlaceholdersWithItsIdentifierAndPublishIt() throws Exception
    {
        final Path qwen3 = Path.of(System.getProperty("tapedeck.test.qwen3Tokenizer", "missing"));
        assertTrue(Files.isRegularFile(qwen3), "the build fetches the Qwen3 tokenizer.json: " + qwen3);
        final CommandLine cli = Main.commandLine();
        cli.parseArgs("serve", "--port", "0", "--model", "Qwen/Qwen3-8B", "--tokenizer", qwen3.toString(),
            "--enable-kv-cache-events", "--kv-events-endpoint", "tcp://127.0.0.1:*", "--kv-events-replay-endpoint",
            "tcp://127.0.0.1:*", "--vllm-version", "0.23.0", "--enable-prompt-tokens-details");
        final ServeCommand serve = cli.getSubcommands().get("serve").getCommand();
        final Serve started = Serve.start(serve.context());
        try (ZContext context = new ZContext())
        {
            final String base = "http://127.0.0.1:" + started.httpServer().ports().get(0);
            final String topic = started.kvEventPublishers().get(0).settings().topic();
            final KvEventSubscriber sub = new KvEventSubscriber(context, started.kvEventPublishers().get(0), topic);

            final JsonNode tokens = post(base + "/tokenize", "{\"messages\":" + messages("cat.png", "What is it?") +
                "}");
            final int[] ids = ints(tokens.get("tokens"));
            int offset = 0;
            while (IMAGE_PAD != ids[offset])
            {
                offset++;
            }
            int length = 0;
            while (offset + length < ids.length && IMAGE_PAD == ids[offset + length])
            {
                length++;
            }
            assertEquals(256, length, "an image is 256 <|image_pad|> tokens");

            final JsonNode first = post(base + "/v1/chat/completions", chat("cat.png", "What is it?"));
            assertEquals(ids.length, first.at("/usage/prompt_tokens").asInt(), "/tokenize counts as the chat does");
            final String identifier = sha256Hex("image\0{\"url\":\"https://example.org/cat.png\"}");
            final java.util.Map<String, Value> stored = firstEvent(sub.next().payload());
            assertEquals("BlockStored", stored.get("type").asStringValue().asString());
            final int[] eventTokens = ints(stored.get("token_ids"));
            final int[] promptBlocks = java.util.Arrays.copyOf(ids, eventTokens.length);
            assertArrayEquals(promptBlocks, eventTokens, "the stored blocks hold the prompt's tokens");
            final MediaSpans media = new MediaSpans(new String[] {identifier}, new int[] {offset},
                new int[] {length});
            assertArrayEquals(new BlockHasher("0").blockHashes(eventTokens, 16, null, null, media),
                longs(stored.get("block_hashes")), "a router's hashes from the event's tokens and the image");
            final java.util.List<Value> keys = stored.get("extra_keys").asArrayValue().list();
            assertEquals(eventTokens.length / 16, keys.size(), "one entry a block");
            for (int block = 0; block < keys.size(); block++)
            {
                final boolean holdsImage = block * 16 < offset + length && offset < (block + 1) * 16;
                assertEquals(holdsImage ? "[\"" + identifier + "\"]" : "null", keys.get(block).toJson(),
                    "block " + block);
            }

            final int sameImage = post(base + "/v1/chat/completions", chat("cat.png", "And its colour?"))
                .at("/usage/prompt_tokens_details/cached_tokens").asInt();
            assertTrue(sameImage >= (offset + length) / 16 * 16, "the same image is a prefix hit through its run: " +
                sameImage + " cached, run ends at " + (offset + length));
            final int otherImage = post(base + "/v1/chat/completions", chat("dog.png", "What is it?"))
                .at("/usage/prompt_tokens_details/cached_tokens").asInt();
            assertEquals(offset / 16 * 16, otherImage, "another image shares only the blocks before its run");
        }
        finally
        {
            started.close();
        }
    }

    private static String messages(final String image, final String question)
    {
        return "[{\"role\":\"system\",\"content\":\"" + SYSTEM + "\"},{\"role\":\"user\",\"content\":[" +
            "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.org/" + image + "\"}}," +
            "{\"type\":\"text\",\"text\":\"" + question + "\"}]}]";
    }

    private static String chat(final String image, final String question)
    {
        return "{\"model\":\"Qwen/Qwen3-8B\",\"max_tokens\":2,\"messages\":" + messages(image, question) + "}";
    }

    private static JsonNode post(final String url, final String body) throws IOException, InterruptedException
    {
        final HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    private static String sha256Hex(final String text) throws Exception
    {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(
            StandardCharsets.UTF_8)));
    }

    private static java.util.Map<String, Value> firstEvent(final byte[] payload) throws IOException
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload))
        {
            final Value event = unpacker.unpackValue().asArrayValue().get(1).asArrayValue().get(0);
            final java.util.Map<String, Value> out = new java.util.HashMap<>();
            event.asMapValue().map().forEach((key, value) -> out.put(key.asStringValue().asString(), value));
            return out;
        }
    }

    private static int[] ints(final JsonNode array)
    {
        final int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++)
        {
            out[i] = array.get(i).asInt();
        }
        return out;
    }

    private static int[] ints(final Value array)
    {
        return array.asArrayValue().list().stream().mapToInt(v -> v.asIntegerValue().toInt()).toArray();
    }

    private static long[] longs(final Value array)
    {
        return array.asArrayValue().list().stream().mapToLong(v -> v.asIntegerValue().asBigInteger().longValue())
            .toArray();
    }
}
