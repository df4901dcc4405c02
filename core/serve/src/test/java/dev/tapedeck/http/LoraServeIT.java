package dev.tapedeck.http;

import java.io.IOException;
import java.math.BigInteger;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import dev.tapedeck.net.ZmqConnector;
import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.kvevents.KvEventPublishers;
import dev.tapedeck.kvevents.KvEventStager;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.lora.LoraModules;
import dev.tapedeck.lora.LoraSettings;
import dev.tapedeck.serve.ServeContext;
import dev.tapedeck.testing.NoNettyLeaks;
import dev.tapedeck.testing.Sse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * LoRA adapters over real HTTP on 127.0.0.1, as {@code serve --enable-lora --lora-modules sql=... '{"name":"chat",
 * ...}' --max-loras 1} runs them: {@code /v1/models} lists the adapters after the base model; a request naming an
 * adapter streams and reports it as its model; {@code cached_tokens} shows prefix sharing only within one adapter (and
 * within the base model); KV events received by a real JeroMQ SUB and decoded with msgpack-core carry the adapter's
 * {@code lora_id} and {@code lora_name} and the hashes a router computes with the adapter's name; {@code /metrics}
 * shows {@code vllm:lora_requests_info} with the running and waiting adapters while the second adapter's request is
 * held back by {@code --max-loras}; the runtime load and unload endpoints answer as vLLM's.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(NoNettyLeaks.class)
class LoraServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = TestServer.MODEL;
    private static final String TOPIC = "kv@lora-test";
    private static final String SHARED = "the quick brown fox jumps over the lazy dog while the cat sleeps ".repeat(12);
    private static final String INFO = "vllm:lora_requests_info";

    static ServeContext options()
    {
        return TestServer.context()
            .servedModelNames(List.of(MODEL))
            .enablePromptTokensDetails(true)
            .lora(new LoraSettings(true, LoraModules.parse(List.of("sql=/adapters/sql",
                "{\"name\":\"chat\",\"path\":\"/adapters/chat\",\"base_model_name\":\"base-v1\"}"), List.of(MODEL)),
                16, 0));
    }

    private static String completion(final String model, final String prompt, final int maxTokens)
    {
        return "{\"model\":" + (null == model ? "null" : "\"" + model + "\"") + ",\"prompt\":\"" + prompt +
            "\",\"max_tokens\":" + maxTokens + "}";
    }

    /** POST a completion; return its {@code cached_tokens}, checking the status and the reported model. */
    private static int cachedTokens(final TestServer server, final String model, final String prompt)
        throws IOException, InterruptedException
    {
        final HttpResponse<String> response = server.post("/v1/completions", completion(model, prompt, 2));
        assertEquals(200, response.statusCode(), response.body());
        final JsonNode body = JSON.readTree(response.body());
        assertEquals(null == model ? MODEL : model, body.get("model").asText());
        return body.at("/usage/prompt_tokens_details/cached_tokens").asInt(-1);
    }

    @Test
    void shouldListStreamCacheAndPublishPerAdapter() throws Exception
    {
        final KvEventStager stager = new KvEventStager(1 << 20);
        try (TestServer server = new TestServer(options(), c -> c.maxLoras(1).kvEventSink(stager));
            KvEventPublishers publishing = new KvEventPublishers();
            ZContext context = new ZContext())
        {
            final KvEventPublisher publisher = publishing.add(KvEventsSettings.publishOn("tcp://127.0.0.1:*")
                .topic(TOPIC).eventsAsMaps(true).bufferSteps(100).ringBytes(1 << 20), stager);
            publishing.start();
            final JsonNode models = JSON.readTree(server.get("/v1/models").body()).get("data");
            assertEquals(3, models.size(), models.toString());
            assertEquals(MODEL, models.get(0).get("id").asText());
            assertTrue(models.get(0).get("parent").isNull());
            assertEquals("sql", models.get(1).get("id").asText());
            assertEquals("/adapters/sql", models.get(1).get("root").asText());
            assertEquals(MODEL, models.get(1).get("parent").asText(), "the base model's served name");
            assertTrue(models.get(1).get("max_model_len").isNull());
            assertEquals("model", models.get(1).get("object").asText());
            assertEquals("chat", models.get(2).get("id").asText());
            assertEquals("/adapters/chat", models.get(2).get("root").asText());
            assertEquals("base-v1", models.get(2).get("parent").asText(), "base_model_name of the JSON form");

            final HttpResponse<String> streamed = server.post("/v1/chat/completions", "{\"model\":\"sql\"," +
                "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":6,\"stream\":true," +
                "\"stream_options\":{\"include_usage\":true}}");
            assertEquals(200, streamed.statusCode(), streamed.body());
            final Sse.Stream stream = Sse.parse(streamed.body());
            assertTrue(stream.done());
            assertTrue(stream.events().size() >= 3);
            for (final JsonNode event : stream.events())
            {
                assertEquals("sql", event.get("model").asText(), "every chunk reports the adapter");
            }
            assertEquals(6, stream.usage().get("completion_tokens").asInt());
            assertEquals(404, server.post("/v1/completions", completion("nope", "x", 2)).statusCode());

            final ZMQ.Socket sub = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS).open(context, SocketType.SUB, s ->
            {
                s.setReceiveTimeOut(10_000);
                s.subscribe("kv@".getBytes(StandardCharsets.UTF_8));
            }, publisher.endpoint(), System.nanoTime() + 10_000_000_000L);

            final String prompt = SHARED + "and then it asks about red apples";
            final int[] tokens = TestServer.tokenizer().encode(prompt);
            final BlockHasher router = new BlockHasher("0");
            final int fullBlocks = tokens.length / 16;
            final int sharable = Math.min(fullBlocks, (tokens.length - 1) / 16) * 16;
            assertTrue(fullBlocks >= 8, "a long prompt: " + tokens.length);

            awaitSubscription(server, sub, router);
            assertEquals(0, cachedTokens(server, "sql", prompt));
            assertStored(sub, router.blockHashes(tokens, 16, "sql", null), 1, "sql");
            assertEquals(0, cachedTokens(server, "chat", prompt), "another adapter shares nothing");
            assertStored(sub, router.blockHashes(tokens, 16, "chat", null), 2, "chat");
            assertEquals(0, cachedTokens(server, null, prompt), "the base model shares nothing with adapters");
            assertStored(sub, router.blockHashes(tokens, 16, null, null), null, null);
            assertEquals(sharable, cachedTokens(server, "sql", prompt), "the same adapter shares its blocks");
            assertEquals(sharable, cachedTokens(server, MODEL, prompt));
            final String other = "an unrelated prompt on mountains, glaciers and long winter nights ".repeat(4);
            assertEquals(0, cachedTokens(server, MODEL, other));
            // the cache hits stored nothing new: the next batch is the unrelated prompt's
            assertStored(sub, router.blockHashes(TestServer.tokenizer().encode(other), 16, null, null), null, null);
        }
    }

    /**
     * A SUB's subscription reaches the publisher some time after it connects: send base requests with prompts of their
     * own until one's batch arrives, then one marker request and drain up to its batch, so nothing is left in flight.
     */
    private static void awaitSubscription(final TestServer server, final ZMQ.Socket sub, final BlockHasher router)
        throws IOException, InterruptedException
    {
        sub.setReceiveTimeOut(100);
        byte[] first = null;
        for (int i = 0; null == first && i < 100; i++)
        {
            cachedTokens(server, null, "warm-up request number " + i + " about rivers and bridges ".repeat(4));
            first = receive(sub);
        }
        assertNotNull(first, "the subscription never took effect");
        final String marker = "the marker request about lighthouses and ships ".repeat(4);
        final long[] markerHashes = router.blockHashes(TestServer.tokenizer().encode(marker), 16, null, null);
        cachedTokens(server, null, marker);
        sub.setReceiveTimeOut(10_000);
        while (true)
        {
            final byte[] payload = receive(sub);
            assertNotNull(payload, "the marker's batch within 10 s");
            if (java.util.Arrays.equals(markerHashes, storedHashes(stored(payload))))
            {
                return;
            }
        }
    }

    /** @return the payload of the next batch, or null when none came within the receive timeout. */
    private static byte[] receive(final ZMQ.Socket sub)
    {
        final byte[] topic = sub.recv(0);
        if (null == topic)
        {
            return null;
        }
        assertEquals(TOPIC, new String(topic, StandardCharsets.UTF_8));
        assertEquals(8, sub.recv(0).length, "the sequence frame");
        final byte[] payload = sub.recv(0);
        assertFalse(sub.hasReceiveMore(), "three frames");
        return payload;
    }

    /** @return the one {@code BlockStored} event of a batch, as a map (0.23+ encoding). */
    private static Map<Value, Value> stored(final byte[] payload) throws IOException
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload))
        {
            final ArrayValue batch = unpacker.unpackValue().asArrayValue();
            final List<Value> events = batch.get(1).asArrayValue().list();
            assertEquals(1, events.size(), events.toString());
            final Map<Value, Value> stored = events.get(0).asMapValue().map();
            assertEquals("BlockStored", get(stored, "type").asStringValue().asString());
            return stored;
        }
    }

    private static long[] storedHashes(final Map<Value, Value> stored)
    {
        return get(stored, "block_hashes").asArrayValue().list().stream()
            .mapToLong(h -> h.asIntegerValue().asBigInteger().longValue()).toArray();
    }

    /** Receive one batch holding one {@code BlockStored} and check its blocks and adapter. */
    private static void assertStored(final ZMQ.Socket sub, final long[] hashes, final Integer loraId,
        final String loraName) throws IOException
    {
        final byte[] payload = receive(sub);
        assertNotNull(payload, "a KV event batch within 10 s");
        final Map<Value, Value> stored = stored(payload);
        assertArrayEquals(hashes, storedHashes(stored));
        assertTrue(get(stored, "parent_block_hash").isNilValue());
        final Value id = get(stored, "lora_id");
        final Value name = get(stored, "lora_name");
        if (null == loraId)
        {
            assertTrue(id.isNilValue() && name.isNilValue(), "base model: nil adapter " + stored);
        }
        else
        {
            assertEquals(BigInteger.valueOf(loraId), id.asIntegerValue().asBigInteger());
            assertEquals(loraName, name.asStringValue().asString());
        }
    }

    private static Value get(final Map<Value, Value> map, final String key)
    {
        final Value value = map.get(ValueFactory.newString(key));
        assertNotNull(value, key + " in " + map);
        return value;
    }

    @Test
    void shouldShowRunningAndWaitingAdaptersWhileMaxLorasHoldsOneBack() throws Exception
    {
        try (TestServer server = new TestServer(options(), c -> c.maxLoras(1)))
        {
            final Map<String, ExpositionParser.Family> idle = ExpositionParser.parse(server.get("/metrics").body());
            assertEquals(List.of(Map.of("max_lora", "1", "running_lora_adapters", "", "waiting_lora_adapters", "")),
                idle.get(INFO).samples().stream().map(ExpositionParser.Sample::labels).toList());
            assertEquals("gauge", idle.get(INFO).type());

            final CompletableFuture<HttpResponse<String>> chat;
            try (RawHttp long1 = new RawHttp(server.ports.get(0)))
            {
                long1.post("/v1/completions", "{\"model\":\"sql\",\"prompt\":\"count\",\"max_tokens\":6000," +
                    "\"stream\":true}");
                assertTrue(long1.readHead().startsWith("HTTP/1.1 200"));
                long1.readChunk(); // the first token: the sql request runs
                chat = server.client.sendAsync(HttpRequest.newBuilder(server.uri("/v1/chat/completions"))
                    .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                        "{\"model\":\"chat\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":3}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
                double deferred = 0;
                for (int i = 0; i < 1000 && deferred < 1; i++)
                {
                    deferred = server.metric("vllm:num_requests_waiting_by_reason{engine=\"0\",model_name=\"" +
                        MODEL + "\",reason=\"deferred\"}");
                    Thread.sleep(5);
                }
                assertEquals(1.0, deferred, "the chat request waits for the LoRA cap");
                final Map<String, ExpositionParser.Family> busy = ExpositionParser.parse(
                    server.get("/metrics").body());
                final ExpositionParser.Sample current = latest(busy.get(INFO));
                assertEquals(Map.of("max_lora", "1", "running_lora_adapters", "sql", "waiting_lora_adapters", "chat"),
                    current.labels());
                assertTrue(current.value() > System.currentTimeMillis() / 1000.0 - 30 &&
                    current.value() <= System.currentTimeMillis() / 1000.0 + 1, "Unix seconds: " + current.value());
                final ExpositionParser.Sample idleSeries = busy.get(INFO).samples().get(0);
                assertEquals("", idleSeries.labels().get("running_lora_adapters"), "the idle series stays");
                assertTrue(idleSeries.value() <= current.value(), "older");

                final HttpResponse<String> base = server.post("/v1/completions", completion(MODEL, "b", 2));
                assertEquals(200, base.statusCode(), "base requests pass the LoRA cap");
                assertFalse(chat.isDone(), "the chat request still waits");
            } // the client goes: the sql request is aborted, the chat request runs
            final HttpResponse<String> answer = chat.get(20, TimeUnit.SECONDS);
            assertEquals(200, answer.statusCode(), answer.body());
            assertEquals("chat", JSON.readTree(answer.body()).get("model").asText());
            for (int i = 0; i < 1000 && server.metric("vllm:num_requests_running{engine=\"0\",model_name=\"" + MODEL +
                "\"}") > 0; i++)
            {
                Thread.sleep(5);
            }
            final ExpositionParser.Sample after = latest(ExpositionParser.parse(server.get("/metrics").body())
                .get(INFO));
            assertEquals("", after.labels().get("running_lora_adapters"));
            assertEquals("", after.labels().get("waiting_lora_adapters"));
        }
    }

    /**
     * The current state: the series with the largest value. The exposition prints Unix seconds of 1e9 and more with
     * no fraction (as prometheus_client does), so series set within one second tie; the current one is printed last.
     */
    private static ExpositionParser.Sample latest(final ExpositionParser.Family family)
    {
        ExpositionParser.Sample latest = null;
        for (final ExpositionParser.Sample sample : family.samples())
        {
            if (null == latest || sample.value() >= latest.value())
            {
                latest = sample;
            }
        }
        return latest;
    }

    @Test
    void shouldLoadAndUnloadAdaptersAtRuntimeWithVllmsAnswers() throws Exception
    {
        try (TestServer server = new TestServer(options(), c -> c))
        {
            final HttpResponse<String> loaded = server.post("/v1/load_lora_adapter",
                "{\"lora_name\":\"summaries\",\"lora_path\":\"/adapters/summaries\"}");
            assertEquals(200, loaded.statusCode());
            assertEquals("Success: LoRA adapter 'summaries' added successfully.", loaded.body());
            assertError(server.post("/v1/load_lora_adapter", "{\"lora_name\":\"summaries\",\"lora_path\":\"/x\"}"),
                400, "InvalidUserInput", "The lora adapter 'summaries' has already been loaded.");
            assertError(server.post("/v1/load_lora_adapter", "{\"lora_name\":\"x\"}"), 400, "InvalidUserInput",
                "Both 'lora_name' and 'lora_path' must be provided.");
            final JsonNode models = JSON.readTree(server.get("/v1/models").body()).get("data");
            assertEquals("summaries", models.get(3).get("id").asText());
            assertEquals("/adapters/summaries", models.get(3).get("root").asText());
            assertEquals(0, cachedTokens(server, "summaries", "hello there"));

            final HttpResponse<String> unloaded = server.post("/v1/unload_lora_adapter",
                "{\"lora_name\":\"summaries\"}");
            assertEquals(200, unloaded.statusCode());
            assertEquals("Success: LoRA adapter 'summaries' removed successfully.", unloaded.body());
            assertError(server.post("/v1/unload_lora_adapter", "{\"lora_name\":\"summaries\"}"), 404,
                "NotFoundError", "The lora adapter 'summaries' cannot be found.");
            assertEquals(404, server.post("/v1/completions", completion("summaries", "x", 2)).statusCode());
            assertEquals(3, JSON.readTree(server.get("/v1/models").body()).get("data").size());
        }
        try (TestServer plain = TestServer.start())
        {
            final HttpResponse<String> off = plain.post("/v1/load_lora_adapter",
                "{\"lora_name\":\"a\",\"lora_path\":\"/a\"}");
            assertEquals(404, off.statusCode(), "without --enable-lora the route does not exist");
            assertEquals("{\"detail\":\"Not Found\"}", off.body());
            assertFalse(plain.get("/metrics").body().contains(INFO), "no LoRA metric without --enable-lora");
        }
    }

    @Test
    void shouldBoundRuntimeLoadsByMaxCpuLorasAndRefuseHostileNames() throws Exception
    {
        try (TestServer server = new TestServer(options().lora(new LoraSettings(true, LoraModules.parse(
            List.of("sql=/adapters/sql", "chat=/adapters/chat"), List.of(MODEL)), 16, 3))))
        {
            assertEquals(200, server.post("/v1/load_lora_adapter",
                "{\"lora_name\":\"third\",\"lora_path\":\"/x\"}").statusCode());
            assertError(server.post("/v1/load_lora_adapter", "{\"lora_name\":\"fourth\",\"lora_path\":\"/x\"}"),
                400, "InvalidUserInput", "Cannot load more than 3 LoRA adapters (--max-cpu-loras); unload one first.");
            assertEquals(200, server.post("/v1/unload_lora_adapter", "{\"lora_name\":\"third\"}").statusCode());
            assertEquals(200, server.post("/v1/load_lora_adapter",
                "{\"lora_name\":\"fourth\",\"lora_path\":\"/x\"}").statusCode(), "room again after an unload");
            assertError(server.post("/v1/load_lora_adapter", "{\"lora_name\":\"" + "n".repeat(300) +
                "\",\"lora_path\":\"/x\"}"), 400, "InvalidUserInput",
                "'lora_name' must be at most 256 characters without control characters.");
            assertEquals(400, server.post("/v1/load_lora_adapter",
                "{\"lora_name\":\"a\\nb\",\"lora_path\":\"/x\"}").statusCode(), "a newline in a name");
        }
    }

    private static void assertError(final HttpResponse<String> response, final int status, final String type,
        final String message) throws IOException
    {
        assertEquals(status, response.statusCode(), response.body());
        final JsonNode error = JSON.readTree(response.body()).get("error");
        assertEquals(type, error.get("type").asText());
        assertEquals(message, error.get("message").asText());
        assertEquals(status, error.get("code").asInt());
    }
}
