package dev.tapedeck.enginecore;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.Request;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.protocol.enginecore.VllmLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine-core face's outputs per step, decoded as a frontend decodes them: a request's first output carries its
 * prompt's cache statistics, a running request's later outputs only its id and new tokens, its last output the finish
 * reason; one message per step for every request with news.
 */
class OutputBatcherTest
{
    private static final int FINISH_REASON = 5;
    private static final int PROMPT_STATS = 11;
    private static final int LENGTH = 1;

    private long nowNs;

    @Test
    void shouldSendPromptStatsFirstTokensThenAndTheFinishLast() throws IOException
    {
        final List<byte[]> messages = new ArrayList<>();
        final Engine engine = engine(new OutputBatcher(0, VllmLine.NEWEST, 1,
            (client, message) -> messages.add(message), new HashMap<>()));
        final int[] prompt = new int[40];
        Arrays.fill(prompt, 7);
        submit(engine, "first", prompt, 4);
        run(engine);
        final int before = messages.size();
        submit(engine, "second", prompt, 4); // its first 32 prompt tokens are cached by the first request
        run(engine);

        final List<ArrayValue> outputs = outputs(messages.subList(before, messages.size()));
        assertEquals(4, outputs.size(), "one output per step, one token each");
        for (final ArrayValue output : outputs)
        {
            assertEquals("second", output.get(0).asStringValue().asString());
            assertEquals(1, output.get(1).asArrayValue().size());
        }
        final Value stats = outputs.get(0).get(PROMPT_STATS);
        assertEquals(40, TestFrontend.get(stats.asMapValue(), "num_prompt_tokens").asIntegerValue().toInt());
        assertEquals(32, TestFrontend.get(stats.asMapValue(), "num_cached_tokens").asIntegerValue().toInt());
        assertTrue(outputs.get(0).get(FINISH_REASON).isNilValue());
        assertEquals(2, outputs.get(1).size(), "a running request's later output: id and tokens only");
        assertEquals(2, outputs.get(2).size());
        assertEquals(LENGTH, outputs.get(3).get(FINISH_REASON).asIntegerValue().toInt());
    }

    /** Two clients' requests step together: each client's message holds its own outputs only, in step order. */
    @Test
    void shouldSendEachClientItsOwnOutputsAndAnAbortWithoutTokensAsAnOutputOfItsOwn() throws IOException
    {
        final List<byte[]> toFirst = new ArrayList<>();
        final List<byte[]> toSecond = new ArrayList<>();
        final OutputBatcher batcher = new OutputBatcher(0, VllmLine.NEWEST, 2,
            (client, message) -> (0 == client ? toFirst : toSecond).add(message), new HashMap<>());
        final Engine engine = engine(batcher);
        final int[] prompt = new int[8];
        final Request a = submit(engine, "a", prompt, 3, 0);
        submit(engine, "b", prompt, 3, 1);
        submit(engine, "c", prompt, 3, 0);
        for (int step = 0; step < 100 && 0 == a.numOutputTokens(); step++)
        {
            engine.doWork(nowNs);
            final long nextNs = engine.nextDeadlineNs();
            nowNs = Long.MAX_VALUE == nextNs ? nowNs + 1_000_000 : Math.max(nowNs, nextNs);
        }
        engine.abort(a, dev.tapedeck.engine.FinishReason.ABORT, nowNs); // not the frontend's: an output of its own
        batcher.onBatchEnd(nowNs);
        run(engine);

        final List<String> first = ids(toFirst);
        final List<String> second = ids(toSecond);
        assertEquals(List.of("a", "c", "a", "c", "c"), first, "client 0: a and c per step, a's abort, c to the end");
        assertEquals(List.of("b", "b", "b"), second);
        final ArrayValue abort = outputs(toFirst).get(2);
        assertEquals(0, abort.get(1).asArrayValue().size(), "the abort carries no token");
        assertEquals(2, abort.get(FINISH_REASON).asIntegerValue().toInt(), "ABORT");
    }

    /** An engine (16-token blocks, 10 us steps) whose outputs go to the batcher. */
    private static Engine engine(final OutputBatcher batcher)
    {
        final EngineConfig config = new EngineConfig().blockSize(16).kvCacheBlocks(64).maxModelLen(1024)
            .latencyModel(new StepLatencyModel(new StepCoefficients("test", 10, 0, 0, 0, 0, "test"))).conclude();
        final Engine engine = new Engine(config, batcher, 0);
        batcher.engine(engine);
        return engine;
    }

    private static List<ArrayValue> outputs(final List<byte[]> messages) throws IOException
    {
        final List<ArrayValue> outputs = new ArrayList<>();
        for (final byte[] message : messages)
        {
            for (final Value output : TestFrontend.unpack(message).asArrayValue().get(1).asArrayValue())
            {
                outputs.add(output.asArrayValue());
            }
        }
        return outputs;
    }

    private static List<String> ids(final List<byte[]> messages) throws IOException
    {
        final List<String> ids = new ArrayList<>();
        for (final ArrayValue output : outputs(messages))
        {
            ids.add(output.get(0).asStringValue().asString());
        }
        return ids;
    }

    private void submit(final Engine engine, final String id, final int[] prompt, final int maxTokens)
    {
        submit(engine, id, prompt, maxTokens, 0);
    }

    private Request submit(final Engine engine, final String id, final int[] prompt, final int maxTokens,
        final int client)
    {
        final Request request = new Request(id, prompt.clone()).maxTokens(maxTokens);
        request.attachment(new PlayRequest(request, client));
        engine.submit(request, nowNs);
        return request;
    }

    private void run(final Engine engine)
    {
        for (int step = 0; step < 100 && engine.numRunning() + engine.numWaiting() > 0; step++)
        {
            engine.doWork(nowNs);
            final long nextNs = engine.nextDeadlineNs();
            nowNs = Long.MAX_VALUE == nextNs ? nowNs + 1_000_000 : Math.max(nowNs, nextNs);
        }
        assertEquals(0, engine.numRunning() + engine.numWaiting());
    }
}
