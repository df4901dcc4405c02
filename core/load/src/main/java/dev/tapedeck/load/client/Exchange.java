package dev.tapedeck.load.client;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * One request on its way through a connection: what to send, when it was meant to go, and what came back so far.
 * Created by the dispatcher, then owned by one event loop until {@link ExchangeListener#onFinished}.
 * <p>
 * A closed loop marks its exchanges {@link #replaceWhenDone}: when one ends, its event loop starts a spare (handed over
 * ahead with {@link LoadClient#addSpare}) in its place at once, with the end as the spare's intended send time.
 * <p>
 * A two-hop exchange (prefill/decode disaggregation, {@link LoadClient#prefillDecode}) carries a second body: it is
 * first sent, not streamed, to the prefill server; its JSON answer's {@code kv_transfer_params} are spliced into the
 * request's own body, which then goes to the decode server on the same event loop. Both hops are one exchange: the
 * listener hears of the first write and of the end, and the timings of each hop are kept ({@link #prefillNs},
 * {@link #handoffNs}, {@link #decodeFirstTokenNs}).
 * <p>
 * Not thread safe: handing it to the client publishes it to an event loop.
 */
public final class Exchange
{
    private static final byte[] KV_TRANSFER_PARAMS = ",\"kv_transfer_params\":".getBytes(StandardCharsets.US_ASCII);

    final int planIndex;
    long intendedNs;
    final boolean stream;
    final int bodyBytes;
    final boolean twoHop;
    /** What the next hop writes (the client owns it until written, then Netty); null once written or released. */
    ByteBuf toSend;
    /** Two-hop: the request's own body, kept for the decode hop until the prefill answered; then null. */
    ByteBuf decodeTemplate;
    /** Two-hop: true until the prefill hop ended. */
    boolean prefilling;
    long prefillWrittenNs;
    long prefillEndNs;
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
    /** What the server said of a failure (an error body's message), or null. */
    String errorMessage;
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
        this(planIndex, intendedNs, path, body, null, stream, plannedPromptTokens, listener);
    }

    /**
     * @param planIndex the request's index in the plan.
     * @param intendedNs when it is meant to be sent ({@link System#nanoTime()}; a spare's is set when it starts).
     * @param path request path ({@code /v1/completions}), the same on both hops.
     * @param body the JSON body (released by the client); of a two-hop exchange, the decode hop's without its
     *     {@code kv_transfer_params}, which the prefill's answer supplies.
     * @param prefillBody the prefill hop's JSON body (released by the client), or null for one hop.
     * @param stream true for a streaming request (the prefill hop never streams).
     * @param plannedPromptTokens prompt tokens as planned (used when the server reports no usage).
     * @param listener told the outcome.
     */
    public Exchange(final int planIndex, final long intendedNs, final String path, final ByteBuf body,
        final ByteBuf prefillBody, final boolean stream, final long plannedPromptTokens,
        final ExchangeListener listener)
    {
        this.planIndex = planIndex;
        this.intendedNs = intendedNs;
        this.path = path;
        this.twoHop = null != prefillBody;
        this.bodyBytes = body.readableBytes() + (twoHop ? prefillBody.readableBytes() : 0);
        this.toSend = twoHop ? prefillBody : body;
        this.decodeTemplate = twoHop ? body : null;
        this.prefilling = twoHop;
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
     * @return the size of the bodies built ahead, in bytes (both of a two-hop exchange).
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
     * Release the bodies of an exchange that will not be handed over (or whatever of them was not written yet, when
     * the client gives up on it). Later calls do nothing.
     */
    public void release()
    {
        if (null != toSend)
        {
            toSend.release();
            toSend = null;
        }
        if (null != decodeTemplate)
        {
            decodeTemplate.release();
            decodeTemplate = null;
        }
    }

    /**
     * @return true for a prefill/decode exchange.
     */
    public boolean isTwoHop()
    {
        return twoHop;
    }

    /**
     * @return two-hop, once both hops ran: the prefill hop's latency, from its write to the end of its JSON answer.
     */
    public long prefillNs()
    {
        return prefillEndNs - prefillWrittenNs;
    }

    /**
     * @return two-hop, once both hops ran: the client's own time between the prefill's answer and the decode hop's
     *     write (splicing the parameters in, waiting for the event loop, a connection).
     */
    public long handoffNs()
    {
        return writtenNs - prefillEndNs;
    }

    /**
     * @return two-hop, once the first token came: from the decode hop's write to its first token.
     */
    public long decodeFirstTokenNs()
    {
        return firstTokenNs - writtenNs;
    }

    /**
     * @param kind an error kind.
     * @return the kind as this exchange reports it: prefixed {@code prefill_} while on the prefill hop.
     */
    String hopKind(final String kind)
    {
        return prefilling ? "prefill_" + kind : kind;
    }

    /**
     * Two-hop: the prefill answered with {@code kv_transfer_params}; build the decode hop's body, the request's own
     * with those parameters added verbatim as its last field, in a buffer of {@code allocator}.
     *
     * @param response the prefill's answer.
     * @param paramsFrom first byte of the parameters' JSON object.
     * @param paramsTo one past its last byte.
     * @param nowNs when the answer ended.
     * @param allocator where the decode body comes from.
     */
    void onPrefilled(final byte[] response, final int paramsFrom, final int paramsTo, final long nowNs,
        final ByteBufAllocator allocator)
    {
        prefillWrittenNs = writtenNs;
        prefillEndNs = nowNs;
        prefilling = false;
        final ByteBuf template = decodeTemplate;
        decodeTemplate = null;
        int end = template.writerIndex();
        while (end > template.readerIndex() && '}' != template.getByte(end - 1))
        {
            end--;
        }
        final int head = end - 1 - template.readerIndex();
        final ByteBuf decode = allocator.buffer(head + KV_TRANSFER_PARAMS.length + paramsTo - paramsFrom + 2);
        decode.writeBytes(template, template.readerIndex(), head);
        decode.writeBytes(KV_TRANSFER_PARAMS);
        decode.writeBytes(response, paramsFrom, paramsTo - paramsFrom);
        decode.writeByte('}');
        template.release();
        toSend = decode;
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
     * @return what the server said when the exchange failed with an error status (its error body's message, at most
     *     300 printable characters), or null.
     */
    public String errorMessage()
    {
        return errorMessage;
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
