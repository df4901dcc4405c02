package dev.tapedeck.load;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.netty.buffer.ByteBufAllocator;
import org.agrona.DeadlineTimerWheel;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import dev.tapedeck.time.DeadlineTimers;
import dev.tapedeck.load.client.Exchange;
import dev.tapedeck.load.client.ExchangeListener;
import dev.tapedeck.load.client.LoadClient;

/**
 * One measured run: sends a {@link LoadPlan} through a {@link LoadClient} and records what comes back.
 * <p>
 * The dispatcher (an Agrona agent, run by an {@code AgentInvoker} on the thread calling {@link #run}, its idle step a
 * park until the next send is due) schedules every send on an Agrona {@link DeadlineTimerWheel}
 * (65 us ticks, exact deadlines): open loop at the plan's offsets, never waiting for responses, except that the next
 * turn of a session waits for the previous turn's answer (plus its think time); closed loop keeps
 * {@code concurrency} requests in flight, sending the next as soon as one ends. Latencies are measured from the
 * intended send time, so a late send or a full server shows up in TTFT and end-to-end latency instead of being hidden
 * (coordinated omission); dispatch lateness (write time minus intended time) is reported on its own.
 * <p>
 * Sends are handed to the client 5 to 10 ms before their time and its event loops send them on time (the dispatcher
 * wakes once per few milliseconds, and a late wake-up does not make a send late). A closed loop keeps up to 256
 * pre-built spares in the client: an event loop starts one the moment an exchange ends (its intended time is that
 * end), without waiting for this thread; the dispatcher tops the spares up, and sends itself (intended time again the
 * end of the exchange it replaces) only when none was left.
 * <p>
 * Event loops record into one {@link RunRecorder} each (single writer) and report completions to the dispatcher
 * through a many-to-one queue. The run ends when the plan is sent and answered, or at its limits: then requests still
 * running get {@code drainTimeoutNs} to finish and are cut off as {@code incomplete}.
 */
public final class LoadRun implements ExchangeListener
{
    private static final long TICK_NS = 1L << 16;
    private static final long LOOKAHEAD_NS = TimeUnit.MILLISECONDS.toNanos(50);
    /** The dispatcher's longest sleep: it is woken for what needs it at once (stop, completions it acts on). */
    private static final long MAX_PARK_NS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long START_LEAD_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * Sends are handed to the client between {@code STAGE_MIN_NS} and {@code STAGE_MAX_NS} before their time (the
     * dispatcher wakes once per few milliseconds, not once per send); the client's event loop sends them on time.
     */
    private static final long STAGE_MAX_NS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long STAGE_MIN_NS = STAGE_MAX_NS / 2;
    private static final int MAX_SPARES = 1024;
    /**
     * Spares left in the client below which an event loop that took one wakes the dispatcher to stock more, so that a
     * fast closed loop does not run out between the dispatcher's passes (and hand every send to it).
     */
    private static final int SPARES_LOW = MAX_SPARES / 4;
    private static final long MAX_SPARE_BYTES = 32L << 20;
    private static final ByteBufAllocator ALLOCATOR = ByteBufAllocator.DEFAULT;

    /** Open loop (the plan's times) or closed loop (a fixed number in flight). */
    public enum Mode
    {
        /** Send at the plan's offsets. */
        OPEN,
        /** Keep {@code concurrency} requests in flight. */
        CLOSED
    }

