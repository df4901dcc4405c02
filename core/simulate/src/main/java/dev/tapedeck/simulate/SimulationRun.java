package dev.tapedeck.simulate;

import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;

import dev.tapedeck.engine.Engine;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.engine.FinishReason;
import dev.tapedeck.engine.OutputSink;
import dev.tapedeck.engine.Request;
import dev.tapedeck.engine.SubmitResult;
import dev.tapedeck.load.LoadPlan;
import dev.tapedeck.load.PlannedRequest;
import dev.tapedeck.load.PromptFactory;
import dev.tapedeck.load.RunRecorder;
import dev.tapedeck.load.RunResult;
import dev.tapedeck.load.SessionTurns;
import dev.tapedeck.load.Slo;
import dev.tapedeck.workload.WorkloadRequest;

/**
 * One engine run through a plan in virtual time: the clock jumps to the next arrival or the engine's next deadline.
 * Arrivals follow the plan as {@code load} sends it: each entry at its offset; a session's turns one at a time, each
 * no earlier than the previous turn's end plus its think time. What a client would measure is recorded in a
 * {@link RunRecorder} (latencies from the arrival, there being no network), so the result is reported as {@code load}
 * reports a run.
 * <p>
 * Single-threaded: runs on the caller's thread.
 */
final class SimulationRun implements OutputSink
{
    private final LoadPlan plan;
    private final PromptFactory prompts;
    private final Slo slo;
    private final boolean ignoreEos;
    private final RunRecorder recorder = new RunRecorder();
    private final PriorityQueue<Arrival> arrivals = new PriorityQueue<>();
    private final SessionTurns turns;
    private final SessionTurns.Schedule releaseTurn = (dueNs, turn) -> arrivals.add(new Arrival(dueNs, turn));
    private final long[] inFlightPerSecond;
    private Engine engine;
    /** Hashes the prompts' blocks for the engine, each shared prefix once; null when it cannot (the engine hashes). */
    private PromptBlockHashMemo blockHashes;
    private int cursor;
    private long sent;
    private long answered;
    private int sampledSeconds;
    private long lastEventNs;

    /** A request's time in the run. */
    private static final class Timing
    {
        final PlannedRequest planned;
        final long arrivalNs;
        long firstTokenNs = -1;
        long lastTokenNs;
        long gapSumNs;
        long gaps;
        /** The output being collected: its gap and its tokens so far (0 before the second output). */
        long chunkGapNs;
        long chunkTokens;

        /** Tokens emitted at the same time as the previous one belong to its output (a speculative burst). */
        void onToken(final long nowNs, final RunRecorder recorder)
        {
            if (firstTokenNs < 0)
            {
                firstTokenNs = nowNs;
            }
            else if (nowNs == lastTokenNs && (chunkTokens > 0 || lastTokenNs == firstTokenNs))
            {
                if (chunkTokens > 0)
                {
                    chunkTokens++;
                }
            }
            else
            {
                flush(recorder);
                chunkGapNs = nowNs - lastTokenNs;
                chunkTokens = 1;
            }
            lastTokenNs = nowNs;
        }

        /** A chunk of n tokens after a gap counts as n gaps of gap / n, as {@code load} counts a streamed chunk. */
        void flush(final RunRecorder recorder)
        {
            if (chunkTokens > 0)
            {
                recorder.onTokenGap(chunkGapNs, chunkTokens);
                gapSumNs += chunkGapNs;
                gaps += chunkTokens;
                chunkTokens = 0;
            }
        }

        Timing(final PlannedRequest planned, final long arrivalNs)
        {
            this.planned = planned;
            this.arrivalNs = arrivalNs;
        }
    }

    /** A plan entry due at a time; ties go in plan order. */
    private record Arrival(long atNs, PlannedRequest request) implements Comparable<Arrival>
    {
        @Override
        public int compareTo(final Arrival other)
        {
            final int byTime = Long.compare(atNs, other.atNs);
            return 0 != byTime ? byTime : Integer.compare(request.index(), other.request.index());
        }
    }

    SimulationRun(final LoadPlan plan, final PromptFactory prompts, final Slo slo, final boolean ignoreEos)
    {
        this.plan = plan;
        this.prompts = prompts;
        this.slo = slo;
        this.ignoreEos = ignoreEos;
        this.turns = new SessionTurns(plan.sessions());
        final List<PlannedRequest> requests = plan.requests();
        final long lastOffsetNs = requests.isEmpty() ? 0 : requests.get(requests.size() - 1).offsetNs();
        this.inFlightPerSecond = new long[(int)Math.min(Integer.MAX_VALUE - 8, lastOffsetNs / 1_000_000_000L + 2)];
    }

