package dev.tapedeck.load.client;

import io.netty.buffer.ByteBuf;

/**
 * One request on its way through a connection: what to send, when it was meant to go, and what came back so far.
 * Created by the dispatcher, then owned by one event loop until {@link ExchangeListener#onFinished}.
 * <p>
 * A closed loop marks its exchanges {@link #replaceWhenDone}: when one ends, its event loop starts a spare (handed over
 * ahead with {@link LoadClient#addSpare}) in its place at once, with the end as the spare's intended send time.
 * <p>
 * Not thread safe: handing it to the client publishes it to an event loop.
 */
public final class Exchange
{
    final int planIndex;
    long intendedNs;
    final boolean stream;
    final ByteBuf body;
    final int bodyBytes;
    final String path;
    final long plannedPromptTokens;
    final ExchangeListener listener;
    boolean replaceWhenDone;
    Exchange replacement;
    ExchangeHandler handler;
    Exchange olderRunning;
    Exchange newerRunning;
    long writtenNs;
    long firstTokenNs;
    long lastChunkNs;
    long tokenChunks;
    long gapSumNs;
    long usagePromptTokens = -1;
    long usageCompletionTokens = -1;
    long tokensSeen;
    long firstChunkTokens;
    boolean done;
    boolean aborted;
    boolean finished;

    /**
     * @param planIndex the request's index in the plan.
     * @param intendedNs when it is meant to be sent ({@link System#nanoTime()}; a spare's is set when it starts).
     * @param path request path ({@code /v1/completions}).
     * @param body the JSON body (released by the client).
     * @param stream true for a streaming request.
     * @param plannedPromptTokens prompt tokens as planned (used when the server reports no usage).
     * @param listener told the outcome.
     */
    public Exchange(final int planIndex, final long intendedNs, final String path, final ByteBuf body,
        final boolean stream, final long plannedPromptTokens, final ExchangeListener listener)
    {
        this.planIndex = planIndex;
        this.intendedNs = intendedNs;
        this.path = path;
        this.body = body;
        this.bodyBytes = body.readableBytes();
        this.stream = stream;
        this.plannedPromptTokens = plannedPromptTokens;
        this.listener = listener;
    }

    /**
     * Closed loop: when this exchange ends, its event loop starts one of the client's spares in its place.
     *
     * @param replace true to replace it when done.
     * @return this.
     */
    public Exchange replaceWhenDone(final boolean replace)
    {
        replaceWhenDone = replace;
        return this;
    }

    /**
     * @return the spare started in this exchange's place when it ended (set before
     *     {@link ExchangeListener#onFinished}), or null.
     */
    public Exchange replacement()
    {
        return replacement;
    }

    /**
     * @return the body's size in bytes.
     */
    public int bodyBytes()
    {
        return bodyBytes;
    }

    /**
     * Set the intended send time of an exchange not handed over yet (a spare taken back).
     *
     * @param sendNs when it is meant to be sent.
     * @return this.
     */
    public Exchange intendedNs(final long sendNs)
    {
        intendedNs = sendNs;
        return this;
    }

    /**
     * Release the body of an exchange that will not be handed over.
     */
    public void release()
    {
        body.release();
    }

    /**
     * @return the request's index in the plan.
     */
    public int planIndex()
    {
        return planIndex;
    }

    /**
     * @return when it was meant to be sent.
     */
    public long intendedNs()
    {
        return intendedNs;
    }

    /**
     * @return when its first token-bearing chunk arrived (the whole response for non-streaming), or 0.
     */
    public long firstTokenNs()
    {
        return firstTokenNs;
    }

    /**
     * @return output tokens: the server's usage when reported, else the tokens counted in chunks.
     */
    public long outputTokens()
    {
        return usageCompletionTokens >= 0 ? usageCompletionTokens : tokensSeen;
    }

    /**
     * @return prompt tokens: the server's usage when reported, else the plan's.
     */
    public long promptTokens()
    {
        return usagePromptTokens >= 0 ? usagePromptTokens : plannedPromptTokens;
    }

    /**
     * @return mean gap per token after the first chunk (the request's own ITL), or -1 with fewer than two chunks.
     */
    public long meanGapNs()
    {
        final long tokensAfterFirst = tokensSeen - firstChunkTokens;
        return tokenChunks > 1 && tokensAfterFirst > 0 ? gapSumNs / tokensAfterFirst : -1;
    }

    /**
     * A chunk with generated text arrived.
     *
     * @param nowNs when.
     * @param tokens tokens it carries (from continuous usage stats, else 1).
     */
    void onTokenChunk(final long nowNs, final long tokens)
    {
        if (0 == tokenChunks)
        {
            firstTokenNs = nowNs;
            firstChunkTokens = tokens;
        }
        else
        {
            final long gapNs = nowNs - lastChunkNs;
            gapSumNs += gapNs;
            listener.onTokenGap(this, gapNs, tokens);
        }
        lastChunkNs = nowNs;
        tokenChunks++;
        tokensSeen += tokens;
    }
}
