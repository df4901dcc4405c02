package dev.tapedeck.enginecore;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.ZContext;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kvevents.KvEventPublisher;
import dev.tapedeck.kvevents.KvEventsSettings;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.VllmLine;
import dev.tapedeck.testing.KvEventSubscriber;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * KV events under {@code play}, wired as {@code play --enable-kv-cache-events} wires them: two engines behind a test
 * frontend, each with its own publisher (rank i, port + i), map-encoded events as the 0.28 line sends them. The second
 * engine's stream carries its rank, a {@code BlockStored} map for a prompt sent to it, and {@code AllBlocksCleared}
 * after the frontend's {@code reset_prefix_cache} utility call.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlayKvEventsIT
{
    private static final LatencyModel FAST =
        new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test"));
    @Test
    void shouldPublishMapEventsWithTheEnginesRankAndClearOnResetPrefixCache() throws Exception
    {
        // engine i publishes as data-parallel rank i, each on its own free port with its own replay socket
        final KvEventsSettings base = KvEventsSettings.publishOn("tcp://127.0.0.1:*")
            .replayEndpoint("tcp://127.0.0.1:*").topic("kv@pod@model").eventsAsMaps(VllmLine.NEWEST.kvEventsAsMaps())
            .bufferSteps(100).ringBytes(1 << 20);
        Play server = null;
        try (TestFrontend frontend = new TestFrontend(1); ZContext context = new ZContext())
        {
            server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).engineCount(2)
                .handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0).kvEvents(base)
                .engine(new EngineConfig().maxModelLen(4096).latencyModel(FAST)));
            final List<KvEventPublisher> publishers = server.kvEventPublishers();
            frontend.awaitEngines(2);

            final KvEventSubscriber sub = new KvEventSubscriber(context, publishers.get(1), "kv@pod@model");

            final int[] prompt = new int[40];
            for (int i = 0; i < prompt.length; i++)
            {
                prompt[i] = 5000 + i;
            }
            frontend.add(1, "to-rank-1", prompt, 2, 0);
            final ArrayValue stored = receive(sub, 0);
            assertEquals(1, stored.get(2).asIntegerValue().toInt(), "data_parallel_rank of engine 1");
            final MapValue event = stored.get(1).asArrayValue().get(0).asMapValue();
            assertEquals("BlockStored", field(event, "type").asStringValue().asString());
            final long[] hashes = field(event, "block_hashes").asArrayValue().list().stream()
                .mapToLong(h -> h.asIntegerValue().asBigInteger().longValue()).toArray();
            assertArrayEquals(new BlockHasher("0").blockHashes(prompt, 16, null, null), hashes, "2 full blocks");
            assertTrue(field(event, "parent_block_hash").isNilValue());
            assertArrayEquals(Arrays.copyOf(prompt, 32), field(event, "token_ids").asArrayValue().list().stream()
                .mapToInt(t -> t.asIntegerValue().toInt()).toArray());
            assertEquals("full_attention", field(event, "kv_cache_spec_kind").asStringValue().asString());

            while (true)
            {
                final TestFrontend.Outputs outputs = frontend.next(0);
                assertNotNull(outputs, "outputs keep coming");
                if (outputs.outputs().stream().anyMatch(o -> null != o.finishReason()))
                {
                    break;
                }
            }
            frontend.utility(1, 7, "reset_prefix_cache");
            final ArrayValue cleared = receive(sub, 1);
            assertEquals("AllBlocksCleared", field(cleared.get(1).asArrayValue().get(0).asMapValue(), "type")
                .asStringValue().asString());
            assertEquals(0, publishers.get(0).publishedBatches(), "engine 0 got no request");
        }
        finally
        {
            if (null != server)
            {
                server.shutdown(0);
            }

        }
    }

    @Test
    void shouldHashTheImagesAFrontendPlacesWithTheirIdentifiers() throws Exception
    {
        final KvEventsSettings settings = KvEventsSettings.publishOn("tcp://127.0.0.1:*")
            .replayEndpoint("tcp://127.0.0.1:*").topic("kv").eventsAsMaps(true).bufferSteps(100).ringBytes(1 << 20);
        Play server = null;
        try (TestFrontend frontend = new TestFrontend(1); ZContext context = new ZContext())
        {
            server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).engineCount(1)
                .handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0).kvEvents(settings)
                .engine(new EngineConfig().maxModelLen(4096).latencyModel(FAST)));
            frontend.awaitEngines(1);
            final KvEventSubscriber sub = new KvEventSubscriber(context, server.kvEventPublishers().get(0), "kv");
            // a Qwen2-VL-like prompt: 3 text tokens, an image as 40 <|image_pad|> tokens, 5 text tokens
            final int[] prompt = new int[48];
            for (int i = 0; i < prompt.length; i++)
            {
                prompt[i] = i >= 3 && i < 43 ? 151655 : 100 + i;
            }
            final Value feature = ValueFactory.newMap(
                ValueFactory.newString("data"), ValueFactory.newMap(ValueFactory.newString("pixel_values"),
                    ValueFactory.newMap(ValueFactory.newString("data"), ValueFactory.newBinary(new byte[64]),
                        ValueFactory.newString("field"), ValueFactory.newArray(ValueFactory.newString("batched"),
                            ValueFactory.emptyMap()))),
                ValueFactory.newString("modality"), ValueFactory.newString("image"),
                ValueFactory.newString("identifier"), ValueFactory.newString("c0ffee-image"),
                ValueFactory.newString("mm_position"), ValueFactory.newMap(ValueFactory.newString("offset"),
                    ValueFactory.newInteger(3), ValueFactory.newString("length"), ValueFactory.newInteger(40),
                    ValueFactory.newString("is_embed"), ValueFactory.newNil()),
                ValueFactory.newString("mm_hash"), ValueFactory.newString("processor-hash"));
            frontend.send(0, 0, (byte)0, TestFrontend.addPayload("with-image", prompt, 2, 0, new int[0], false,
                ValueFactory.newNil(), null, ValueFactory.newArray(feature)));
            final MapValue event = receive(sub, 0).get(1).asArrayValue().get(0).asMapValue();
            final long[] hashes = field(event, "block_hashes").asArrayValue().list().stream()
                .mapToLong(h -> h.asIntegerValue().asBigInteger().longValue()).toArray();
            final dev.tapedeck.kv.MediaSpans media = new dev.tapedeck.kv.MediaSpans(new String[] {"c0ffee-image"},
                new int[] {3}, new int[] {40});
            assertArrayEquals(new BlockHasher("0").blockHashes(prompt, 16, null, null, media), hashes,
                "the identifier (not the processor's mm_hash) is in every block the image touches");
            assertEquals("[[\"c0ffee-image\"],[\"c0ffee-image\"],[\"c0ffee-image\"]]",
                field(event, "extra_keys").toJson());
        }
        finally
        {
            if (null != server)
            {
                server.shutdown(0);
            }
        }
    }

    private static ArrayValue receive(final KvEventSubscriber sub, final long expectedSequence) throws Exception
    {
        final KvEventSubscriber.Batch batch = sub.next();
        assertEquals(expectedSequence, batch.sequence());
        return TestFrontend.unpack(batch.payload()).asArrayValue();
    }

    private static Value field(final MapValue map, final String key)
    {
        final Value value = TestFrontend.get(map, key);
        assertNotNull(value, key);
        return value;
    }
}
