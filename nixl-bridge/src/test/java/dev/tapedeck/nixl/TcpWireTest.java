package dev.tapedeck.nixl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TcpWireTest
{
    @Test
    void aRequestParsesOnlyWhenWhole()
    {
        final ByteBuffer whole = TcpWire.request(new int[] {2, 5, 9}, "req-1:1".getBytes(StandardCharsets.UTF_8));
        final int length = whole.remaining();
        assertEquals(4 + 4 + 12 + 4 + 7, length);
        for (int cut = 0; cut < length; cut++)
        {
            final ByteBuffer part = whole.duplicate().limit(cut);
            assertNull(TcpWire.parseRequest(part), "cut at " + cut);
            assertEquals(0, part.position(), "nothing consumed at " + cut);
            assertEquals(cut < 8 ? 8 : cut < 24 ? 24 : length, TcpWire.bytesNeeded(part), "cut at " + cut);
        }
        final ByteBuffer two = ByteBuffer.allocate(2 * length).put(whole.duplicate())
            .put(TcpWire.request(new int[0], new byte[0])).flip();
        final TcpWire.Request first = TcpWire.parseRequest(two);
        assertNotNull(first);
        assertArrayEquals(new int[] {2, 5, 9}, first.blockIds());
        assertEquals("req-1:1", first.notification());
        final TcpWire.Request second = TcpWire.parseRequest(two);
        assertNotNull(second);
        assertEquals(0, second.blockIds().length);
        assertEquals("", second.notification());
        assertEquals(0, two.remaining());
    }

    @Test
    void garbageIsAProtocolError()
    {
        final ByteBuffer http = ByteBuffer.wrap("GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
        assertThrows(TcpWire.ProtocolException.class, () -> TcpWire.parseRequest(http));
        final ByteBuffer huge = ByteBuffer.allocate(8).putInt(TcpWire.MAGIC).putInt(-1).flip();
        assertThrows(TcpWire.ProtocolException.class, () -> TcpWire.parseRequest(huge));
        final ByteBuffer longNotif = ByteBuffer.allocate(12).putInt(TcpWire.MAGIC).putInt(0)
            .putInt(TcpWire.MAX_MESSAGE_BYTES + 1).flip();
        assertThrows(TcpWire.ProtocolException.class, () -> TcpWire.parseRequest(longNotif));
    }

    @Test
    void theAnswerIsTheHeaderThenTheBlockViews()
    {
        final KvPool pool = KvPool.allocateDirect(4, 64);
        final ByteBuffer[] answer = TcpWire.answer(new TcpWire.Request(new int[] {3, 1}, ""), pool);
        assertEquals(3, answer.length);
        assertEquals(TcpWire.STATUS_OK, answer[0].getInt(0));
        assertEquals(128L, answer[0].getLong(4));
        assertEquals(64, answer[1].remaining());
        assertEquals("block 4 is not in a pool of 4", TcpWire.check(new TcpWire.Request(new int[] {4}, ""), pool));
        assertNull(TcpWire.check(new TcpWire.Request(new int[] {0, 3}, ""), pool));
    }
}
