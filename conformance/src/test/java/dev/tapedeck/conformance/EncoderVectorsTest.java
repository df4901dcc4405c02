package dev.tapedeck.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.Value;

import dev.tapedeck.protocol.enginecore.VllmLine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * For every vLLM line: the engine's messages are byte-for-byte the encoder vectors in
 * {@code encoder-vectors/<line>/} (tapedeck's own bytes, kept as regression tests of its encoders), every vector is
 * valid msgpack (msgpack-java reads it, nothing trailing), and the line-specific parts sit where that line expects
 * them.
 */
class EncoderVectorsTest
{
    @ParameterizedTest
    @EnumSource(VllmLine.class)
    void shouldMatchTheEncoderVectors(final VllmLine line) throws IOException
    {
        final Map<String, byte[]> vectors = EncoderVectors.forLine(line);
        for (final Map.Entry<String, byte[]> vector : vectors.entrySet())
        {
            final Path file = Path.of("encoder-vectors", EncoderVectors.folder(line), vector.getKey() + ".hex");
            assertTrue(Files.isRegularFile(file), "missing encoder vector " + file);
            assertEquals(Files.readString(file).trim(), HexFormat.of().formatHex(vector.getValue()),
                line.label() + "/" + vector.getKey() + " drifted from its encoder vector");
            unpack(vector.getValue());
        }
    }

    @ParameterizedTest
    @EnumSource(VllmLine.class)
    void shouldPutCachedTokensWhereTheLineExpectsThem(final VllmLine line) throws IOException
    {
        final ArrayValue output = unpack(EncoderVectors.forLine(line).get("outputs-first-token-with-cached"))
            .asArrayValue().get(1).asArrayValue().get(0).asArrayValue();
        switch (line.outputTail())
        {
            case CACHED_AT_9:
                assertEquals(10, output.size());
                assertEquals(16, output.get(9).asIntegerValue().toInt());
                break;
            case CACHED_AT_10:
                assertEquals(11, output.size());
                assertEquals(16, output.get(10).asIntegerValue().toInt());
                break;
            case CACHED_AT_11:
                assertEquals(12, output.size());
                assertEquals(16, output.get(11).asIntegerValue().toInt());
                break;
            default:
                assertEquals(12, output.size());
                assertTrue(output.get(11).isMapValue(), "prefill_stats");
                assertEquals("16", output.get(11).asMapValue().map().entrySet().stream()
                    .filter(e -> "num_cached_tokens".equals(e.getKey().toString())).findFirst().orElseThrow()
                    .getValue().toString());
        }
        final ArrayValue next = unpack(EncoderVectors.forLine(line).get("outputs-next-token")).asArrayValue()
            .get(1).asArrayValue().get(0).asArrayValue();
        assertEquals(2, next.size(), "a plain token is the two-slot prefix on every line");
        assertFalse(line.maxFinishReason() < 2);
    }

    private static Value unpack(final byte[] bytes) throws IOException
    {
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(bytes))
        {
            final Value value = unpacker.unpackValue();
            assertFalse(unpacker.hasNext(), "nothing after the value");
            return value;
        }
    }
}
