package dev.tapedeck.protocol.enginecore;

import java.io.IOException;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ADD decoder on real frames captured from a vLLM frontend (vllm-vcr fixtures, about 0.23) and on every positional
 * layout from 0.10.0 to main, built with msgpack-java.
 */
class AddRequestDecoderTest
{
    private final AddRequestDecoder decoder = new AddRequestDecoder();

    private AddRequest decode(final byte[] payload)
    {
        final AddRequest out = new AddRequest();
        assertTrue(decoder.decode(new UnsafeBuffer(payload), 0, payload.length, out), decoder.error());
        return out;
    }

    @Test
    void shouldDecodeTheRealMultimodalRequestWithAnAuxFrame() throws IOException
    {
        final AddRequest r = decode(TestData.hex("vllm-vcr-fixtures/mm_request_large_aux.hex"));
        assertEquals("req-mm-large", r.requestId());
        assertRealPrompt(r);
        assertTrue(r.hasMultimodal);
        assertEquals(1, r.mediaCount());
        assertEquals("encoder-cache-key", r.mediaIdentifier(0), "the identifier, not the processor's mm_hash");
        assertEquals(4, r.mediaOffset(0));
        assertEquals(256, r.mediaLength(0));
        assertEquals(16, r.maxTokens, "max_tokens absent: the default");
        assertEquals(0, r.stopTokenIds().length);
        assertEquals(0, r.clientIndex);
        assertEquals(0, r.priority);
        assertEquals(0.0, r.arrivalTime);
        assertFalse(r.isPooling);
    }

    @Test
    void shouldDecodeTheRealMultimodalRequestWithAnInlineTensor() throws IOException
    {
        final AddRequest r = decode(TestData.hex("vllm-vcr-fixtures/mm_request_small_inline.hex"));
        assertTrue(r.requestId().startsWith("req-mm-"), r.requestId());
        assertTrue(r.hasMultimodal);
        assertEquals(1, r.mediaCount(), "the tensor inline in the feature is stepped over");
        assertEquals("encoder-cache-key", r.mediaIdentifier(0));
        assertEquals(4, r.mediaOffset(0));
        assertEquals(256, r.mediaLength(0));
        assertEquals(16, r.maxTokens);
        final byte[] payload = TestData.hex("vllm-vcr-fixtures/mm_request_small_inline.hex");
        assertTrue(decoder.decode(new UnsafeBuffer(payload), 0, payload.length, r), "decoded again into the same");
        assertEquals(1, r.mediaCount(), "a reused request starts without media");
    }

    private static void assertRealPrompt(final AddRequest r)
    {
        assertEquals(259, r.promptLength());
        assertEquals(2, r.promptTokenId(0));
        assertEquals(108, r.promptTokenId(1));
        assertEquals(262144, r.promptTokenId(2));
        assertEquals(108, r.promptTokenId(258));
    }

    /** Builds an EngineCoreRequest in one of the historical layouts. */
    private static byte[] request(final String layout) throws IOException
    {
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        final boolean old = "L-A".equals(layout);
        final boolean eos = old || "L-C".equals(layout) || "L-D".equals(layout);
        final int slots = switch (layout)
        {
            case "L-A" -> 15;
            case "L-C" -> 14;
            case "L-D" -> 17;
            case "L-E" -> 17;
            case "L-F" -> 20;
            default -> 22;
        };
        p.packArrayHeader(slots);
        p.packString("req-" + layout);
        p.packArrayHeader(3).packInt(1).packInt(2).packInt(3);
        int written = 2;
        if (old)
        {
            p.packNil().packNil().packNil();
            written += 3;
        }
        else
        {
            p.packNil();
            written++;
        }
        p.packMapHeader(4).packString("max_tokens").packInt(40).packString("stop_token_ids").packArrayHeader(1)
            .packInt(7).packString("ignore_eos").packBoolean(true).packString("extra_args").packMapHeader(1)
            .packString("kv_transfer_params").packMapHeader(1).packString("do_remote_decode").packBoolean(true);
        p.packNil(); // pooling
        written += 2;
        if (eos)
        {
            p.packInt(151645);
            written++;
        }
        p.packDouble(1795261424.5);
        p.packArrayHeader(3).packString("my-lora").packInt(3).packString("/path");
        p.packString("salt");
        p.packInt(1);
        written += 4;
        final int nonIntSlots = "L-A".equals(layout) || "L-C".equals(layout) ? 0 :
            "L-D".equals(layout) || "L-E".equals(layout) ? 1 : 2;
        for (int i = 0; i < nonIntSlots; i++)
        {
            p.packNil();
            written++;
        }
        p.packInt(2).packInt(0).packInt(-5); // client_index, current_wave, priority
        written += 3;
        while (written < slots)
        {
            p.packNil();
            written++;
        }
        return p.toByteArray();
    }

    @Test
    void shouldDecodeEveryHistoricalLayout() throws IOException
    {
        for (final String layout : new String[] {"L-A", "L-C", "L-D", "L-E", "L-F", "L-G"})
        {
            final AddRequest r = decode(request(layout));
            assertEquals("req-" + layout, r.requestId());
            assertArrayEquals(new int[] {1, 2, 3}, r.promptTokenIds(), layout);
            assertEquals(40, r.maxTokens, layout);
            assertTrue(r.ignoreEos, layout);
            assertArrayEquals(new int[] {7}, r.stopTokenIds(), layout);
            assertNotNull(r.kvTransferParams(), layout);
            assertEquals(1795261424.5, r.arrivalTime, layout);
            assertEquals("my-lora", r.loraName, layout);
            assertEquals(3, r.loraId, layout);
            assertEquals("salt", r.cacheSalt, layout);
            assertEquals(1, r.dataParallelRank, layout);
            assertEquals(2, r.clientIndex, layout);
            assertEquals(-5, r.priority, layout);
            assertEquals(layout.equals("L-A") || layout.equals("L-C") || layout.equals("L-D") ? 151645 :
                AddRequest.ABSENT, r.eosTokenId, layout);
        }
    }

    @Test
    void shouldKeepTheRequestIdOfAMalformedRequestForLogging() throws IOException
    {
        final MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(5).packString("req-bad").packString("not an array");
        final AddRequest out = new AddRequest();
        final byte[] bytes = p.toByteArray();
        assertFalse(decoder.decode(new UnsafeBuffer(bytes), 0, bytes.length, out));
        assertEquals("req-bad", out.requestId());
        assertTrue(decoder.error().contains("prompt_token_ids"), decoder.error());
        final byte[] garbage = {1, 2, 3};
        assertFalse(decoder.decode(new UnsafeBuffer(garbage), 0, 3, out));
        assertNull(out.requestId());
    }
}
