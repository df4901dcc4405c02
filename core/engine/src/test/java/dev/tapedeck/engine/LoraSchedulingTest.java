package dev.tapedeck.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tapedeck.kv.BlockHasher;
import dev.tapedeck.kv.KvEventSink;
import dev.tapedeck.lora.LoraAdapter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * LoRA adapters in the engine, with a manual clock: the {@code --max-loras} gate of vLLM V1's scheduler (a waiting
 * request of an adapter that is not running waits while {@code max_loras} adapters run, keeping its place; base
 * requests and requests of running adapters pass it), the adapter name as an extra key of every block hash (sharing
 * only within one adapter) and the adapter's id and name in {@code BlockStored}.
 */
class LoraSchedulingTest
{
    private static final LoraAdapter SQL = new LoraAdapter("sql", 1, "/adapters/sql", null);
    private static final LoraAdapter CHAT = new LoraAdapter("chat", 2, "/adapters/chat", null);

    private final FixedStepModel model = new FixedStepModel(EngineHarness.STEP_NS);

    private static Request submit(final EngineHarness h, final String id, final LoraAdapter lora,
        final int maxTokens)
    {
        return submit(h, id, EngineHarness.prompt(id, 20), lora, maxTokens);
    }

    private static Request submit(final EngineHarness h, final String id, final int[] prompt, final LoraAdapter lora,
        final int maxTokens)
    {
        final Request request = new Request(id, prompt).maxTokens(maxTokens).arrivalNs(h.nowNs).lora(lora);
        assertEquals(SubmitResult.ACCEPTED, h.engine.submit(request, h.nowNs));
        return request;
    }

    private static List<String> adapters(final Engine engine, final boolean running)
    {
        final List<String> names = new ArrayList<>();
        engine.loraAdapters(running, names);
        return names;
    }

