package dev.tapedeck.http;

import java.util.Arrays;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.netty.channel.EventLoop;

import org.HdrHistogram.Histogram;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineTime;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.tokens.TokenVocabulary;

/**
 * Binds one engine to its event loop: drives the engine's clock with one scheduled task at the engine's next
 * deadline, and turns engine outputs into HTTP responses. Tokens are appended to their {@link Choice} as they come;
 * at the end of each batch every touched response is written and flushed once.
 * <p>
 * Event-loop confined: the engine, every channel of this instance and this object share one thread.
 */
final class HttpFront implements OutputSink
{
    private static final System.Logger LOG = System.getLogger(HttpFront.class.getName());
    private final EventLoop loop;
    private final ServeOptions options;
    private final TokenVocabulary vocabulary;
    private final Runnable timerTask = this::onTimer;
    private Engine engine;
    private HttpStream[] dirty = new HttpStream[64];
    private int dirtyCount;
    private ScheduledFuture<?> armed;
    private long armedDeadlineNs = Long.MAX_VALUE;
    /**
     * Write time minus the model's due time of every token, in nanoseconds: up to 60 s, within 1% or 1 us (20 KB of
     * counts; three digits from 1 ns took 216 KB per instance).
     */
    private final Histogram emissionLatenessNs = newLatenessHistogram();
    private long tokensEmitted;
    private long batches;
    /** The engine's time: the face's clock less the stalls. */
    private final EngineTime time = new EngineTime();

    /**
     * @param loop the event loop the engine and its connections live on.
     * @param options face settings.
     * @param vocabulary token bytes, to turn generated ids into text.
     */
    HttpFront(final EventLoop loop, final ServeOptions options, final TokenVocabulary vocabulary)
    {
        this.loop = loop;
        this.options = options;
        this.vocabulary = vocabulary;
    }

    void engine(final Engine value)
    {
        engine = value;
    }

    Engine engine()
    {
        return engine;
    }

    ServeOptions options()
    {
        return options;
    }

    /**
     * @return token bytes of the served tokenizer.
     */
    TokenVocabulary vocabulary()
    {
        return vocabulary;
    }

    EventLoop loop()
    {
        return loop;
    }

    /**
     * @return the current time on the engine's clock, in nanoseconds: the face's clock
     *     ({@link ServeOptions#nanoClock()}) less the time the engine was stalled, frozen during a stall.
     */
    long nowNs()
    {
        return engineTimeNs(options.nanoClock().nanoTime());
    }

    /**
     * @param faceNs a time on the face's clock.
     * @return the same moment on the engine's clock (a moment inside a stall maps to the stall's start).
     */
    long engineTimeNs(final long faceNs)
    {
        return time.engineNs(faceNs);
    }

    /**
     * Stop or restart the engine's clock (a {@code stall} fault, a sleep with {@code mode=keep}): while stalled the
     * engine takes no steps and every stream of this rank pauses; afterwards it goes on where it stopped, its clock
     * behind the face's by the stall. Stalls nest: the clock restarts when every stall has ended.
     *
     * @param stalled true to stall, false to end one stall.
     */
    void stall(final boolean stalled)
    {
        if (!time.freeze(stalled, options.nanoClock().nanoTime()))
        {
            return;
        }
        if (!stalled)
        {
            kick();
        }
        else if (null != armed)
        {
            armed.cancel(false);
            armed = null;
            armedDeadlineNs = Long.MAX_VALUE;
        }
    }

    /**
     * Let the engine catch up with the clock and arm the timer for its next deadline (not while stalled).
     */
    void kick()
    {
        if (time.frozen())
        {
            return;
        }
        engine.doWork(nowNs());
        // the delay is measured from now, after the batch was written, or every step would be late by that much
        rearm(nowNs());
    }

    private void onTimer()
    {
        armed = null;
        armedDeadlineNs = Long.MAX_VALUE;
        kick();
    }

    private void rearm(final long nowNs)
    {
        final long next = engine.nextDeadlineNs();
        if (Long.MAX_VALUE == next || next >= armedDeadlineNs)
        {
            return;
        }
        if (null != armed)
        {
            armed.cancel(false);
        }
        armedDeadlineNs = next;
        armed = loop.schedule(timerTask, Math.max(0, next - nowNs), TimeUnit.NANOSECONDS);
    }

    void addDirty(final HttpStream stream)
    {
        if (dirtyCount == dirty.length)
        {
            dirty = Arrays.copyOf(dirty, dirtyCount * 2);
        }
        dirty[dirtyCount++] = stream;
    }

    @Override
    public boolean onToken(final Request request, final int tokenId)
    {
        final Choice choice = (Choice)request.attachment();
        if (null == choice || choice.stream.closed)
        {
            return false;
        }
        final boolean stop = choice.appendToken(vocabulary.bytes(tokenId));
        if (choice.stream.keepsTokenIds)
        {
            choice.recordTokenId(tokenId);
        }
        choice.stream.addToken(request.lastTokenNs());
        return stop;
    }

    @Override
    public void onFinished(final Request request)
    {
        final Choice choice = (Choice)request.attachment();
        if (null == choice || choice.finished)
        {
            return;
        }
        choice.finish(request.finishReason());
        choice.stream.onChoiceFinished();
    }

    @Override
    public void onBatchEnd(final long nowNs)
    {
        for (int i = 0; i < dirtyCount; i++)
        {
            final HttpStream stream = dirty[i];
            dirty[i] = null;
            try
            {
                stream.flush();
            }
            catch (final RuntimeException ex)
            {
                // a defect in one response (or in the pipelined request it starts) must not stop every other stream
                LOG.log(System.Logger.Level.WARNING, "writing a response failed; closing its connection", ex);
                stream.ctx.close();
            }
        }
        dirtyCount = 0;
        batches++;
    }

    /**
     * @return an empty lateness histogram, as every face keeps (sums of them must have the same layout).
     */
    static Histogram newLatenessHistogram()
    {
        return new Histogram(1_000L, 60_000_000_000L, 2);
    }

    /**
     * A token was written to its client.
     *
     * @param latenessNs write time minus the model's due time.
     */
    void onTokenWritten(final long latenessNs)
    {
        emissionLatenessNs.recordValue(Math.min(Math.max(latenessNs, 0), 60_000_000_000L));
        tokensEmitted++;
    }

    /**
     * @return lateness of every token written (write time minus the model's due time), in nanoseconds.
     */
    Histogram emissionLatenessNs()
    {
        return emissionLatenessNs;
    }

    long tokensEmitted()
    {
        return tokensEmitted;
    }

    long batches()
    {
        return batches;
    }
}