    /**
     * What to run.
     *
     * @param plan the requests.
     * @param mode open or closed loop.
     * @param concurrency requests in flight in closed loop.
     * @param maxRequests most requests to send (0 for no limit).
     * @param maxSeconds stop sending after this many seconds (0 for no limit).
     * @param warmupSeconds requests meant to go in the first seconds are not measured.
     * @param drainTimeoutNs after the last send, how long running requests may take.
     * @param slo objectives for goodput.
     * @param label the run's name in reports ({@code run}, {@code concurrency=8}).
     * @param rampUpNs closed loop: the first {@code concurrency} sends are spread evenly over this time.
     */
    public record Settings(LoadPlan plan, Mode mode, int concurrency, int maxRequests, double maxSeconds,
        double warmupSeconds, long drainTimeoutNs, Slo slo, String label, long rampUpNs)
    {
        /**
         * Without ramp-up.
         *
         * @param plan the requests.
         * @param mode open or closed loop.
         * @param concurrency requests in flight in closed loop.
         * @param maxRequests most requests to send (0 for no limit).
         * @param maxSeconds stop sending after this many seconds (0 for no limit).
         * @param warmupSeconds requests meant to go in the first seconds are not measured.
         * @param drainTimeoutNs after the last send, how long running requests may take.
         * @param slo objectives for goodput.
         * @param label the run's name in reports.
         */
        public Settings(final LoadPlan plan, final Mode mode, final int concurrency, final int maxRequests,
            final double maxSeconds, final double warmupSeconds, final long drainTimeoutNs, final Slo slo,
            final String label)
        {
            this(plan, mode, concurrency, maxRequests, maxSeconds, warmupSeconds, drainTimeoutNs, slo, label, 0);
        }

        /**
         * @param value another name in reports.
         * @return these settings under that name.
         */
        public Settings withLabel(final String value)
        {
            return new Settings(plan, mode, concurrency, maxRequests, maxSeconds, warmupSeconds, drainTimeoutNs, slo,
                value, rampUpNs);
        }

        private static final int MIN_WARM_CONNECTIONS = 256;
        private static final int MAX_WARM_CONNECTIONS = 8192;

        /**
         * @return connections worth opening before the run: the closed-loop concurrency, or for an open loop the
         *     requests planned in its first second (at least 256, at most 8,192 and the plan's size; more are opened
         *     on demand). Opening thousands of connections while the first requests are due makes them late and
         *     can swamp the server.
         */
        public int warmConnections()
        {
            if (Mode.CLOSED == mode)
            {
                return Math.max(1, concurrency);
            }
            final int planned = 0 == maxRequests ? plan.requests().size() :
                Math.min(maxRequests, plan.requests().size());
            int firstSecond = 0;
            while (firstSecond < planned && firstSecond < MAX_WARM_CONNECTIONS &&
                plan.requests().get(firstSecond).offsetNs() < 1_000_000_000L)
            {
                firstSecond++;
            }
            return Math.max(1, Math.min(planned, Math.max(MIN_WARM_CONNECTIONS, firstSecond)));
        }
    }

    /** Told about progress about once a second, on the dispatcher thread. */
    public interface Progress
    {
        /**
         * @param elapsedNs since the run started.
         * @param sent requests sent.
         * @param completed requests completed.
         * @param failed requests failed.
         * @param inFlight requests running.
         * @param planned requests in the plan (0 when unbounded).
         */
        void onProgress(long elapsedNs, long sent, long completed, long failed, long inFlight, long planned);
    }

    private record Completion(Exchange exchange, long endNs)
    {
    }

    private final Settings settings;
    private final LoadClient client;
    /** An event loop asked the dispatcher to stock spares and it has not yet (at most one wake per pass). */
    private final AtomicBoolean restockWanted = new AtomicBoolean();
    private final RequestBodies bodies;
    private final ManyToOneConcurrentArrayQueue<Completion> completions =
        new ManyToOneConcurrentArrayQueue<>(1 << 16);
    private final ArrayDeque<Completion> overflow = new ArrayDeque<>();
    private final List<RunRecorder> recorders = new CopyOnWriteArrayList<>();
    private final ThreadLocal<RunRecorder> recorder = ThreadLocal.withInitial(() ->
    {
        final RunRecorder r = new RunRecorder();
        recorders.add(r);
        return r;
    });
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong inFlight = new AtomicLong();
    private volatile Thread dispatcher;
    private volatile boolean stopRequested;
    private volatile boolean draining;
    private long runStartNs;
    private long measuredFromNs;
    private long stopSendingNs;
    private long sent;
    private long spares;
    private long spareBytes;
    private long peakInFlight;

    /**
     * @param settings what to run.
     * @param client the client (shared across runs of a sweep).
     * @param bodies builds request bodies (used on the dispatcher thread only).
     */
    public LoadRun(final Settings settings, final LoadClient client, final RequestBodies bodies)
    {
        this.settings = settings;
        this.client = client;
        this.bodies = bodies;
    }