    /**
     * Run the plan to its end: every request submitted and finished.
     *
     * @param config the engine's configuration, concluded (its start time is the run's start, 0).
     * @param label the run's name in the report.
     * @return what a client would have measured.
     */
    RunResult run(final EngineConfig config, final String label)
    {
        engine = new Engine(config, this, 0);
        blockHashes = config.enablePrefixCaching() && !prompts.cacheResistant() &&
            PromptBlockHashMemo.applies(config.blockSize(), prompts.blockSize()) ?
            new PromptBlockHashMemo(config.prefixCachingHashSeed(), config.prefixCachingHashAlgo(), config.blockSize(),
                prompts.blockSize()) : null;
        final List<PlannedRequest> requests = plan.requests();
        while (true)
        {
            final long planNs = cursor < requests.size() ? requests.get(cursor).offsetNs() : Long.MAX_VALUE;
            final long arrivalNs = arrivals.isEmpty() ? Long.MAX_VALUE : arrivals.peek().atNs();
            final long nowNs = Math.min(Math.min(planNs, arrivalNs), engine.nextDeadlineNs());
            if (Long.MAX_VALUE == nowNs)
            {
                break;
            }
            feed(nowNs);
            sampleInFlight(nowNs);
            while (!arrivals.isEmpty() && arrivals.peek().atNs() <= nowNs)
            {
                submit(arrivals.poll().request(), nowNs);
            }
            engine.doWork(nowNs);
        }
        final long[] perSecond = Arrays.copyOf(inFlightPerSecond, Math.min(inFlightPerSecond.length,
            (int)(lastEventNs / 1_000_000_000L) + 1));
        return new RunResult(label, plan.description(), recorder, perSecond, Math.max(lastEventNs, 1) / 1e9, sent,
            plan.notes());
    }

    /**
     * @return the engine's metrics after {@link #run}.
     */
    dev.tapedeck.metrics.EngineMetrics metrics()
    {
        return engine.metrics();
    }

    /** Move the plan entries due by {@code nowNs} into the arrival queue; a busy session's turns are held. */
    private void feed(final long nowNs)
    {
        final List<PlannedRequest> requests = plan.requests();
        while (cursor < requests.size() && requests.get(cursor).offsetNs() <= nowNs)
        {
            final PlannedRequest r = requests.get(cursor++);
            final long dueNs = turns.offer(r, 0);
            if (SessionTurns.HELD != dueNs)
            {
                arrivals.add(new Arrival(dueNs, r));
            }
        }
    }

    private void submit(final PlannedRequest planned, final long nowNs)
    {
        final int[] tokenIds = prompts.tokenIds(planned);
        final Request request = new Request("sim-" + planned.index(), tokenIds)
            .blockHashes(null == blockHashes ? null : blockHashes.blockHashes(planned, tokenIds))
            .maxTokens(WorkloadRequest.UNKNOWN == planned.outputTokens() ? Request.UNSET : planned.outputTokens())
            .ignoreEos(ignoreEos)
            .arrivalNs(nowNs);
        request.attachment(new Timing(planned, nowNs));
        sent++;
        recorder.onStarted(second(nowNs), 0, true);
        recorder.onInFlight(sent - answered);
        final SubmitResult result = engine.submit(request, nowNs);
        if (SubmitResult.ACCEPTED != result)
        {
            // what serve answers: 429 for a full waiting queue, 400 for a prompt too long
            recorder.onFailed(second(nowNs), SubmitResult.QUEUE_FULL == result ? "http_429" : "http_400", true);
            answered++;
            turnEnded(planned, nowNs);
        }
    }

    private void sampleInFlight(final long nowNs)
    {
        final int second = (int)Math.min(inFlightPerSecond.length - 1L, nowNs / 1_000_000_000L);
        while (sampledSeconds <= second)
        {
            inFlightPerSecond[sampledSeconds++] = engine.numRunning() + engine.numWaiting();
        }
    }

    private static int second(final long nowNs)
    {
        return (int)Math.min(Integer.MAX_VALUE - 8L, nowNs / 1_000_000_000L);
    }

    @Override
    public boolean onToken(final Request request, final int tokenId)
    {
        ((Timing)request.attachment()).onToken(request.lastTokenNs(), recorder);
        return false;
    }

    @Override
    public void onFinished(final Request request)
    {
        final Timing timing = (Timing)request.attachment();
        timing.flush(recorder);
        final long endNs = request.finishedNs();
        lastEventNs = Math.max(lastEventNs, endNs);
        answered++;
        final FinishReason reason = request.finishReason();
        if ((FinishReason.STOP == reason || FinishReason.LENGTH == reason) && timing.firstTokenNs >= 0)
        {
            final long ttftNs = timing.firstTokenNs - timing.arrivalNs;
            final long e2eNs = endNs - timing.arrivalNs;
            final long meanGapNs = timing.gaps > 0 ? timing.gapSumNs / timing.gaps : -1;
            final long output = request.numOutputTokens();
            recorder.onCompleted(second(endNs), ttftNs, e2eNs, request.promptLength(), output, meanGapNs,
                slo.isMet(ttftNs, meanGapNs, e2eNs, output), true);
        }
        else
        {
            recorder.onFailed(second(endNs), "finish_" + reason.name().toLowerCase(java.util.Locale.ROOT), true);
        }
        turnEnded(timing.planned, endNs);
    }

    /** A session's turn ended: its next held turn may go after its think time. */
    private void turnEnded(final PlannedRequest planned, final long endNs)
    {
        turns.ended(planned, endNs, 0, releaseTurn);
    }

    @Override
    public void onBatchEnd(final long nowNs)
    {
        lastEventNs = Math.max(lastEventNs, nowNs);
    }
}