    @Test
    void shouldHoldASecondAdapterBackUntilTheFirstAdaptersRequestsFinish()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxLoras(1));
        final Request sql1 = submit(h, "sql-1", SQL, 5);
        final Request chat1 = submit(h, "chat-1", CHAT, 3);
        final Request sql2 = submit(h, "sql-2", SQL, 8);
        final Request base = submit(h, "base", null, 4);
        final Request chat2 = submit(h, "chat-2", CHAT, 3);
        h.poke();
        assertEquals(3, h.engine.numRunning(), "sql-1, sql-2 and the base request run");
        assertEquals(2, h.engine.numWaiting(), "both chat requests wait");
        assertEquals(2, h.engine.numWaitingDeferred(), "held back by the LoRA cap, not by capacity");
        assertEquals(1, h.engine.numRunningLoraAdapters());
        assertEquals(List.of("sql"), adapters(h.engine, true));
        assertEquals(List.of("chat"), adapters(h.engine, false));
        assertEquals(new FixedStepModel.Shape(0, 60, 3, 3), model.steps.get(0), "chat-1 skipped, not blocking");

        h.runUntilIdle();
        assertEquals(List.of(base, sql1, sql2, chat1, chat2), h.sink.finished);
        final long lastSqlNs = Math.max(sql1.finishedNs(), sql2.finishedNs());
        assertTrue(chat1.scheduledNs() >= lastSqlNs, "chat waits until every sql request is done");
        assertEquals(chat1.scheduledNs(), chat2.scheduledNs(), "then both chat requests run together");
        assertTrue(base.scheduledNs() < chat1.scheduledNs());
        assertEquals(0, h.engine.numRunningLoraAdapters());
        assertEquals(List.of(), adapters(h.engine, true));
        assertEquals(List.of(), adapters(h.engine, false));
        for (final FixedStepModel.Shape shape : model.steps)
        {
            assertTrue(shape.running() <= 3, shape.toString());
        }
    }

    @Test
    void shouldNeverGateBaseRequestsNorRequestsOfARunningAdapter()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxLoras(1));
        final Request sql1 = submit(h, "sql-1", SQL, 50);
        h.poke();
        final Request chat1 = submit(h, "chat-1", CHAT, 2);
        final Request base1 = submit(h, "base-1", null, 2);
        final Request sql2 = submit(h, "sql-2", SQL, 2);
        final Request base2 = submit(h, "base-2", null, 2);
        h.advance();
        assertTrue(base1.scheduledNs() > 0 && base2.scheduledNs() > 0 && sql2.scheduledNs() > 0,
            "admitted past the waiting chat request");
        assertEquals(0, chat1.scheduledNs());
        assertEquals(1, h.engine.numWaiting());
        h.runUntilIdle();
        assertTrue(chat1.scheduledNs() >= sql1.finishedNs());
    }

    @Test
    void shouldRunAsManyAdaptersAsMaxLorasAllows()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxLoras(2));
        final LoraAdapter third = new LoraAdapter("third", 3, "", null);
        final Request sql = submit(h, "sql", SQL, 3);
        final Request chat = submit(h, "chat", CHAT, 3);
        final Request waits = submit(h, "third", third, 3);
        h.poke();
        assertEquals(2, h.engine.numRunning());
        assertEquals(List.of("sql", "chat"), adapters(h.engine, true));
        assertEquals(List.of("third"), adapters(h.engine, false));
        h.runUntilIdle();
        assertEquals(sql.scheduledNs(), chat.scheduledNs());
        assertTrue(waits.scheduledNs() >= Math.max(sql.finishedNs(), chat.finishedNs()));
    }

    @Test
    void shouldTrackTheAdaptersOfPreemptedAndAbortedRequests()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxLoras(1));
        final Request sql = submit(h, "sql", SQL, 20);
        final Request chat = submit(h, "chat", CHAT, 2);
        h.poke();
        final long changedNs = h.engine.loraAdaptersChangedNs();
        assertEquals(h.nowNs, changedNs);
        h.advance();
        h.engine.abort(sql, FinishReason.ABORT, h.nowNs);
        assertEquals(List.of(), adapters(h.engine, true), "the aborted request's adapter no longer runs");
        assertTrue(h.engine.loraAdaptersChangedNs() > changedNs);
        h.runUntilIdle();
        assertEquals(2, chat.numOutputTokens());
        h.engine.abort(submit(h, "sql-late", SQL, 2), FinishReason.ABORT, h.nowNs);
        assertEquals(List.of(), adapters(h.engine, false), "a request aborted while waiting leaves the waiting set");
    }

    @Test
    void shouldShareCachedBlocksOnlyWithinOneAdapter()
    {
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).maxLoras(4));
        final int[] prompt = EngineHarness.prompt("shared", 100);
        final Request base = submit(h, "base", prompt, null, 1);
        h.runUntilIdle();
        final Request sqlFirst = submit(h, "sql-1", prompt, SQL, 1);
        h.runUntilIdle();
        assertEquals(0, sqlFirst.numCachedTokens(), "an adapter never hits blocks of the base model");
        final Request sqlAgain = submit(h, "sql-2", prompt, SQL, 1);
        h.runUntilIdle();
        assertEquals(96, sqlAgain.numCachedTokens(), "the same adapter shares its 6 full blocks");
        final Request chat = submit(h, "chat", prompt, CHAT, 1);
        h.runUntilIdle();
        assertEquals(0, chat.numCachedTokens(), "another adapter does not");
        final Request baseAgain = submit(h, "base-2", prompt, null, 1);
        h.runUntilIdle();
        assertEquals(96, baseAgain.numCachedTokens(), "the base model still has its own");
        assertEquals(0, base.numCachedTokens());
        assertEquals(18, h.engine.kvBlockPool().cachedBlocks(), "three chains of 6 blocks: base, sql, chat");

        final BlockHasher router = new BlockHasher("0");
        final long[] sqlHashes = router.blockHashes(prompt, 16, "sql", null);
        for (final long hash : sqlHashes)
        {
            assertTrue(h.engine.kvBlockPool().cachedBlock(hash) >= 0, "cached under the hash a router computes");
        }
        assertNotEquals(sqlHashes[0], router.blockHashes(prompt, 16, null, null)[0]);
        assertNotEquals(sqlHashes[5], router.blockHashes(prompt, 16, "chat", null)[5]);
    }

    @Test
    void shouldReportTheAdapterInBlockStored()
    {
        final List<Object[]> stored = new ArrayList<>();
        final KvEventSink sink = new KvEventSink()
        {
            @Override
            public void blockStored(final long[] blockHashes, final int firstBlock, final int blockCount,
                final int[] tokenIds, final int blockSize, final int loraId, final byte[] loraNameUtf8,
                final byte[] cacheSaltUtf8, final dev.tapedeck.kv.MediaSpans media)
            {
                stored.add(new Object[] {blockCount, loraId,
                    null == loraNameUtf8 ? null : new String(loraNameUtf8, StandardCharsets.UTF_8),
                    java.util.Arrays.copyOfRange(blockHashes, firstBlock, firstBlock + blockCount)});
            }

            @Override
            public void blockRemoved(final long blockHash)
            {
            }

            @Override
            public void offloadedBlocksStored(final long[] blockHashes, final int blockCount, final int blockSize)
            {
            }

            @Override
            public void offloadedBlockRemoved(final long blockHash)
            {
            }

            @Override
            public void allBlocksCleared()
            {
            }

            @Override
            public void endOfStep(final long nowNs)
            {
            }
        };
        final EngineHarness h = new EngineHarness(EngineHarness.config(model).kvEventSink(sink));
        final int[] prompt = EngineHarness.prompt("events", 40);
        submit(h, "sql", prompt, SQL, 1);
        h.runUntilIdle();
        submit(h, "base", prompt, null, 1);
        h.runUntilIdle();
        assertEquals(2, stored.size());
        assertEquals(2, stored.get(0)[0]);
        assertEquals(1, stored.get(0)[1]);
        assertEquals("sql", stored.get(0)[2]);
        assertArrayEquals(new BlockHasher("0").blockHashes(prompt, 16, "sql", null), (long[])stored.get(0)[3]);
        assertEquals(0, stored.get(1)[1], "0: no adapter");
        assertNull(stored.get(1)[2]);
        assertFalse(java.util.Arrays.equals((long[])stored.get(0)[3], (long[])stored.get(1)[3]));
    }
}
