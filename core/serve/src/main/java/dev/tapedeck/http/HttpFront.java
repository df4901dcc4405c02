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
import dev.tapedeck.engine.Step;
import dev.tapedeck.tokens.TokenVocabulary;

/**
 * Binds one engine to its event loop: drives the engine's clock with one scheduled task at the engine's next
 * deadline, and turns engine outputs into HTTP responses. Tokens are appended to their {@link Choice} as they come;
 * a stream is written and flushed when the step moves on to another stream's tokens (an engine that keeps its
 * clock) or at the end of the batch (one behind it), and at the end of each batch every response still touched is.
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
    /** The stream the last token went to, or null: it is written when a token for another stream comes. */
    private HttpStream tokenStream;
    /** The due time the write-as-generated decision was taken for (a step's end, a held first token's time). */
    private long decidedForDueNs = Long.MIN_VALUE;
    /** Whether the tokens due at {@link #decidedForDueNs} are written stream by stream as the step produces them. */
    private boolean writeAsGenerated;
    /** True while the engine works, inside {@link #kick()}: what completes then must not re-enter the engine. */
    private boolean inEngineWork;
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

    /**
     * @return true while the engine works (its outputs are being written): a response that completes then serves
     *     what was pipelined behind it in a later task, not inside the engine's step.
     */
    boolean inEngineWork()
    {
        return inEngineWork;
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
        inEngineWork = true;
        try
        {
            engine.doWork(nowNs());
        }
        finally
        {
            inEngineWork = false;
        }
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
        final long dueNs = request.lastTokenNs();
        if (dueNs != decidedForDueNs)
        {
            decideWriting(dueNs);
        }
        final HttpStream stream = choice.stream;
        if (stream != tokenStream)
        {
            if (null != tokenStream && writeAsGenerated)
            {
                flushSafely(tokenStream); // the step moved past it: written while its objects are still in cache
            }
            tokenStream = stream;
        }
        final boolean stop = choice.appendToken(vocabulary.bytes(tokenId));
        if (choice.stream.keepsTokenIds)
        {
            choice.recordTokenId(tokenId);
        }
        choice.stream.addToken(request.lastTokenNs());
        return stop;
    }

    /**
     * Decide, at the first token due at {@code dueNs} (a step's end), how its tokens are written. A step that
     * completes on time has its streams written one by one as it produces their tokens, in the one pass over them
     * (the bare server's single pass; two passes touched each stream's objects twice, the second time from cold
     * memory). An engine a step or more behind its clock (overloaded: the next step is due already, and the engine
     * takes it in the same call) keeps the tokens until it has caught up, so that a stream gets one write for the
     * steps it caught up on, not one per step.
     */
    private void decideWriting(final long dueNs)
    {
        decidedForDueNs = dueNs;
        final Step step = engine.currentStep();
        writeAsGenerated = nowNs() - dueNs < step.endNs() - step.startNs();
        tokenStream = null; // a stream of the step before is written when this one moves past it, or at the end
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
        tokenStream = null;
        for (int i = 0; i < dirtyCount; i++)
        {
            final HttpStream stream = dirty[i];
            dirty[i] = null;
            if (stream.dirty)
            {
                flushSafely(stream);
            }
        }
        dirtyCount = 0;
        batches++;
    }

    private static void flushSafely(final HttpStream stream)
    {
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
