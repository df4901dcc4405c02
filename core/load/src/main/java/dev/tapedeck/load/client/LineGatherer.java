package dev.tapedeck.load.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Lines that may arrive split over reads: a line that ends in the read it began in is handed over where it lies in
 * that read; the start of one that does not is kept until its newline comes. One limit rule for every caller: a line
 * longer than the limit (its newline not counted) is refused, whether it is still coming or already whole.
 * <p>
 * Used for a response's head and chunk lines ({@link ResponseParser}) and for a stream's SSE lines
 * ({@link ExchangeHandler}). Confined to its connection's event loop.
 */
final class LineGatherer
{
    /** What {@link #next} returns for a line over its limit. */
    static final int TOO_LONG = -1;

    /** Takes one line. */
    interface Sink
    {
        /**
         * @param buf where the line lies (the read, or the gatherer's kept bytes): valid during the call only.
         * @param from its first byte.
         * @param to the index of its newline (exclusive end; a {@code \r} before it is the sink's to drop).
         */
        void line(ByteBuf buf, int from, int to);
    }

    private final ByteBuf kept;

    /**
     * @param allocator where the buffer for a split line comes from (released by {@link #release()}).
     * @param initialBytes its first capacity.
     */
    LineGatherer(final ByteBufAllocator allocator, final int initialBytes)
    {
        this.kept = allocator.heapBuffer(initialBytes);
    }

    /**
     * Gather the line that starts at {@code from} (after any part of it kept from earlier reads), handing it to
     * {@code sink} when its newline lies before {@code end}.
     *
     * @param limitBytes the longest line allowed, kept part included.
     * @return the index past the line's newline; {@code end} when the line goes on in a later read (its bytes kept);
     *     {@link #TOO_LONG} when it is over the limit (nothing is kept or handed over).
     */
    int next(final ByteBuf in, final int from, final int end, final int limitBytes, final Sink sink)
    {
        final int newline = in.indexOf(from, end, (byte)'\n');
        final int lineEnd = newline < 0 ? end : newline;
        if ((long)kept.readableBytes() + lineEnd - from > limitBytes)
        {
            kept.clear();
            return TOO_LONG;
        }
        if (newline < 0)
        {
            kept.writeBytes(in, from, end - from);
            return end;
        }
        if (kept.isReadable())
        {
            kept.writeBytes(in, from, newline - from);
            endPart(sink); // the kept start and this read's rest are the whole line
        }
        else
        {
            sink.line(in, from, newline);
        }
        return newline + 1;
    }

    /**
     * @return true while part of a line is kept (its newline has not come).
     */
    boolean holdsPart()
    {
        return kept.isReadable();
    }

    /**
     * The input ended inside a line: hand what was kept to {@code sink} as a whole line.
     */
    void endPart(final Sink sink)
    {
        if (kept.isReadable())
        {
            try
            {
                sink.line(kept, kept.readerIndex(), kept.writerIndex());
            }
            finally
            {
                kept.clear();
            }
        }
    }

    /**
     * Forget any kept part (its exchange ended).
     */
    void clear()
    {
        kept.clear();
    }

    /**
     * Free the buffer (the connection is gone).
     */
    void release()
    {
        kept.release();
    }
}