    /**
     * Ask the run to stop sending (any thread, e.g. on SIGINT); requests in flight get the drain timeout.
     */
    public void stop()
    {
        stopRequested = true;
        final Thread t = dispatcher;
        if (null != t)
        {
            LockSupport.unpark(t);
        }
    }

    /**
     * Run to the end on the calling thread: the {@link Dispatcher} agent, driven by an {@link AgentInvoker} whose
     * idle step parks until the next send is due (or a completion wakes it).
     *
     * @param progress told about progress once a second, or null.
     * @return what was measured.
     */
    public RunResult run(final Progress progress)
    {
        dispatcher = Thread.currentThread();
        final Dispatcher agent = new Dispatcher(progress);
        final Throwable[] failure = new Throwable[1];
        final AgentInvoker invoker = new AgentInvoker(ex ->
        {
            if (!(ex instanceof AgentTerminationException) && null == failure[0])
            {
                failure[0] = ex;
            }
        }, null, agent);
        try
        {
            invoker.start();
            while (!invoker.isClosed() && null == failure[0])
            {
                invoker.invoke();
                if (!invoker.isClosed())
                {
                    agent.idle();
                }
            }
        }
        finally
        {
            invoker.close();
            dispatcher = null;
        }
        if (null != failure[0])
        {
            throw failure[0] instanceof RuntimeException runtime ? runtime : new IllegalStateException(failure[0]);
        }
        return agent.result;
    }

    /**
     * The dispatcher's duty cycles: drain completions, stop sending when the run's end is reached, stage the sends due
     * soon, note progress once a second, end when nothing is in flight (or the drain timeout passed). Dispatcher
     * thread only.
     */
    private final class Dispatcher implements Agent
    {
        private final Progress progress;
        private Scheduler scheduler;
        private long nextProgressNs;
        private long[] inFlightSeries = new long[64];
        private long plannedLimit;
        private boolean sending = true;
        private long sendingEndedNs;
        private long wakeNs;
        private RunResult result;

        Dispatcher(final Progress progress)
        {
            this.progress = progress;
        }

        @Override
        public String roleName()
        {
            return "tapedeck-load-dispatcher";
        }

        @Override
        public void onStart()
        {
            final LoadPlan plan = settings.plan();
            runStartNs = System.nanoTime() + START_LEAD_NS;
            measuredFromNs = runStartNs + (long)(settings.warmupSeconds() * 1e9);
            stopSendingNs = settings.maxSeconds() > 0 ? runStartNs + (long)(settings.maxSeconds() * 1e9) :
                Long.MAX_VALUE;
            scheduler = new Scheduler(plan, runStartNs);
            nextProgressNs = runStartNs + TimeUnit.SECONDS.toNanos(1);
            if (Mode.CLOSED == settings.mode())
            {
                final int initial = Math.max(1, settings.concurrency());
                for (int i = 0; i < initial; i++)
                {
                    scheduler.at(runStartNs + settings.rampUpNs() / initial * i, scheduler.closedCounter++);
                }
            }
            plannedLimit = plannedWithinLimits(plan.requests().size());
        }

        /**
         * One pass; its idle step ({@link #idle()}) follows whatever it did.
         *
         * @return 1 (a pass always looks at everything; the idle step decides how long to wait).
         */
        @Override
        public int doWork()
        {
            final long nowNs = System.nanoTime();
            drainCompletions(scheduler, sending);
            if (sending)
            {
                if (stopRequested || nowNs - stopSendingNs >= 0 || sentAll() ||
                    (Mode.OPEN == settings.mode() && scheduler.exhausted()))
                {
                    sending = false;
                    draining = true;
                    sendingEndedNs = nowNs;
                    spares -= client.withdrawSpares(); // those taken meanwhile are counted as their exchanges end
                }
                else
                {
                    if (Mode.OPEN == settings.mode())
                    {
                        scheduler.feed(nowNs + LOOKAHEAD_NS);
                    }
                    scheduler.poll(nowNs + STAGE_MAX_NS);
                    if (Mode.CLOSED == settings.mode())
                    {
                        restockWanted.set(false);
                        scheduler.stockSpares();
                    }
                }
            }
            if (nowNs - nextProgressNs >= 0)
            {
                noteProgress(nowNs);
            }
            if (!sending)
            {
                if (0 == inFlight.get())
                {
                    throw new AgentTerminationException();
                }
                if (nowNs - sendingEndedNs > settings.drainTimeoutNs())
                {
                    client.abortAll();
                    awaitAborted();
                    throw new AgentTerminationException();
                }
            }
            wakeNs = Math.min(scheduler.nextWakeNs(), sending ? stopSendingNs : Long.MAX_VALUE);
            return 1;
        }

