package dev.tapedeck.enginecore;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.latency.LatencyModel;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.play.Play;
import dev.tapedeck.play.PlayContext;
import dev.tapedeck.protocol.enginecore.VllmLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code play} against a test frontend that follows vLLM's engine-core protocol over loopback TCP (JeroMQ on both
 * ends, msgpack-java decoding the outputs): handshake, completion with exact token counts and finish reasons, aborts,
 * 500 concurrent requests, every utility call, malformed frames, two engines.
 */
@Timeout(60)
class EngineCoreIT
{
    private static final LatencyModel FAST =
        new StepLatencyModel(new StepCoefficients("test", 1000, 0.5, 5, 0, 0, "test"));
    private static final int[] PROMPT = {101, 102, 103, 104, 105, 106, 107, 108};
    private TestFrontend frontend;
    private Play server;

    private void start(final int engines, final int clients, final VllmLine line) throws Exception
    {
        frontend = new TestFrontend(clients);
        server = Play.start(new PlayContext().handshakeAddress(frontend.handshakeAddress).engineCount(engines)
            .vllmLine(line).handshakeTimeoutNs(20_000_000_000L).shutdownTimeoutNs(0)
            .engine(new EngineConfig().maxModelLen(4096).latencyModel(FAST)));
        frontend.awaitEngines(engines);
    }

    @AfterEach
    void stop()
    {
        if (null != server)
        {
            server.shutdown(0);
        }
        if (null != frontend)
        {
            frontend.close();
        }
    }

    @Test
    void shouldHandshakeAndRegisterWithTheUnionOfEveryLinesKeys() throws Exception
    {
        start(1, 1, VllmLine.NEWEST);
        final MapValue registration = frontend.registrations.get(0);
        for (final String key : List.of("max_model_len", "num_gpu_blocks", "block_size", "dp_stats_address", "dtype",
            "vllm_version", "world_size", "data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
            "decode_context_parallel_size", "data_parallel_rank", "max_num_seqs", "max_num_batched_tokens",
            "instance_id", "supports_lora", "max_loras", "kv_cache_size_tokens", "kv_cache_max_concurrency"))
        {
            assertNotNull(TestFrontend.get(registration, key), "registration lacks " + key);
        }
        assertEquals(4096, TestFrontend.get(registration, "max_model_len").asIntegerValue().toInt());
        assertEquals("0.28.0", TestFrontend.get(registration, "vllm_version").asStringValue().asString());
        final MapValue ready = frontend.readies.get(0);
        assertEquals(33600, TestFrontend.get(ready, "num_gpu_blocks").asIntegerValue().toInt());
        assertTrue(TestFrontend.get(ready, "headless").asBooleanValue().getBoolean());
    }

