package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The line gatherer shared by the response parser and the SSE reader: the same lines whatever the reads' edges, and
 * one limit rule for a line still coming and a line already whole.
 */
class LineGathererTest
{
    @Test
    void shouldHandOverTheSameLinesWhereverTheReadsEnd()
    {
        final String input = "data: {\"a\":1}\r\n\r\nevent: x\nlong line of text\n";
        final List<String> whole = gather(input, input.length(), 1 << 20);
        assertEquals(List.of("data: {\"a\":1}\r", "\r", "event: x", "long line of text"), whole);
        for (int readBytes = 1; readBytes < input.length(); readBytes++)
        {
            assertEquals(whole, gather(input, readBytes, 1 << 20), "reads of " + readBytes + " bytes");
        }
    }

    @Test
    void shouldRefuseALineOverTheLimitWhetherWholeOrSplit()
    {
        final String input = "12345678\nabc\n";
        assertEquals(List.of("12345678", "abc"), gather(input, input.length(), 8));
        for (int readBytes = 1; readBytes <= input.length(); readBytes++)
        {
            assertEquals(List.of("too long"), gather(input, readBytes, 7), "reads of " + readBytes + " bytes");
        }
        // the ninth byte of a line is refused before its newline comes
        assertEquals(List.of("too long"), gather("123456789", 9, 8));
    }

    @Test
    void shouldKeepAnUnfinishedLineUntilItsEndIsAsked()
    {
        final LineGatherer lines = new LineGatherer(UnpooledByteBufAllocator.DEFAULT, 4);
        final List<String> seen = new ArrayList<>();
        final LineGatherer.Sink sink = collectInto(seen);
        final ByteBuf read = Unpooled.copiedBuffer("first\nsecond, no newline", StandardCharsets.UTF_8);
        int index = 0;
        while (index < read.writerIndex())
        {
            index = lines.next(read, index, read.writerIndex(), 100, sink);
        }
        assertEquals(List.of("first"), seen);
        assertTrue(lines.holdsPart());
        lines.endPart(sink);
        assertEquals(List.of("first", "second, no newline"), seen);
        assertFalse(lines.holdsPart());
        lines.endPart(sink);
        assertEquals(2, seen.size(), "nothing kept, nothing handed over");
        lines.release();
    }

    @Test
    void shouldForgetAKeptPartWhenCleared()
    {
        final LineGatherer lines = new LineGatherer(UnpooledByteBufAllocator.DEFAULT, 4);
        final List<String> seen = new ArrayList<>();
        final LineGatherer.Sink sink = collectInto(seen);
        final ByteBuf first = Unpooled.copiedBuffer("stale", StandardCharsets.UTF_8);
        assertEquals(5, lines.next(first, 0, 5, 100, sink));
        lines.clear();
        final ByteBuf second = Unpooled.copiedBuffer("fresh\n", StandardCharsets.UTF_8);
        assertEquals(6, lines.next(second, 0, 6, 100, sink));
        assertEquals(List.of("fresh"), seen);
        lines.release();
    }

    /** A sink that adds each line, as text, to {@code seen}. */
    private static LineGatherer.Sink collectInto(final List<String> seen)
    {
        return (buf, from, to) -> seen.add(buf.toString(from, to - from, StandardCharsets.UTF_8));
    }

    /** The lines of {@code input} fed in reads of {@code readBytes}, then "too long" if one was refused. */
    private static List<String> gather(final String input, final int readBytes, final int limitBytes)
    {
        final LineGatherer lines = new LineGatherer(UnpooledByteBufAllocator.DEFAULT, 2);
        final List<String> seen = new ArrayList<>();
        final LineGatherer.Sink sink = collectInto(seen);
        final byte[] bytes = input.getBytes(StandardCharsets.UTF_8);
        try
        {
            for (int start = 0; start < bytes.length; start += readBytes)
            {
                final ByteBuf read = Unpooled.wrappedBuffer(bytes, start, Math.min(readBytes, bytes.length - start));
                int index = read.readerIndex();
                while (index < read.writerIndex())
                {
                    index = lines.next(read, index, read.writerIndex(), limitBytes, sink);
                    if (LineGatherer.TOO_LONG == index)
                    {
                        seen.clear();
                        seen.add("too long");
                        return seen;
                    }
                }
            }
            return seen;
        }
        finally
        {
            lines.release();
        }
    }
}