        /**
         * Park until the next send is due, at most {@code MAX_PARK_NS} (a completion or {@link #stop()} unparks).
         */
        void idle()
        {
            LockSupport.parkNanos(Math.max(0, Math.min(MAX_PARK_NS, wakeNs - System.nanoTime())));
        }

        private void noteProgress(final long nowNs)
        {
            final int second = (int)((nowNs - runStartNs) / 1_000_000_000L);
            if (second >= inFlightSeries.length)
            {
                inFlightSeries = java.util.Arrays.copyOf(inFlightSeries, second * 2 + 1);
            }
            if (second >= 0)
            {
                inFlightSeries[second] = inFlight.get();
            }
            if (null != progress)
            {
                progress.onProgress(nowNs - runStartNs, sent, completed.get(), failed.get(), inFlight.get(),
                    sending ? plannedLimit : sent);
            }
            nextProgressNs += TimeUnit.SECONDS.toNanos(1);
        }

        /**
         * Take the last completions and merge the event loops' recorders into the run's result.
         */
        @Override
        public void onClose()
        {
            if (null == scheduler)
            {
                return; // onStart failed
            }
            drainCompletions(scheduler, false);
            final long endNs = System.nanoTime();
            final RunRecorder total = new RunRecorder();
            recorders.forEach(r -> r.mergeInto(total));
            total.peakInFlight = peakInFlight;
            final int seconds = (int)Math.max(1, (endNs - runStartNs + 999_999_999L) / 1_000_000_000L);
            result = new RunResult(settings.label(), settings.plan().description(), total,
                java.util.Arrays.copyOf(inFlightSeries, Math.min(inFlightSeries.length, seconds)),
                Math.max(1, endNs - Math.max(measuredFromNs, runStartNs)) / 1e9, sent, settings.plan().notes());
        }
    }

    private long plannedWithinLimits(final int planned)
    {
        if (Mode.CLOSED == settings.mode())
        {
            return settings.maxRequests();
        }
        long count = planned;
        if (settings.maxSeconds() > 0)
        {
            final long limitNs = (long)(settings.maxSeconds() * 1e9);
            count = 0;
            for (final PlannedRequest r : settings.plan().requests())
            {
                count += r.offsetNs() < limitNs ? 1 : 0;
            }
        }
        return 0 == settings.maxRequests() ? count : Math.min(count, settings.maxRequests());
    }

    /**
     * @return true when the request limit is used up by requests sent and spares handed to the client.
     */
    private boolean limitReached()
    {
        return settings.maxRequests() > 0 && sent + spares >= settings.maxRequests();
    }

    private boolean sentAll()
    {
        return settings.maxRequests() > 0 && sent >= settings.maxRequests();
    }

    private void awaitAborted()
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (inFlight.get() > 0 && System.nanoTime() - deadlineNs < 0)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private void drainCompletions(final Scheduler scheduler, final boolean sending)
    {
        final boolean sendNext = sending && Mode.CLOSED == settings.mode();
        Completion c;
        while (null != (c = completions.poll()))
        {
            onCompleted(scheduler, c, sendNext);
        }
        synchronized (overflow)
        {
            while (null != (c = overflow.poll()))
            {
                onCompleted(scheduler, c, sendNext);
            }
        }
    }

