package dev.tapedeck.kvevents;

import java.util.HexFormat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import dev.tapedeck.kv.BlockHasher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The msgpack {@code KVEventBatch} bytes, checked byte for byte against the worked example of the wire notes
 * (wire-spec §6.2: tokens 1..8, block size 4, seed "0", ts 1700000000.5, rank 0) in both encodings, plus the other
 * event types and the settings' endpoint rules.
 */
class KvEventBatchEncoderTest
{
    private static final long H0 = 2164874634404590027L;
    private static final long H1 = Long.parseUnsignedLong("17270480062156288726");
    private static final long TS_NS = 1_700_000_000_500_000_000L;

    private static String hex(final byte[] bytes)
    {
        return HexFormat.of().formatHex(bytes);
    }

    private static String ascii(final String text)
    {
        return HexFormat.of().formatHex(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    /** Stage through the engine's side and take the record back out of the ring. */
    private static byte[] encode(final boolean asMaps, final java.util.function.Consumer<KvEventStager> events)
    {
        return encode(asMaps, false, events);
    }

    private static byte[] encode(final boolean asMaps, final boolean extraKeys,
        final java.util.function.Consumer<KvEventStager> events)
    {
        // the engine's clock reads 0 when the stager is made and the step ends 250 ms later: the batch is dated by the
        // wall clock at the stager's making plus those 250 ms, the example's timestamp
        final KvEventStager stager = new KvEventStager(64 * 1024, () -> 0L, () -> TS_NS - 250_000_000L);
        events.accept(stager);
        stager.endOfStep(250_000_000L);
        final KvEventBatchEncoder encoder = new KvEventBatchEncoder(asMaps, extraKeys, 0);
        final byte[][] out = new byte[1][];
        assertEquals(1, stager.ring().read((type, buffer, index, length) ->
        {
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[length]);
            copy.putBytes(0, buffer, index, length);
            out[0] = encoder.encode(copy, 0, length);
        }));
        return out[0];
    }

    private static void storeExample(final KvEventStager stager)
    {
        final long[] hashes = new BlockHasher("0").blockHashes(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, null, null);
        assertEquals(H0, hashes[0]);
        assertEquals(H1, hashes[1]);
        stager.blockStored(hashes, 0, 2, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4);
    }

    @Test
    void shouldEncodeHostTierEventsWithTheCpuMediumAndNoTokens()
    {
        final long[] hashes = {H0, H1};
        final String arrays = hex(encode(false, stager ->
        {
            stager.offloadedBlocksStored(hashes, 2, 32);
            stager.offloadedBlockRemoved(H1);
        }));
        // ["BlockStored", [H0, H1], nil, [], 32, nil, "CPU", nil], ["BlockRemoved", [H1], "CPU"]
        final String stored = "98" + "ab" + ascii("BlockStored") + "92" + "cf" + String.format("%016x", H0) + "cf" +
            String.format("%016x", H1) + "c0" + "90" + "20" + "c0" + "a3" + ascii("CPU") + "c0";
        final String removed = "93" + "ac" + ascii("BlockRemoved") + "91" + "cf" + String.format("%016x", H1) + "a3" +
            ascii("CPU");
        assertEquals("93" + "cb41d954fc40200000" + "92" + stored + removed + "00", arrays);
        // vLLM 0.19 to 0.22: ten elements, extra_keys nil and group_idx 0 after lora_name
        assertEquals("93" + "cb41d954fc40200000" + "91" + stored.replaceFirst("^98", "9a") + "c0" + "00" + "00",
            hex(encode(false, true, stager -> stager.offloadedBlocksStored(hashes, 2, 32))));
        final String maps = hex(encode(true, stager -> stager.offloadedBlocksStored(hashes, 1, 16)));
        assertTrue(maps.contains("a6" + ascii("medium") + "a3" + ascii("CPU") + "a9" + ascii("lora_name") + "c0" +
            "aa" + ascii("extra_keys") + "c0"), maps);
        assertTrue(maps.contains("a9" + ascii("token_ids") + "90" + "aa" + ascii("block_size") + "10"), maps);
    }

    @Test
    void shouldEncodeTheArrayFormOfTheWorkedExample()
    {
        final String expected = "93" + "cb41d954fc40200000" + "91" + "98" + "ab" + ascii("BlockStored") +
            "92" + "cf" + String.format("%016x", H0) + "cf" + String.format("%016x", H1) + "c0" +
            "98" + "0102030405060708" + "04" + "c0" + "a3" + ascii("GPU") + "c0" + "00";
        assertEquals(expected, hex(encode(false, KvEventBatchEncoderTest::storeExample)));
    }

    @Test
    void shouldCarryTheLoraIdAndNameInBothForms()
    {
        final long[] hashes = new BlockHasher("0").blockHashes(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, "sql", null);
        final java.util.function.Consumer<KvEventStager> stored = stager -> stager.blockStored(hashes, 1, 1,
            new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, 300, "sql".getBytes(java.nio.charset.StandardCharsets.UTF_8), null,
            null);
        final String blocks = "91" + "cf" + String.format("%016x", hashes[1]);
        final String parent = "cf" + String.format("%016x", hashes[0]);
        // lora_id 300 is a uint16 (cd 01 2c); lora_name a fixstr
        assertEquals("93" + "cb41d954fc40200000" + "91" + "98" + "ab" + ascii("BlockStored") + blocks + parent +
            "94" + "05060708" + "04" + "cd012c" + "a3" + ascii("GPU") + "a3" + ascii("sql") + "00",
            hex(encode(false, stored)));
        assertEquals("93" + "cb41d954fc40200000" + "91" + "8b" + "a4" + ascii("type") + "ab" +
            ascii("BlockStored") + "ac" + ascii("block_hashes") + blocks + "b1" + ascii("parent_block_hash") +
            parent + "a9" + ascii("token_ids") + "94" + "05060708" + "aa" + ascii("block_size") + "04" + "a7" +
            ascii("lora_id") + "cd012c" + "a6" + ascii("medium") + "a3" + ascii("GPU") + "a9" + ascii("lora_name") +
            "a3" + ascii("sql") + "aa" + ascii("extra_keys") + "91" + "91" + "a3" + ascii("sql") + "a9" +
            ascii("group_idx") + "00" + "b2" + ascii("kv_cache_spec_kind") + "ae" + ascii("full_attention") + "00",
            hex(encode(true, stored)), "the LoRA name is the block's extra key");
    }

    @Test
    void shouldCarryExtraKeysAndGroupIndexInTheArraysOfVllm019()
    {
        final long[] hashes = new BlockHasher("0").blockHashes(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, "sql", "s1");
        final String text = hex(encode(false, true, stager -> stager.blockStored(hashes, 0, 2,
            new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, 300, "sql".getBytes(java.nio.charset.StandardCharsets.UTF_8),
            "s1".getBytes(java.nio.charset.StandardCharsets.UTF_8), null)));
        // ["BlockStored", hashes, nil, tokens, 4, 300, "GPU", "sql", [["sql","s1"], ["sql"]], 0]: the salt is an
        // extra key of the first block only, as in vLLM's block hash
        assertEquals("93" + "cb41d954fc40200000" + "91" + "9a" + "ab" + ascii("BlockStored") + "92" + "cf" +
            String.format("%016x", hashes[0]) + "cf" + String.format("%016x", hashes[1]) + "c0" + "98" +
            "0102030405060708" + "04" + "cd012c" + "a3" + ascii("GPU") + "a3" + ascii("sql") + "92" + "92" + "a3" +
            ascii("sql") + "a2" + ascii("s1") + "91" + "a3" + ascii("sql") + "00" + "00", text);
        final String plain = hex(encode(false, true, KvEventBatchEncoderTest::storeExample));
        assertTrue(plain.contains("a3" + ascii("GPU") + "c0" + "92c0c0" + "00"), "a text block's keys are nil, " +
            "one per block: " + plain);
    }

    @Test
    void shouldCarryTheIdentifiersOfTheMediaEachBlockHolds()
    {
        final int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        final dev.tapedeck.kv.MediaSpans media = new dev.tapedeck.kv.MediaSpans(new String[] {"img-a", "img-b"},
            new int[] {2, 5}, new int[] {3, 4});
        final long[] hashes = new BlockHasher("0").blockHashes(tokens, 4, null, "s1", media);
        final java.util.function.Consumer<KvEventStager> stored = stager ->
        {
            stager.blockStored(hashes, 1, 2, tokens, 4, 0, null,
                "s1".getBytes(java.nio.charset.StandardCharsets.UTF_8), media);
            stager.blockRemoved(H0);
        };
        // blocks 1 and 2: (img-a, img-b) and (img-b); no salt past block 0
        final String keys = "92" + "92" + "a5" + ascii("img-a") + "a5" + ascii("img-b") + "91" + "a5" +
            ascii("img-b");
        final String arrays = hex(encode(false, true, stored));
        assertTrue(arrays.contains("a3" + ascii("GPU") + "c0" + keys + "00" + "93" + "ac" + ascii("BlockRemoved")),
            arrays);
        assertTrue(hex(encode(true, stored)).contains("aa" + ascii("extra_keys") + keys), "the map form too");
        final String older = hex(encode(false, false, stored));
        assertTrue(older.contains("a3" + ascii("GPU") + "c0" + "93" + "ac" + ascii("BlockRemoved")),
            "a line without extra_keys steps over them to the next event: " + older);
    }

    @Test
    void shouldEncodeTheMapFormOfTheWorkedExample()
    {
        final String expected = "93" + "cb41d954fc40200000" + "91" + "8b" + "a4" + ascii("type") + "ab" +
            ascii("BlockStored") + "ac" + ascii("block_hashes") + "92" + "cf" + String.format("%016x", H0) + "cf" +
            String.format("%016x", H1) + "b1" + ascii("parent_block_hash") + "c0" + "a9" + ascii("token_ids") +
            "98" + "0102030405060708" + "aa" + ascii("block_size") + "04" + "a7" + ascii("lora_id") + "c0" + "a6" +
            ascii("medium") + "a3" + ascii("GPU") + "a9" + ascii("lora_name") + "c0" + "aa" + ascii("extra_keys") +
            "92" + "c0c0" + "a9" + ascii("group_idx") + "00" + "b2" + ascii("kv_cache_spec_kind") + "ae" +
            ascii("full_attention") + "00";
        assertEquals(expected, hex(encode(true, KvEventBatchEncoderTest::storeExample)));
    }

    @Test
    void shouldEncodeAParentRemovalsAndClearInOrder()
    {
        final String arrays = hex(encode(false, stager ->
        {
            stager.blockRemoved(H1);
            stager.blockStored(new long[] {H0, H1}, 1, 1, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4);
            stager.allBlocksCleared();
        }));
        assertEquals("93" + "cb41d954fc40200000" + "93" +
            "93" + "ac" + ascii("BlockRemoved") + "91" + "cf" + String.format("%016x", H1) + "a3" + ascii("GPU") +
            "98" + "ab" + ascii("BlockStored") + "91" + "cf" + String.format("%016x", H1) +
            "cf" + String.format("%016x", H0) + "94" + "05060708" + "04" + "c0" + "a3" + ascii("GPU") + "c0" +
            "91" + "b0" + ascii("AllBlocksCleared") + "00", arrays);
        final String maps = hex(encode(true, stager ->
        {
            stager.blockRemoved(H0);
            stager.allBlocksCleared();
        }));
        assertEquals("93" + "cb41d954fc40200000" + "92" +
            "84" + "a4" + ascii("type") + "ac" + ascii("BlockRemoved") + "ac" + ascii("block_hashes") + "91" + "cf" +
            String.format("%016x", H0) + "a6" + ascii("medium") + "a3" + ascii("GPU") + "a9" + ascii("group_idx") +
            "00" + "81" + "a4" + ascii("type") + "b0" + ascii("AllBlocksCleared") + "00", maps);
    }

    @Test
    void shouldPublishNothingForAStepWithoutEventsAndCountDropsWhenTheRingIsFull()
    {
        final KvEventStager stager = new KvEventStager(4096);
        stager.endOfStep(0);
        assertEquals(0, stager.ring().size(), "no events, no batch");
        final int[] tokens = new int[16 * 16];
        final long[] hashes = new long[16];
        int written = 0;
        for (int i = 0; i < 20; i++)
        {
            stager.blockStored(hashes, 0, 2, tokens, 16); // ~170 bytes a batch
            stager.endOfStep(0);
            written++;
        }
        assertEquals(0, stager.droppedBatches(), "20 small batches fit 4 KiB");
        while (0 == stager.droppedBatches())
        {
            stager.blockStored(hashes, 0, 2, tokens, 16);
            stager.endOfStep(0);
            written++;
        }
        assertEquals(1, stager.droppedBatches());
        final int[] read = new int[1];
        stager.ring().read((type, buffer, index, length) -> read[0]++, Integer.MAX_VALUE);
        assertEquals(written - 1, read[0], "every batch but the dropped one is in the ring");
        stager.blockStored(hashes, 0, 16, tokens, 16);
        stager.blockStored(hashes, 0, 16, tokens, 16);
        stager.endOfStep(0);
        assertEquals(2, stager.droppedBatches(), "a step larger than a ring message is dropped, not thrown");
    }

    @Test
    void shouldBindWildcardsOffsetReplicaPortsAndRejectOtherEndpoints()
    {
        final KvEventsSettings settings = new KvEventsSettings("tcp://*:5557", "tcp://*:5558", "t", false, 0,
            10, 4096);
        assertEquals(true, settings.bindsPublisher());
        assertEquals("tcp://*:5559", settings.forReplica(2).endpoint());
        assertEquals("tcp://*:5560", settings.forReplica(2).replayEndpoint());
        assertEquals("tcp://127.0.0.1:*", new KvEventsSettings("tcp://127.0.0.1:*", null, "t", false, 0, 10, 4096)
            .forReplica(3).endpoint(), "an ephemeral port stays ephemeral");
        assertEquals(false, new KvEventsSettings("tcp://router:5557", null, "t", false, 0, 10, 4096)
            .bindsPublisher(), "a plain address is connected to, as vLLM does");
        assertEquals("inproc://kv_dp1", new KvEventsSettings("inproc://kv", null, "t", false, 0, 10, 4096)
            .forReplica(1).endpoint());
        assertEquals("kv@10.0.0.7:8000@Qwen/Qwen3-8B", KvEventsSettings.llmdTopic("10.0.0.7", 8000,
            "Qwen/Qwen3-8B"));
        final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () ->
            new KvEventsSettings("localhost:5557", null, "t", false, 0, 10, 4096));
        assertEquals("--kv-events-endpoint must be a ZeroMQ endpoint such as tcp://*:5557, got 'localhost:5557'",
            bad.getMessage());
    }
}