    @Test
    void shouldStreamExactlyMaxTokensAndFinishWithLength() throws Exception
    {
        start(1, 1, VllmLine.NEWEST);
        frontend.add(0, "req-1", PROMPT, 20, 0);
        final List<Long> tokens = new ArrayList<>();
        Integer finish = null;
        boolean prefillStatsSeen = false;
        while (null == finish)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "outputs keep coming");
            assertEquals(0, message.engineIndex());
            assertNotNull(message.stats(), "scheduler_stats with every message");
            assertTrue(message.timestamp() > 0);
            for (final TestFrontend.Output output : message.outputs())
            {
                assertEquals("req-1", output.requestId());
                tokens.addAll(output.tokens());
                finish = output.finishReason();
                if (null != output.tail())
                {
                    prefillStatsSeen = true;
                    assertEquals(8, TestFrontend.get(output.tail().asMapValue(), "num_prompt_tokens")
                        .asIntegerValue().toInt());
                }
            }
        }
        assertEquals(20, tokens.size());
        assertEquals(1, finish, "LENGTH");
        assertTrue(prefillStatsSeen, "prefill_stats on the first output (0.19+ lines)");
        for (final long token : tokens)
        {
            assertTrue(token >= 101 && token <= 108, "tokens drawn from the prompt: " + token);
        }
    }

    @Test
    void shouldReportCachedTokensWhereOldLinesExpectThem() throws Exception
    {
        start(1, 1, VllmLine.V0_11);
        frontend.add(0, "old", PROMPT, 2, 0);
        final TestFrontend.Outputs first = frontend.next(0);
        assertEquals(11, first.outputs().get(0).length(), "num_cached_tokens at index 10 on 0.10.2-0.12");
    }

    @Test
    void shouldReportAPrefixHitInPrefillStatsAndSchedulerStats() throws Exception
    {
        start(1, 1, VllmLine.NEWEST);
        final int[] prompt = new int[40];
        for (int i = 0; i < prompt.length; i++)
        {
            prompt[i] = 1000 + i;
        }
        assertEquals(0, cachedTokensOfFirstOutput("cold", prompt));
        // 2 full blocks of 16 are cached; the third is partial
        assertEquals(32, cachedTokensOfFirstOutput("warm", prompt));
    }

    private long cachedTokensOfFirstOutput(final String id, final int[] prompt) throws IOException
    {
        frontend.add(0, id, prompt, 2, 0);
        long cached = -1;
        long hits = 0;
        boolean finished = false;
        while (!finished)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "outputs keep coming");
            hits += TestFrontend.get(TestFrontend.get(message.stats(), "prefix_cache_stats").asMapValue(), "hits")
                .asIntegerValue().toLong();
            for (final TestFrontend.Output output : message.outputs())
            {
                if (-1 == cached)
                {
                    cached = TestFrontend.get(output.tail().asMapValue(), "num_cached_tokens").asIntegerValue()
                        .toLong();
                }
                finished |= null != output.finishReason();
            }
        }
        assertEquals(cached, hits, "scheduler_stats.prefix_cache_stats.hits add up to the hit");
        return cached;
    }

    @Test
    void shouldStopWhenTheFrontendAborts() throws Exception
    {
        start(1, 1, VllmLine.NEWEST);
        frontend.add(0, "long", PROMPT, 3000, 0);
        assertNotNull(frontend.next(0));
        frontend.abort(0, "long", "unknown-id");
        boolean finishedReported = false;
        for (int i = 0; i < 50 && !finishedReported; i++)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            finishedReported = message.finished().contains("long");
        }
        assertTrue(finishedReported, "finished_requests names the aborted request");
        frontend.outputs.get(0).setReceiveTimeOut(300);
        final TestFrontend.Outputs after = frontend.next(0);
        assertTrue(null == after || after.outputs().isEmpty(), "no outputs after the abort");
    }

    @Test
    void shouldServeFiveHundredConcurrentRequestsWithOneMessagePerStep() throws Exception
    {
        start(1, 1, VllmLine.NEWEST);
        final int requests = 500;
        final int maxTokens = 30;
        for (int i = 0; i < requests; i++)
        {
            frontend.add(0, "r" + i, PROMPT, maxTokens, 0);
        }
        final Map<String, Integer> counts = new HashMap<>();
        final Map<String, Integer> finishes = new HashMap<>();
        int messages = 0;
        int maxOutputsPerMessage = 0;
        double lastTimestamp = 0;
        while (finishes.size() < requests)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message, "finished " + finishes.size() + " of " + requests);
            assertTrue(message.timestamp() >= lastTimestamp, "step timestamps never go back");
            lastTimestamp = message.timestamp();
            messages++;
            maxOutputsPerMessage = Math.max(maxOutputsPerMessage, message.outputs().size());
            final Set<String> seenInMessage = new HashSet<>();
            for (final TestFrontend.Output output : message.outputs())
            {
                assertTrue(seenInMessage.add(output.requestId()), "one output per request per message");
                assertEquals(1, output.tokens().size(), "one token per request per step, even when catching up");
                counts.merge(output.requestId(), output.tokens().size(), Integer::sum);
                if (null != output.finishReason())
                {
                    finishes.put(output.requestId(), output.finishReason());
                }
            }
        }
        for (int i = 0; i < requests; i++)
        {
            assertEquals(maxTokens, counts.get("r" + i), "r" + i);
            assertEquals(1, finishes.get("r" + i));
        }
        assertTrue(maxOutputsPerMessage >= 256, "a step batches every running request into one message: " +
            maxOutputsPerMessage);
        assertTrue(messages < requests * maxTokens / 10, messages + " messages for " + requests * maxTokens +
            " tokens");
    }

    @Test
    void shouldAnswerEveryUtilityCall() throws Exception
    {
        start(1, 1, VllmLine.NEWEST);
        final Map<String, Value[]> calls = new java.util.LinkedHashMap<>();
        calls.put("get_supported_tasks", new Value[0]);
        calls.put("reset_mm_cache", new Value[0]);
        calls.put("reset_encoder_cache", new Value[0]);
        calls.put("reset_prefix_cache", new Value[0]);
        calls.put("is_sleeping", new Value[0]);
        calls.put("sleep", new Value[] {ValueFactory.newInteger(1)});
        calls.put("wake_up", new Value[] {ValueFactory.newNil()});
        calls.put("add_lora", new Value[] {ValueFactory.newArray(ValueFactory.newString("sql"),
            ValueFactory.newInteger(7), ValueFactory.newString("/loras/sql"))});
        calls.put("list_loras", new Value[0]);
        calls.put("pin_lora", new Value[] {ValueFactory.newInteger(7)});
        calls.put("remove_lora", new Value[] {ValueFactory.newInteger(7)});
        calls.put("profile", new Value[] {ValueFactory.newBoolean(true)});
        calls.put("collective_rpc", new Value[] {ValueFactory.newString("m"), ValueFactory.newNil(),
            ValueFactory.newArray(), ValueFactory.newMap(new Value[0])});
        calls.put("no_such_method", new Value[0]);
        long callId = 0x8000000000000001L;
        final Map<Long, String> byId = new HashMap<>();
        for (final Map.Entry<String, Value[]> call : calls.entrySet())
        {
            byId.put(callId, call.getKey());
            frontend.utility(0, callId++, call.getKey(), call.getValue());
        }
        final Map<String, Value> results = new HashMap<>();
        final Map<String, String> failures = new HashMap<>();
        while (results.size() + failures.size() < calls.size())
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message);
            assertTrue(message.outputs().isEmpty(), "utility replies carry no request outputs");
            final ArrayValue reply = message.utility().asArrayValue();
            final long id = reply.get(0).asIntegerValue().asBigInteger().longValue();
            final String method = byId.get(id);
            assertNotNull(method, "the call id comes back bit-exact: " + Long.toUnsignedString(id));
            if (reply.get(1).isNilValue())
            {
                results.put(method, reply.get(2).asArrayValue().get(1));
            }
            else
            {
                failures.put(method, reply.get(1).asStringValue().asString());
            }
        }
        assertEquals("[\"generate\"]", results.get("get_supported_tasks").toString());
        assertTrue(results.get("reset_mm_cache").isNilValue());
        assertEquals("true", results.get("reset_prefix_cache").toString());
        assertEquals("false", results.get("is_sleeping").toString());
        assertEquals("[7]", results.get("list_loras").toString());
        assertEquals("true", results.get("pin_lora").toString());
        assertEquals("true", results.get("remove_lora").toString());
        assertEquals(1, failures.size());
        assertTrue(failures.get("no_such_method").startsWith("Call to no_such_method method failed"));
        frontend.add(0, "after", PROMPT, 3, 0);
        assertNotNull(frontend.next(0), "the engine goes on after an unknown method");
    }

    @Test
    void shouldDropMalformedFramesAndKeepServing() throws Exception
    {
        start(1, 1, VllmLine.NEWEST);
        frontend.send(0, 0, (byte)0, new byte[] {(byte)0xc1, 1, 2});
        frontend.send(0, 0, (byte)0, new byte[0]);
        frontend.send(0, 0, (byte)7, new byte[] {1});
        frontend.send(0, 0, (byte)3, new byte[] {(byte)0x93, 1});
        // readable id, broken prompt: the frontend gets an error finish for it
        final org.msgpack.core.MessageBufferPacker p = org.msgpack.core.MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(5).packString("broken").packString("not a prompt").packNil().packNil().packNil();
        frontend.send(0, 0, (byte)0, p.toByteArray());
        final TestFrontend.Outputs error = frontend.next(0);
        assertEquals("broken", error.outputs().get(0).requestId());
        assertEquals(3, error.outputs().get(0).finishReason(), "ERROR");
        frontend.add(0, "good", PROMPT, 4, 0);
        int tokens = 0;
        Integer finish = null;
        while (null == finish)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message);
            for (final TestFrontend.Output output : message.outputs())
            {
                tokens += output.tokens().size();
                finish = output.finishReason();
            }
        }
        assertEquals(4, tokens);
        assertEquals(5, server.agents().get(0).malformedFrames());
    }

    @Test
    void shouldRunTwoEnginesWithTheirOwnIdentities() throws Exception
    {
        start(2, 1, VllmLine.NEWEST);
        assertEquals(Set.of(0, 1), frontend.registrations.keySet());
        assertEquals(1, TestFrontend.get(frontend.registrations.get(1), "data_parallel_rank").asIntegerValue()
            .toInt());
        frontend.add(0, "to-0", PROMPT, 3, 0);
        frontend.add(1, "to-1", PROMPT, 3, 0);
        final Map<String, Integer> engineOf = new HashMap<>();
        final Set<String> finished = new HashSet<>();
        while (finished.size() < 2)
        {
            final TestFrontend.Outputs message = frontend.next(0);
            assertNotNull(message);
            for (final TestFrontend.Output output : message.outputs())
            {
                engineOf.put(output.requestId(), message.engineIndex());
                if (null != output.finishReason())
                {
                    finished.add(output.requestId());
                }
            }
        }
        assertEquals(0, engineOf.get("to-0"));
        assertEquals(1, engineOf.get("to-1"));
        assertFalse(server.agents().get(1).malformedFrames() > 0);
    }

    @Test
    void shouldRouteOutputsToTheRequestsClient() throws Exception
    {
        start(1, 2, VllmLine.NEWEST);
        frontend.add(0, "client-1", PROMPT, 2, 1);
        final TestFrontend.Outputs message = frontend.next(1);
        assertNotNull(message);
        assertEquals("client-1", message.outputs().get(0).requestId());
    }
}