    private void onCompleted(final Scheduler scheduler, final Completion c, final boolean sendNext)
    {
        final Exchange replacement = c.exchange().replacement();
        if (null != replacement)
        {
            // an event loop started a spare in its place: it is sent now, and in flight instead of the one that ended
            spares--;
            spareBytes -= replacement.bodyBytes();
            sent++;
            return;
        }
        scheduler.onCompleted(c.exchange().planIndex(), c.endNs(), sendNext);
    }

    private Exchange exchange(final PlannedRequest request, final long intendedNs)
    {
        return new Exchange(request.index(), intendedNs, bodies.path(), bodies.body(request, ALLOCATOR),
            bodies.prefillBody(request, ALLOCATOR), bodies.stream(), request.promptTokens(), this)
            .replaceWhenDone(Mode.CLOSED == settings.mode());
    }

    private void send(final Exchange exchange)
    {
        peakInFlight = Math.max(peakInFlight, inFlight.incrementAndGet());
        sent++;
        client.submit(exchange);
    }

    @Override
    public void onWritten(final Exchange exchange, final long writtenNs)
    {
        recorder.get().onStarted(second(writtenNs), writtenNs - exchange.intendedNs(), isMeasured(exchange));
    }

    @Override
    public void onTokenGap(final Exchange exchange, final long gapNs, final long tokens)
    {
        if (isMeasured(exchange))
        {
            recorder.get().onTokenGap(gapNs, tokens);
        }
    }

    @Override
    public void onFinished(final Exchange exchange, final long endNs, final String errorKind)
    {
        final RunRecorder r = recorder.get();
        final boolean measured = isMeasured(exchange);
        if (null == errorKind)
        {
            final long ttftNs = exchange.firstTokenNs() - exchange.intendedNs();
            final long e2eNs = endNs - exchange.intendedNs();
            r.onCompleted(second(endNs), ttftNs, e2eNs, exchange.promptTokens(), exchange.outputTokens(),
                exchange.meanGapNs(), settings.slo().isMet(ttftNs, exchange.meanGapNs(), e2eNs,
                exchange.outputTokens()), measured);
            if (exchange.isTwoHop() && measured)
            {
                r.onHops(exchange.prefillNs(), exchange.handoffNs(), exchange.decodeFirstTokenNs());
            }
            completed.incrementAndGet();
        }
        else
        {
            r.onFailed(second(endNs), errorKind, exchange.errorMessage(), measured);
            failed.incrementAndGet();
        }
        if (null == exchange.replacement())
        {
            inFlight.decrementAndGet();
        }
        final Completion completion = new Completion(exchange, endNs);
        if (!completions.offer(completion))
        {
            synchronized (overflow)
            {
                overflow.add(completion);
            }
        }
        // wake the dispatcher only when it acts on completions at once: a closed loop without a spare (or with few
        // left, to stock more), session turns, the drain
        final Thread t = dispatcher;
        final boolean closed = Mode.CLOSED == settings.mode();
        final boolean restock = closed && null != exchange.replacement() && client.spareCount() < SPARES_LOW &&
            !restockWanted.getAndSet(true);
        if (null != t && (restock || (closed && null == exchange.replacement()) || draining ||
            (!closed && settings.plan().requests().get(exchange.planIndex()).session() >= 0)))
        {
            LockSupport.unpark(t);
        }
    }

    private boolean isMeasured(final Exchange exchange)
    {
        return exchange.intendedNs() - measuredFromNs >= 0;
    }

    private int second(final long nanoTime)
    {
        return (int)Math.max(0, (nanoTime - runStartNs) / 1_000_000_000L);
    }

    /**
     * The dispatcher's schedule: plan entries and session turns on a timer wheel. Dispatcher thread only.
     */
    private final class Scheduler implements DeadlineTimerWheel.TimerHandler
    {
        private final LoadPlan plan;
        private final long startNs;
        private final DeadlineTimers clock;
        private final Long2LongHashMap planIndexByTimer = new Long2LongHashMap(-1);
        private final SessionTurns turns;
        private final SessionTurns.Schedule releaseTurn = (dueNs, turn) -> at(dueNs, turn.index());
        private int cursor;
        private int closedCounter;

