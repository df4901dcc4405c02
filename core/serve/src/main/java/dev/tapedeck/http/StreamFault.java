package dev.tapedeck.http;

import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelOption;

import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.fault.RequestFault;

/**
 * A stream fault on one response ({@code reset@N}, {@code stall:D@N}, {@code first-byte:D}, {@code abort@N}): holds
 * its output back, or resets its connection, or has the engine abort it, once its trigger is reached. A streamed
 * response counts the tokens written, one that is not streamed the tokens generated.
 * <p>
 * Event-loop confined, with its {@link HttpStream}.
 */
final class StreamFault
{
    private final RequestFault fault;
    private final FaultInjector injector;
    private final HttpStream stream;
    /** Output is held back until then, on the face's clock; {@link Long#MIN_VALUE} when not held. */
    private long holdUntilNs = Long.MIN_VALUE;
    private boolean struck;

    StreamFault(final RequestFault fault, final FaultInjector injector, final HttpStream stream)
    {
        this.fault = fault;
        this.injector = injector;
        this.stream = stream;
        if (RequestFault.Kind.FIRST_BYTE == fault.kind())
        {
            strike();
            hold(fault.durationNs());
        }
    }

    /**
     * @return true while the response's output is held back (its tokens are merged into the next write), and for
     *     good once a reset struck.
     */
    boolean holding()
    {
        return struck && RequestFault.Kind.RESET == fault.kind() ||
            Long.MIN_VALUE != holdUntilNs && faceNowNs() - holdUntilNs < 0;
    }

    /**
     * The response has this many tokens out (written when streamed, generated otherwise): strike if it is time.
     *
     * @param tokens tokens so far.
     */
    void onTokens(final int tokens)
    {
        if (struck || tokens < fault.afterTokens() || 0 == tokens)
        {
            return;
        }
        switch (fault.kind())
        {
            case STALL:
                strike();
                hold(fault.durationNs());
                break;
            case RESET:
                strike();
                // after this write: the close is queued behind it, off the engine's batch
                stream.ctx.executor().execute(() ->
                {
                    stream.ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
                    stream.ctx.close();
                });
                break;
            case ABORT:
                strike();
                stream.ctx.executor().execute(this::abort);
                break;
            default:
                break;
        }
    }

    private void abort()
    {
        for (final Choice choice : stream.choices)
        {
            if (null != choice && !choice.finished)
            {
                stream.front.engine().abort(choice.request, FinishReason.ABORT, stream.front.nowNs());
            }
        }
        stream.front.kick();
    }

    private void strike()
    {
        struck = true;
        injector.struck(fault.kind());
    }

    private void hold(final long durationNs)
    {
        holdUntilNs = faceNowNs() + durationNs;
        stream.ctx.executor().schedule(stream::resume, durationNs, TimeUnit.NANOSECONDS);
    }

    private long faceNowNs()
    {
        return stream.front.options().nanoClock().nanoTime();
    }
}
