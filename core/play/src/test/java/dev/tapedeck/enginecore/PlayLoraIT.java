package dev.tapedeck.enginecore;

import dev.tapedeck.net.ZmqConnector;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An ADD request's {@code lora_request} under {@code play --max-loras 1 --enable-kv-cache-events}, driven by a test
 * frontend over the real ZeroMQ wire: the registration reports {@code max_loras}; the second adapter's request waits
 * until the first adapter's finishes while a base request passes; the engine's KV events (a JeroMQ SUB, decoded with
 * msgpack-core) carry each adapter's {@code lora_id} and {@code lora_name} and the hashes a router computes with the
 * adapter's name; {@code scheduler_stats} carry {@code running_lora_adapters}, {@code waiting_lora_adapters} and
 * {@code num_skipped_waiting_reqs} (what the frontend's LoRA metrics read); prefix sharing
 * ({@code prefill_stats.num_cached_tokens}) stays within one adapter; and {@code add_lora} / {@code list_loras} /
 * {@code remove_lora} work on the same adapter table the requests use.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlayLoraIT
{
    private static final LatencyModel FAST =
        new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test"));
    private static final String TOPIC = "kv@play-lora";
    private static final Value SQL = lora("sql", 1, "/adapters/sql");
    private static final Value CHAT = lora("chat", 2, "/adapters/chat");

    /** LoRARequest as msgspec sends it: {@code [lora_name, lora_int_id, lora_path, ...]}. */
    private static Value lora(final String name, final int id, final String path)
    {
        return ValueFactory.newArray(ValueFactory.newString(name), ValueFactory.newInteger(id),
            ValueFactory.newString(path), ValueFactory.newNil());
    }

    private static int[] prompt(final int first, final int length)
    {
        final int[] ids = new int[length];
        for (int i = 0; i < length; i++)
        {
            ids[i] = first + i;
        }
        return ids;
    }

    @Test
    void shouldGateHashAndPublishByTheRequestsAdapter() throws Exception
    {
        Play server = null;
        try (TestFrontend frontend = new TestFrontend(1); ZContext context = new ZContext())
        {
            server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress)
                .handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0)
                .kvEvents(KvEventsSettings.publishOn("tcp://127.0.0.1:*").topic(TOPIC)
                    .eventsAsMaps(VllmLine.NEWEST.kvEventsAsMaps()).bufferSteps(100).ringBytes(1 << 20))
                .engine(new EngineConfig().maxLoras(1).maxModelLen(4096).latencyModel(FAST)));
            final KvEventPublisher publisher = server.kvEventPublishers().get(0);
            frontend.awaitEngines(1);
            assertEquals(1, TestFrontend.get(frontend.registrations.get(0), "max_loras").asIntegerValue().toInt());
            final ZMQ.Socket sub = new ZmqConnector(ZmqConnector.DEFAULT_STALL_NS).open(context, SocketType.SUB,
                s -> s.subscribe("kv@".getBytes(StandardCharsets.UTF_8)), publisher.endpoint(),
                System.nanoTime() + 10_000_000_000L);
            final Run run = new Run(frontend);
            awaitSubscription(run, sub);

            assertEquals("true", run.utility("add_lora", SQL).toString());
            final int[] shared = prompt(7000, 40);
            frontend.add(0, "sql-1", shared, 30, SQL);
            frontend.add(0, "chat-1", shared, 2, CHAT);
            frontend.add(0, "base-1", prompt(9000, 40), 2, ValueFactory.newNil());
            run.until("sql-1", "chat-1", "base-1");
            assertTrue(run.finishedAt.get("base-1") < run.finishedAt.get("sql-1"), "the base request is not gated");
            assertTrue(run.firstTokenAt.get("chat-1") > run.finishedAt.get("sql-1"),
                "chat waits for the sql request: " + run.firstTokenAt + " " + run.finishedAt);
            assertTrue(run.loraStats.contains("{\"sql\":1} {\"chat\":1} 1"),
                "scheduler_stats name the running and the held-back adapter: " + run.loraStats);
            assertTrue(run.loraStats.contains("{\"chat\":1} null null"), "then chat runs: " + run.loraStats);

            final BlockHasher router = new BlockHasher("0");
            final Map<String, MapValue> stored = new HashMap<>();
            sub.setReceiveTimeOut(10_000);
            while (stored.size() < 3)
            {
                final ArrayValue batch = receive(sub);
                assertNotNull(batch, "BlockStored of all three requests within 10 s: " + stored.keySet());
                for (final Value event : batch.get(1).asArrayValue())
                {
                    final Value name = TestFrontend.get(event.asMapValue(), "lora_name");
                    stored.put(name.isNilValue() ? "" : name.asStringValue().asString(), event.asMapValue());
                }
            }
            assertStored(stored.get("sql"), router.blockHashes(shared, 16, "sql", null), 1);
            assertStored(stored.get("chat"), router.blockHashes(shared, 16, "chat", null), 2);
            assertStored(stored.get(""), router.blockHashes(prompt(9000, 40), 16, null, null), -1);

            frontend.add(0, "sql-2", shared, 2, SQL);
            frontend.add(0, "base-2", shared, 2, ValueFactory.newNil());
            run.until("sql-2", "base-2");
            assertEquals(32, run.cachedTokens.get("sql-2"), "the same adapter shares the 2 full blocks");
            assertEquals(0, run.cachedTokens.get("base-2"), "the base model does not share an adapter's blocks");
            frontend.add(0, "chat-2", shared, 2, CHAT);
            run.until("chat-2");
            assertEquals(32, run.cachedTokens.get("chat-2"));

            assertEquals("[1,2]", run.utility("list_loras").toString(), "chat came with its request");
            assertEquals("true", run.utility("remove_lora", ValueFactory.newInteger(2)).toString());
            assertEquals("[1]", run.utility("list_loras").toString());
        }
        finally
        {
            if (null != server)
            {
                server.shutdown(0);
            }

        }
    }

    /**
     * A SUB's subscription reaches the publisher some time after it connects: send requests of their own until one's
     * batch arrives, then drain what is left.
     */
    private static void awaitSubscription(final Run run, final ZMQ.Socket sub) throws Exception
    {
        sub.setReceiveTimeOut(100);
        ArrayValue first = null;
        for (int i = 0; null == first && i < 100; i++)
        {
            run.frontend.add(0, "warm-up-" + i, prompt(100_000 + 100 * i, 20), 1, ValueFactory.newNil());
            run.until("warm-up-" + i);
            first = receive(sub);
        }
        assertNotNull(first, "the subscription never took effect");
        while (null != receive(sub))
        {
            // a batch of an earlier warm-up request
        }
    }

    private static ArrayValue receive(final ZMQ.Socket sub) throws Exception
    {
        final byte[] topic = sub.recv(0);
        if (null == topic)
        {
            return null;
        }
        assertEquals(TOPIC, new String(topic, StandardCharsets.UTF_8));
        assertEquals(8, sub.recv(0).length);
        return TestFrontend.unpack(sub.recv(0)).asArrayValue();
    }

    private static void assertStored(final MapValue event, final long[] hashes, final int loraId)
    {
        assertNotNull(event);
        assertEquals("BlockStored", TestFrontend.get(event, "type").asStringValue().asString());
        assertArrayEquals(hashes, TestFrontend.get(event, "block_hashes").asArrayValue().list().stream()
            .mapToLong(h -> h.asIntegerValue().asBigInteger().longValue()).toArray());
        final Value id = TestFrontend.get(event, "lora_id");
        if (loraId < 0)
        {
            assertTrue(id.isNilValue());
        }
        else
        {
            assertEquals(BigInteger.valueOf(loraId), id.asIntegerValue().asBigInteger());
        }
    }

    /** Reads the frontend's output socket, noting when each request got its first token and finished. */
    private static final class Run
    {
        final TestFrontend frontend;
        final Map<String, Integer> firstTokenAt = new HashMap<>();
        final Map<String, Integer> finishedAt = new HashMap<>();
        final Map<String, Long> cachedTokens = new HashMap<>();
        final List<Value> utilities = new ArrayList<>();
        /** {@code running_lora_adapters waiting_lora_adapters num_skipped_waiting_reqs} of every stats map. */
        final java.util.Set<String> loraStats = new java.util.HashSet<>();
        int messages;
        long callId = 1;

        Run(final TestFrontend frontend)
        {
            this.frontend = frontend;
        }

        void until(final String... requestIds) throws Exception
        {
            while (!finishedAt.keySet().containsAll(List.of(requestIds)))
            {
                read();
            }
        }

        Value utility(final String method, final Value... args) throws Exception
        {
            final int before = utilities.size();
            frontend.utility(0, callId++, method, args);
            while (utilities.size() == before)
            {
                read();
            }
            final ArrayValue reply = utilities.get(before).asArrayValue();
            assertTrue(reply.get(1).isNilValue(), method + " failed: " + reply);
            return reply.get(2).asArrayValue().get(1);
        }

        private void read() throws Exception
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "outputs keep coming");
            messages++;
            if (null != message.stats())
            {
                loraStats.add(TestFrontend.get(message.stats(), "running_lora_adapters") + " " +
                    TestFrontend.get(message.stats(), "waiting_lora_adapters") + " " +
                    TestFrontend.get(message.stats(), "num_skipped_waiting_reqs"));
            }
            if (!message.utility().isNilValue())
            {
                utilities.add(message.utility());
            }
            for (final TestFrontend.Output output : message.outputs())
            {
                if (!output.tokens().isEmpty() && !firstTokenAt.containsKey(output.requestId()))
                {
                    firstTokenAt.put(output.requestId(), messages);
                    cachedTokens.put(output.requestId(), TestFrontend.get(output.tail().asMapValue(),
                        "num_cached_tokens").asIntegerValue().toLong());
                }
                if (null != output.finishReason())
                {
                    finishedAt.put(output.requestId(), messages);
                }
            }
        }
    }
}
