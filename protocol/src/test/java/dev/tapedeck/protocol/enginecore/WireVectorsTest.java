package dev.tapedeck.protocol.enginecore;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import dev.tapedeck.protocol.msgpack.MsgPackWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Byte-exact vectors from the engine-core wire specification (docs/engine-core.md): handshake messages, outputs,
 * utility calls and replies.
 */
class WireVectorsTest
{
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(256);
    private final MsgPackWriter writer = new MsgPackWriter();

    private String hex(final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return HexFormat.of().formatHex(bytes);
    }

    private static String ascii(final String text)
    {
        return HexFormat.of().formatHex(text.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void shouldWriteHelloAndReadyByteForByte()
    {
        assertEquals("83a6" + ascii("status") + "a5" + ascii("HELLO") + "a5" + ascii("local") + "c2a8" +
            ascii("headless") + "c3", hex(Handshake.hello(writer.wrap(buffer, 0))));
        assertEquals("85a6" + ascii("status") + "a5" + ascii("READY") + "a5" + ascii("local") + "c2a8" +
            ascii("headless") + "c3ae" + ascii("num_gpu_blocks") + "cd03e8b0" + ascii("dp_stats_address") + "c0",
            hex(Handshake.ready(writer.wrap(buffer, 0), 1000)));
    }

    @Test
    void shouldWriteOneTokenOutputsByteForByte()
    {
        final int length = new EngineCoreOutputsEncoder().begin(buffer, VllmLine.NEWEST, 0)
            .output("req-1".getBytes(StandardCharsets.UTF_8), new int[] {42}, 0, 1,
                EngineCoreOutputsEncoder.NO_FINISH, EngineCoreOutputsEncoder.NONE, null, 8,
                EngineCoreOutputsEncoder.NONE)
            .end(null, 12345.5, null, 0);
        // [0, [["req-1", [42]]], nil, 12345.5]
        assertEquals("94009192a5" + ascii("req-1") + "912ac0cb40c81cc000000000", hex(length));
    }

    @Test
    void shouldWriteARunningOutputFromItsEncodedHeadByteForByte()
    {
        final byte[] head = EngineCoreOutputsEncoder.runningOutputHead("req-1".getBytes(StandardCharsets.UTF_8));
        assertEquals("92a5" + ascii("req-1"), HexFormat.of().formatHex(head));
        final int length = new EngineCoreOutputsEncoder().begin(buffer, VllmLine.NEWEST, 0)
            .runningOutput(head, new int[] {7, 42, 300}, 1, 2)
            .runningOutput(head, new int[] {5}, 0, 1)
            .end(null, 12345.5, null, 0);
        // [0, [["req-1", [42, 300]], ["req-1", [5]]], nil, 12345.5]: what output() writes for the same
        assertEquals("94009292a5" + ascii("req-1") + "922acd012c92a5" + ascii("req-1") + "9105c0cb40c81cc000000000",
            hex(length));
    }

    @Test
    void shouldWriteAFinishAndTheFinishedRequestsAsTheShortestPrefix()
    {
        final byte[] id = "req-1".getBytes(StandardCharsets.UTF_8);
        final int length = new EngineCoreOutputsEncoder().begin(buffer, VllmLine.NEWEST, 0)
            .output(id, new int[] {7}, 0, 1, 1, EngineCoreOutputsEncoder.NONE, null, 8,
                EngineCoreOutputsEncoder.NONE)
            .end(null, 0.0, new byte[][] {id}, 1);
        // [0, [["req-1", [7], nil, nil, nil, 1]], nil, 0.0, nil, ["req-1"]]
        assertEquals("96009196a5" + ascii("req-1") + "9107c0c0c001c0cb0000000000000000c091a5" + ascii("req-1"),
            hex(length));
    }

    @Test
    void shouldAnswerAUtilityCallWithTheCallIdBitExact()
    {
        final byte[] call = HexFormat.of().parseHex("9400cf8000000000000005b3" + ascii("get_supported_tasks") + "90");
        final UtilityCall utility = new UtilityCall();
        assertTrue(utility.decode(new UnsafeBuffer(call), 0, call.length));
        assertEquals("get_supported_tasks", utility.method());
        assertEquals(0x8000000000000005L, utility.callId());
        final int length = utility.writeReply(writer.wrap(buffer, 0), 0, 12346.0, null,
            w -> w.arrayHeader(1).string("generate"));
        // [0, [], nil, 12346.0, [9223372036854775813, nil, [nil, ["generate"]]]]
        assertEquals("950090c0cb40c81d000000000093cf8000000000000005c092c091a8" + ascii("generate"), hex(length));
    }

    @Test
    void shouldAnswerAFailedUtilityCallWithTheMessage()
    {
        final byte[] call = HexFormat.of().parseHex("940011a3" + ascii("foo") + "90");
        final UtilityCall utility = new UtilityCall();
        assertTrue(utility.decode(new UnsafeBuffer(call), 0, call.length));
        final int length = utility.writeReply(writer.wrap(buffer, 0), 0, 0.0, "Call to foo method failed: nope",
            UtilityCall.NIL);
        assertEquals("950090c0cb0000000000000000" + "9311bf" + ascii("Call to foo method failed: nope") + "c0",
            hex(length));
    }

    @Test
    void shouldMapVersionsToLines()
    {
        assertEquals(VllmLine.V0_10, VllmLine.of("0.10.1.1"));
        assertEquals(VllmLine.V0_11, VllmLine.of("0.10.2"));
        assertEquals(VllmLine.V0_11, VllmLine.of("v0.12.0"));
        assertEquals(VllmLine.V0_15, VllmLine.of("0.18"));
        assertEquals(VllmLine.V0_19, VllmLine.of("0.22.1"));
        assertEquals(VllmLine.V0_23, VllmLine.of("0.23"));
        assertEquals(VllmLine.V0_24, VllmLine.of("0.26.0"));
        assertEquals(VllmLine.V0_27, VllmLine.of("0.27.3"));
        assertEquals(VllmLine.V0_28, VllmLine.of("0.33.0"));
        assertEquals(VllmLine.NEWEST, VllmLine.of("0.28"));
        try
        {
            VllmLine.of("0.9.2");
            throw new AssertionError("0.9 is not supported");
        }
        catch (final IllegalArgumentException expected)
        {
            assertTrue(expected.getMessage().contains("supported"));
        }
    }
}