        Scheduler(final LoadPlan plan, final long startNs)
        {
            this.plan = plan;
            this.startNs = startNs;
            this.clock = new DeadlineTimers(startNs, TICK_NS, 1024);
            this.turns = new SessionTurns(plan.sessions());
        }

        /**
         * Schedule plan entries whose time comes before {@code horizonNs}.
         */
        void feed(final long horizonNs)
        {
            final List<PlannedRequest> requests = plan.requests();
            while (cursor < requests.size() && startNs + requests.get(cursor).offsetNs() - horizonNs <= 0)
            {
                final PlannedRequest r = requests.get(cursor++);
                final long dueNs = turns.offer(r, startNs);
                if (SessionTurns.HELD != dueNs)
                {
                    at(dueNs, r.index());
                }
            }
        }

        void at(final long deadlineNs, final int planIndex)
        {
            final long timerId = clock.schedule(deadlineNs, System.nanoTime());
            planIndexByTimer.put(timerId, planIndex);
        }

        void poll(final long nowNs)
        {
            clock.poll(nowNs, this);
        }

        @Override
        public boolean onTimerExpiry(final TimeUnit timeUnit, final long now, final long timerId)
        {
            final int index = (int)planIndexByTimer.remove(timerId);
            final long deadlineNs = clock.deadlineNs(timerId);
            if (deadlineNs - stopSendingNs >= 0)
            {
                return true;
            }
            if (Mode.CLOSED == settings.mode())
            {
                // a spare the event loops did not get to goes first; else a new request if the limit allows
                final Exchange spare = client.takeSpare();
                if (null != spare)
                {
                    spares--;
                    spareBytes -= spare.bodyBytes();
                    spare.intendedNs(deadlineNs);
                    send(spare);
                }
                else if (!limitReached())
                {
                    send(exchange(closedRequest(index), deadlineNs));
                }
                return true;
            }
            if (!limitReached())
            {
                send(exchange(plan.requests().get(index), deadlineNs));
            }
            return true;
        }

        /**
         * Closed loop: hand pre-built requests to the client until it holds {@link #MAX_SPARES} (or 32 MiB of bodies,
         * or the request limit is covered).
         */
        void stockSpares()
        {
            while (spares < MAX_SPARES && spareBytes < MAX_SPARE_BYTES && !limitReached())
            {
                final Exchange spare = exchange(closedRequest(closedCounter), 0);
                if (!client.addSpare(spare))
                {
                    spare.release();
                    return;
                }
                closedCounter++;
                spares++;
                spareBytes += spare.bodyBytes();
            }
        }

        private PlannedRequest closedRequest(final int counter)
        {
            final PlannedRequest template = plan.requests().get(Math.floorMod(counter, plan.requests().size()));
            return new PlannedRequest(counter, 0, template.promptTokens(), template.outputTokens(),
                template.hashIds(), -1, 0, 0);
        }

        void onCompleted(final int planIndex, final long endNs, final boolean sendNextClosed)
        {
            if (Mode.CLOSED == settings.mode())
            {
                if (sendNextClosed)
                {
                    at(endNs, closedCounter++); // no spare was left: the next request is due when this one ended
                }
                return;
            }
            turns.ended(plan.requests().get(planIndex), endNs, startNs, releaseTurn);
        }

        boolean exhausted()
        {
            if (cursor < plan.requests().size() || clock.timerCount() > 0)
            {
                return false;
            }
            return !turns.anyHeld();
        }

        /**
         * @return when the dispatcher has work next: staging the earliest send, or feeding the wheel.
         */
        long nextWakeNs()
        {
            final List<PlannedRequest> requests = plan.requests();
            final long nextFeedNs = Mode.OPEN == settings.mode() && cursor < requests.size() ?
                startNs + requests.get(cursor).offsetNs() - LOOKAHEAD_NS / 2 : Long.MAX_VALUE;
            final long earliestNs = clock.earliestDeadlineNs();
            return Math.min(DeadlineTimers.NO_DEADLINE == earliestNs ? earliestNs : earliestNs - STAGE_MIN_NS,
                nextFeedNs);
        }
    }
}
