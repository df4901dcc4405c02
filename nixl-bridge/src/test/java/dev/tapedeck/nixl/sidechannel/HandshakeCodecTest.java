package dev.tapedeck.nixl.sidechannel;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import dev.tapedeck.nixl.KvTransferException;
import dev.tapedeck.protocol.msgpack.MsgPackReader;
import dev.tapedeck.protocol.msgpack.MsgPackWriter;
import dev.tapedeck.protocol.msgpack.ValueType;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HandshakeCodecTest
{
    private static final NixlAgentMetadata METADATA = new NixlAgentMetadata("prefill-0",
        "127.0.0.1:40123".getBytes(StandardCharsets.UTF_8), List.of(0L, 1L << 40), 0, 16, List.of(4096L, 4096L),
        "HND", 16, "tcp", 1);

    @Test
    void getMetaRequestIsWhatVllmSends()
    {
        // msgspec.msgpack.encode((b"get_meta_msg", 0)): fixarray 2, bin8 12, the bytes, positive fixint 0
        final byte[] expected = new byte[2 + 2 + 12 + 1];
        expected[0] = (byte)0x92;
        expected[1] = (byte)0xc4;
        expected[2] = 12;
        System.arraycopy("get_meta_msg".getBytes(StandardCharsets.US_ASCII), 0, expected, 3, 12);
        expected[15] = 0;
        assertArrayEquals(Arrays.copyOf(expected, 16), HandshakeCodec.encodeGetMeta(0));
        final HandshakeCodec.Request request = HandshakeCodec.decodeRequest(HandshakeCodec.encodeGetMeta(3));
        assertEquals(HandshakeCodec.GET_META_MSG, request.tag());
        assertEquals(3, request.tpRank());
        assertNull(request.notification());
    }

    @Test
    void notifRequestRoundTrips()
    {
        final HandshakeCodec.Request request =
            HandshakeCodec.decodeRequest(HandshakeCodec.encodeNotif("req-1:1", -42L));
        assertEquals(HandshakeCodec.TAPEDECK_NOTIF, request.tag());
        assertEquals("req-1:1", request.notification());
        assertEquals(-42L, request.deliveryId());
        assertEquals(-1, request.tpRank());
    }

    @Test
    void notifWithoutADeliveryIdIsAcceptedAndARankWithOneIsNot()
    {
        final MsgPackWriter twoArray = new MsgPackWriter().wrap(new ExpandableArrayBuffer(), 0);
        twoArray.arrayHeader(2);
        twoArray.string(HandshakeCodec.TAPEDECK_NOTIF);
        twoArray.string("req-2:1");
        final HandshakeCodec.Request request = HandshakeCodec.decodeRequest(
            Arrays.copyOf(twoArray.buffer().byteArray(), twoArray.position()));
        assertEquals("req-2:1", request.notification());
        assertEquals(0L, request.deliveryId());

        final MsgPackWriter rankWithId = new MsgPackWriter().wrap(new ExpandableArrayBuffer(), 0);
        rankWithId.arrayHeader(3);
        rankWithId.string(HandshakeCodec.GET_META_MSG);
        rankWithId.int64(0);
        rankWithId.int64(7);
        final KvTransferException ex = assertThrows(KvTransferException.class, () -> HandshakeCodec.decodeRequest(
            Arrays.copyOf(rankWithId.buffer().byteArray(), rankWithId.position())));
        assertTrue(ex.getMessage().contains("must carry a notification"), ex.getMessage());
    }

    @Test
    void metadataIsAMapWithVllmKeysAndTypesInOrder()
    {
        final byte[] bytes = HandshakeCodec.encodeMetadata(METADATA);
        final MsgPackReader reader = new MsgPackReader().wrap(new UnsafeBuffer(bytes), 0, bytes.length);
        assertEquals(10, reader.readMapHeader());
        final String[] keys = {"engine_id", "agent_metadata", "kv_caches_base_addr", "device_id", "num_blocks",
            "block_lens", "kv_cache_layout", "block_size", "plane", "kvb_version"};
        final ValueType[] types = {ValueType.STRING, ValueType.BINARY, ValueType.ARRAY, ValueType.INTEGER,
            ValueType.INTEGER, ValueType.ARRAY, ValueType.STRING, ValueType.INTEGER, ValueType.STRING,
            ValueType.INTEGER};
        for (int i = 0; i < keys.length; i++)
        {
            assertEquals(keys[i], reader.readString(), "key " + i);
            assertEquals(types[i], reader.nextType(), keys[i]);
            if (ValueType.ARRAY == types[i])
            {
                final int count = reader.readArrayHeader();
                assertEquals(2, count);
                for (int j = 0; j < count; j++)
                {
                    assertEquals(ValueType.INTEGER, reader.nextType(), keys[i] + "[" + j + "]");
                    reader.skipValue();
                }
            }
            else
            {
                reader.skipValue();
            }
        }
        assertTrue(reader.ok(), reader.errorMessage());
        assertEquals(0, reader.remaining());
        assertEquals(METADATA, HandshakeCodec.decodeMetadata(bytes));
    }

    @Test
    void payloadRoundTripsInTwoPhases()
    {
        final byte[] payload = HandshakeCodec.encodePayload("abc123", METADATA);
        final MsgPackReader reader = new MsgPackReader().wrap(new UnsafeBuffer(payload), 0, payload.length);
        assertEquals(2, reader.readMapHeader());
        assertEquals("compatibility_hash", reader.readString());
        assertEquals("abc123", reader.readString());
        assertEquals("agent_metadata_bytes", reader.readString());
        assertEquals(ValueType.BINARY, reader.nextType());
        final byte[][] decoded = HandshakeCodec.decodePayload(payload);
        assertEquals("abc123", new String(decoded[0], StandardCharsets.UTF_8));
        assertEquals(METADATA, HandshakeCodec.decodeMetadata(decoded[1]));
    }

    @Test
    void metadataOfAVllmPeerHasNoExtras()
    {
        final NixlAgentMetadata vllm = new NixlAgentMetadata("e", new byte[] {1, 2}, List.of(123L), 3, 7,
            List.of(8L), "NHD", 16, null, 0);
        final byte[] bytes = HandshakeCodec.encodeMetadata(vllm);
        assertEquals((byte)0x88, bytes[0], "fixmap of vLLM's 8 fields");
        assertEquals(vllm, HandshakeCodec.decodeMetadata(bytes));
    }

    @Test
    void everyTruncationIsRejected()
    {
        final byte[] metadata = HandshakeCodec.encodeMetadata(METADATA);
        final byte[] payload = HandshakeCodec.encodePayload("h", METADATA);
        for (int length = 0; length < metadata.length; length++)
        {
            final byte[] cut = Arrays.copyOf(metadata, length);
            final KvTransferException ex = assertThrows(KvTransferException.class,
                () -> HandshakeCodec.decodeMetadata(cut), "length " + length);
            assertTrue(ex.getMessage().startsWith("malformed NixlAgentMetadata"), ex.getMessage());
        }
        for (int length = 0; length < payload.length; length++)
        {
            final byte[] cut = Arrays.copyOf(payload, length);
            assertThrows(KvTransferException.class, () -> HandshakeCodec.decodePayload(cut), "length " + length);
        }
    }

    @Test
    void malformedInputIsRejectedWithAClearMessage()
    {
        final KvTransferException trailing = assertThrows(KvTransferException.class, () ->
        {
            final byte[] bytes = HandshakeCodec.encodeMetadata(METADATA);
            HandshakeCodec.decodeMetadata(Arrays.copyOf(bytes, bytes.length + 1));
        });
        assertTrue(trailing.getMessage().contains("trailing"), trailing.getMessage());
        final KvTransferException notAMap = assertThrows(KvTransferException.class,
            () -> HandshakeCodec.decodeMetadata(new byte[] {(byte)0x91, 0}));
        assertTrue(notAMap.getMessage().contains("unexpected value type"), notAMap.getMessage());
        // {"engine_id": 5}: an int where vLLM has a str
        final byte[] wrongType = {(byte)0x81, (byte)0xa9, 'e', 'n', 'g', 'i', 'n', 'e', '_', 'i', 'd', 5};
        assertThrows(KvTransferException.class, () -> HandshakeCodec.decodeMetadata(wrongType));
        // {"engine_id": "e"}: the other seven fields missing
        final byte[] missing = {(byte)0x81, (byte)0xa9, 'e', 'n', 'g', 'i', 'n', 'e', '_', 'i', 'd', (byte)0xa1, 'e'};
        final KvTransferException ex = assertThrows(KvTransferException.class,
            () -> HandshakeCodec.decodeMetadata(missing));
        assertEquals("malformed NixlAgentMetadata: missing agent_metadata", ex.getMessage());
        assertThrows(KvTransferException.class, () -> HandshakeCodec.decodeRequest(new byte[] {(byte)0x93, 1, 2, 3}));
        assertThrows(KvTransferException.class, () -> HandshakeCodec.decodePayload(new byte[] {(byte)0x80}));
    }
}
