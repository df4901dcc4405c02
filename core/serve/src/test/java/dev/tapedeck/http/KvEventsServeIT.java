package dev.tapedeck.http;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.ZContext;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.kvevents.KvEventPublishers;
import dev.tapedeck.kvevents.KvEventStager;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.testing.KvEventSubscriber;
import dev.tapedeck.testing.NoNettyLeaks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * KV-cache events end to end: {@code serve} over real HTTP, the publisher on an ephemeral 127.0.0.1 port, a JeroMQ SUB
 * filtering on {@code kv@} and every batch decoded with msgpack-core (an independent decoder). Checks the frames
 * (topic, consecutive sequence numbers from 0), the batch ({@code [ts, events, rank]}), that stored hashes equal the
 * block hashes a router computes from the prompt's token ids with the same algorithm and seed, that parents chain and
 * token ids are the prompt's, that a tiny pool reports evictions of the first request's tail blocks, that a reset
 * reports {@code AllBlocksCleared}, and that the replay socket returns the batches byte for byte.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(NoNettyLeaks.class)
class KvEventsServeIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOPIC = "kv@127.0.0.1:8000@" + TestServer.MODEL;
    private static final String[] STORED_FIELDS = {"type", "block_hashes", "parent_block_hash", "token_ids",
        "block_size", "lora_id", "medium", "lora_name"};
    private static final String[] REMOVED_FIELDS = {"type", "block_hashes", "medium"};
    private static final String SHARED = "the quick brown fox jumps over the lazy dog while the cat sleeps ".repeat(12);

    /** One received message. */
    private record Batch(long sequence, byte[] payload, double ts, List<Value> events, long rank)
    {
    }

    /** One decoded event. */
    private record Event(String type, long[] hashes, Long parent, int[] tokens, int blockSize)
    {
    }

    private static KvEventsSettings settings(final boolean maps)
    {
        return KvEventsSettings.publishOn("tcp://127.0.0.1:*").replayEndpoint("tcp://127.0.0.1:*").topic(TOPIC)
            .eventsAsMaps(maps).bufferSteps(100).ringBytes(1 << 20);
    }

    /** The next batch in sequence order, live or from the replay socket, decoded. */
    private static Batch next(final KvEventSubscriber sub)
    {
        final KvEventSubscriber.Batch batch = sub.next();
        return decode(batch.sequence(), batch.payload());
    }

    private static Batch decode(final long sequence, final byte[] payload)
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload))
        {
            final ArrayValue batch = unpacker.unpackValue().asArrayValue();
            assertTrue(!unpacker.hasNext(), "one value");
            assertEquals(3, batch.size(), "[ts, events, data_parallel_rank]");
            return new Batch(sequence, payload, batch.get(0).asFloatValue().toDouble(), batch.get(1).asArrayValue()
                .list(), batch.get(2).asIntegerValue().toLong());
        }
        catch (final IOException ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static Value field(final Value event, final String name, final String[] positions)
    {
        if (event.isMapValue())
        {
            final MapValue map = event.asMapValue();
            final Value value = map.map().get(ValueFactory.newString(name));
            assertNotNull(value, name + " in " + event);
            return value;
        }
        return event.asArrayValue().get(Arrays.asList(positions).indexOf(name));
    }

    private static Event event(final Value value)
    {
        final String type = field(value, "type", STORED_FIELDS).asStringValue().asString();
        if ("AllBlocksCleared".equals(type))
        {
            assertEquals(1, value.isMapValue() ? value.asMapValue().size() : value.asArrayValue().size());
            return new Event(type, new long[0], null, new int[0], 0);
        }
        final String[] positions = "BlockStored".equals(type) ? STORED_FIELDS : REMOVED_FIELDS;
        if (value.isArrayValue())
        {
            assertEquals(positions.length, value.asArrayValue().size(), "the positional fields of " + type);
        }
        final long[] hashes = field(value, "block_hashes", positions).asArrayValue().list().stream()
            .mapToLong(h -> h.asIntegerValue().asBigInteger().longValue()).toArray();
        assertEquals("GPU", field(value, "medium", positions).asStringValue().asString());
        if (!"BlockStored".equals(type))
        {
            return new Event(type, hashes, null, new int[0], 0);
        }
        final Value parent = field(value, "parent_block_hash", positions);
        final int[] tokens = field(value, "token_ids", positions).asArrayValue().list().stream()
            .mapToInt(t -> t.asIntegerValue().toInt()).toArray();
        final int blockSize = field(value, "block_size", positions).asIntegerValue().toInt();
        assertTrue(field(value, "lora_id", positions).isNilValue());
        assertTrue(field(value, "lora_name", positions).isNilValue());
        assertEquals(hashes.length * blockSize, tokens.length, "token_ids cover exactly the stored blocks");
        return new Event(type, hashes, parent.isNilValue() ? null : parent.asIntegerValue().asBigInteger().longValue(),
            tokens, blockSize);
    }

    private static List<Event> events(final List<Batch> batches)
    {
        final List<Event> events = new ArrayList<>();
        for (final Batch batch : batches)
        {
            batch.events().forEach(e -> events.add(event(e)));
        }
        return events;
    }

    private static String completion(final String prompt)
    {
        return "{\"prompt\":\"" + prompt + "\",\"max_tokens\":2}";
    }

    private static int promptTokens(final TestServer server, final String prompt) throws Exception
    {
        return JSON.readTree(server.post("/v1/completions", completion(prompt)).body()).at("/usage/prompt_tokens")
            .asInt();
    }

    @Test
    void shouldPublishStoredBlocksWithTheHashesARouterComputesAndReplayThem() throws Exception
    {
        final String first = SHARED + "and then the first request asks about red apples";
        final String second = SHARED + "whereas the second one wants to know about green pears instead";
        final int[] firstTokens = TestServer.tokenizer().encode(first);
        final int[] secondTokens = TestServer.tokenizer().encode(second);
        final BlockHasher router = new BlockHasher("0");
        final long[] firstHashes = router.blockHashes(firstTokens, 16, null, null);
        final long[] secondHashes = router.blockHashes(secondTokens, 16, null, null);
        int shared = 0;
        while (shared < firstHashes.length && shared < secondHashes.length && firstHashes[shared] ==
            secondHashes[shared])
        {
            shared++;
        }
        assertTrue(shared >= 8 && shared < secondHashes.length, "a long shared prefix: " + shared + " blocks");

        final KvEventStager stager = new KvEventStager(1 << 20);
        try (TestServer server = new TestServer(TestServer.context(), c -> c.kvEventSink(stager));
            KvEventPublishers publishing = new KvEventPublishers();
            ZContext context = new ZContext())
        {
            final KvEventPublisher publisher = publishing.add(settings(false), stager);
            publishing.start();
            final KvEventSubscriber sub = new KvEventSubscriber(context, publisher, TOPIC);
            final double before = System.currentTimeMillis() / 1000.0;
            assertEquals(firstTokens.length, promptTokens(server, first), "the test tokenizes as serve does");
            assertEquals(secondTokens.length, promptTokens(server, second));
            final List<Batch> batches = List.of(next(sub), next(sub));
            for (int i = 0; i < batches.size(); i++)
            {
                assertEquals(i, batches.get(i).sequence(), "consecutive from 0");
                assertEquals(0, batches.get(i).rank());
                assertTrue(batches.get(i).ts() >= before - 1 && batches.get(i).ts() <= System.currentTimeMillis() /
                    1000.0 + 1, "ts is wall-clock seconds: " + batches.get(i).ts());
            }
            final List<Event> events = events(batches);
            assertEquals(2, events.size(), "one BlockStored per request: " + events);

            final Event firstStored = events.get(0);
            assertEquals("BlockStored", firstStored.type());
            assertArrayEquals(firstHashes, firstStored.hashes(), "every full block of the first prompt");
            assertEquals(null, firstStored.parent(), "the first block's parent is the root: nil");
            assertArrayEquals(Arrays.copyOf(firstTokens, firstHashes.length * 16), firstStored.tokens());
            assertEquals(16, firstStored.blockSize());

            final Event secondStored = events.get(1);
            assertArrayEquals(Arrays.copyOfRange(secondHashes, shared, secondHashes.length), secondStored.hashes(),
                "only the blocks after the shared prefix are new");
            assertEquals(secondHashes[shared - 1], secondStored.parent(), "chained to the last shared block");
            assertEquals(firstHashes[shared - 1], secondStored.parent());
            assertArrayEquals(Arrays.copyOfRange(secondTokens, shared * 16, secondHashes.length * 16),
                secondStored.tokens());

            final long[] poolHashes = server.server.onEngine(0, (Engine e) ->
            {
                final long[] cached = new long[secondHashes.length];
                for (int i = 0; i < cached.length; i++)
                {
                    cached[i] = e.kvBlockPool().cachedBlock(secondHashes[i]) >= 0 ? secondHashes[i] : 0;
                }
                return cached;
            });
            assertArrayEquals(secondHashes, poolHashes, "the pool caches exactly the hashes it published");

            // a subscriber that missed everything asks the replay socket
            final List<Batch> replayed = replay(context, publisher.replayEndpoint(), 0);
            assertEquals(2, replayed.size());
            for (int i = 0; i < 2; i++)
            {
                assertEquals(i, replayed.get(i).sequence());
                assertArrayEquals(batches.get(i).payload(), replayed.get(i).payload(), "byte for byte");
            }
            assertEquals(1, replay(context, publisher.replayEndpoint(), 1).size(), "from a later sequence");
            assertEquals(0, replay(context, publisher.replayEndpoint(), 7).size(), "nothing yet: just the end");
            assertEquals(2, publisher.publishedBatches());
            assertEquals(0, publisher.droppedBatches());
        }
    }

    @Test
    void shouldReportEvictionsOfTheTailBlocksAndAResetAsMaps() throws Exception
    {
        final String first = "a first prompt about the history of the river and its many bridges ".repeat(18);
        final String second = "an unrelated second prompt on mountains, glaciers and long winter nights ".repeat(38);
        final int[] firstTokens = TestServer.tokenizer().encode(first);
        final int[] secondTokens = TestServer.tokenizer().encode(second);
        final long[] firstHashes = new BlockHasher("0").blockHashes(firstTokens, 16, null, null);
        final int blocks = 40;
        assertTrue(firstTokens.length / 16 + secondTokens.length / 16 + 2 > blocks, "the pool cannot hold both: " +
            firstTokens.length + " + " + secondTokens.length + " tokens");

        final KvEventStager stager = new KvEventStager(1 << 20);
        try (TestServer server = new TestServer(TestServer.context(), c -> c.kvEventSink(stager)
                .kvCacheBlocks(blocks).maxModelLen(blocks * 16));
            KvEventPublishers publishing = new KvEventPublishers();
            ZContext context = new ZContext())
        {
            final KvEventPublisher publisher = publishing.add(settings(true), stager);
            publishing.start();
            final KvEventSubscriber sub = new KvEventSubscriber(context, publisher, TOPIC);
            assertEquals(firstTokens.length, promptTokens(server, first));
            final List<Event> firstEvents = events(List.of(next(sub)));
            assertEquals(1, firstEvents.size());
            assertArrayEquals(firstHashes, firstEvents.get(0).hashes());

            assertEquals(secondTokens.length, promptTokens(server, second));
            final Batch secondBatch = next(sub);
            assertEquals(1, secondBatch.sequence());
            final List<Event> events = events(List.of(secondBatch));
            final List<Long> removed = new ArrayList<>();
            int index = 0;
            while ("BlockRemoved".equals(events.get(index).type()))
            {
                assertEquals(1, events.get(index).hashes().length, "one BlockRemoved per evicted block, as vLLM");
                removed.add(events.get(index++).hashes()[0]);
            }
            assertTrue(removed.size() >= 1, "evictions before the new blocks are stored: " + events);
            for (int i = 0; i < removed.size(); i++)
            {
                assertEquals(firstHashes[firstHashes.length - 1 - i], removed.get(i),
                    "the first request's tail goes first (it freed its blocks last first)");
            }
            assertEquals("BlockStored", events.get(index).type());
            assertEquals(null, events.get(index).parent());
            assertEquals(index + 1, events.size());

            // vLLM's endpoint: POST only, 200 with no body
            assertEquals(405, server.client.send(java.net.http.HttpRequest.newBuilder(
                server.uri("/reset_prefix_cache")).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode());
            final java.net.http.HttpResponse<String> reset = server.post("/reset_prefix_cache", "");
            assertEquals(200, reset.statusCode());
            assertEquals("", reset.body());
            assertEquals(0, (int)server.server.onEngine(0, (Engine e) -> e.kvBlockPool().cachedBlocks()),
                "the pool forgot every block");
            final Batch cleared = next(sub);
            assertEquals(2, cleared.sequence());
            assertEquals(List.of("AllBlocksCleared"), events(List.of(cleared)).stream().map(Event::type).toList());
            assertTrue(sub.liveBatches() >= 1, "the live path works: at least one batch came live");
        }
    }

    private static List<Batch> replay(final ZContext context, final String endpoint, final long from)
    {
        return KvEventSubscriber.replay(context, endpoint, from).stream()
            .map(b -> decode(b.sequence(), b.payload())).toList();
    }
}
