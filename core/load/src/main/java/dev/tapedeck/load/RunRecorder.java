package dev.tapedeck.load;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

/**
 * What one client event loop measured during a run: latency histograms (HdrHistogram, nanoseconds, 3 significant
 * digits, up to one hour), token and request counts, errors by kind, and a per-second timeline. Recording allocates
 * nothing except when the timeline grows (once per new 64 seconds) or a new error kind appears.
 * <p>
 * Single writer: only its event loop records; {@link #mergeInto} is called after the loop stopped recording (or from
 * the loop itself).
 */
public final class RunRecorder
{
    private static final long HIGHEST_NS = TimeUnit.HOURS.toNanos(1);

    final Histogram ttftNs = histogram();
    final Histogram itlNs = histogram();
    final Histogram itlRequestMeanNs = histogram();
    final Histogram tpotNs = histogram();
    final Histogram e2eNs = histogram();
    final Histogram dispatchLatenessNs = histogram();
    final Histogram prefillNs = histogram();
    final Histogram handoffNs = histogram();
    final Histogram decodeFirstTokenNs = histogram();
    final Map<String, Long> errors = new TreeMap<>();
    /** The first message the server gave for each error kind. */
    final Map<String, String> errorMessages = new TreeMap<>();
    long started;
    long completed;
    long failed;
    long promptTokens;
    long outputTokens;
    long goodRequests;
    long peakInFlight;
    long[] completedPerSecond = new long[64];
    long[] outputTokensPerSecond = new long[64];
    long[] startedPerSecond = new long[64];
    long[] errorsPerSecond = new long[64];

    /**
     * @return the histogram of time to first token, in nanoseconds.
     */
    public Histogram ttftNs()
    {
        return ttftNs;
    }

    /**
     * @return the histogram of inter-token latency, one value per token gap, in nanoseconds.
     */
    public Histogram itlNs()
    {
        return itlNs;
    }

    /**
     * @return the histogram of each request's mean inter-token latency, in nanoseconds.
     */
    public Histogram itlRequestMeanNs()
    {
        return itlRequestMeanNs;
    }

    /**
     * @return the histogram of time per output token after the first, in nanoseconds.
     */
    public Histogram tpotNs()
    {
        return tpotNs;
    }

    /**
     * @return the histogram of end-to-end request latency, in nanoseconds.
     */
    public Histogram e2eNs()
    {
        return e2eNs;
    }

    /**
     * @return the histogram of how late each request was sent against its intended time, in nanoseconds.
     */
    public Histogram dispatchLatenessNs()
    {
        return dispatchLatenessNs;
    }

    /**
     * @return prefill/decode runs: the histogram of the prefill hop's latency (its write to its whole JSON answer),
     *     in nanoseconds.
     */
    public Histogram prefillNs()
    {
        return prefillNs;
    }

    /**
     * @return prefill/decode runs: the histogram of the client's time between the prefill's answer and the decode
     *     hop's write, in nanoseconds.
     */
    public Histogram handoffNs()
    {
        return handoffNs;
    }

    /**
     * @return prefill/decode runs: the histogram of the decode hop's time to first token (its write to its first
     *     token), in nanoseconds.
     */
    public Histogram decodeFirstTokenNs()
    {
        return decodeFirstTokenNs;
    }

    /**
     * @return requests started.
     */
    public long started()
    {
        return started;
    }

    /**
     * @return requests completed.
     */
    public long completed()
    {
        return completed;
    }

    /**
     * @return requests failed.
     */
    public long failed()
    {
        return failed;
    }

    /**
     * @return prompt tokens of completed requests.
     */
    public long promptTokens()
    {
        return promptTokens;
    }

    /**
     * @return output tokens received.
     */
    public long outputTokens()
    {
        return outputTokens;
    }

    /**
     * @return completed requests that met every SLO.
     */
    public long goodRequests()
    {
        return goodRequests;
    }

    /**
     * @return most requests in flight at once.
     */
    public long peakInFlight()
    {
        return peakInFlight;
    }

    /**
     * @return failures by kind (read only).
     */
    public Map<String, Long> errors()
    {
        return java.util.Collections.unmodifiableMap(errors);
    }

    private static Histogram histogram()
    {
        return new Histogram(HIGHEST_NS, 3);
    }

    /**
     * A request was written to its connection.
     *
     * @param second seconds since the run started.
     * @param latenessNs write time minus intended send time.
     * @param measured false during warm-up (the timeline counts it, the totals do not).
     */
    public void onStarted(final int second, final long latenessNs, final boolean measured)
    {
        grow(second);
        startedPerSecond[second]++;
        if (measured)
        {
            started++;
            dispatchLatenessNs.recordValue(clamp(latenessNs));
        }
    }

    /**
     * @param inFlight requests sent and not yet answered, now (the peak is kept).
     */
    public void onInFlight(final long inFlight)
    {
        peakInFlight = Math.max(peakInFlight, inFlight);
    }

    /**
     * @param gapNs time between two chunks that carried tokens.
     * @param tokens tokens in the later chunk: each counts as one inter-token latency of {@code gapNs / tokens}.
     */
    public void onTokenGap(final long gapNs, final long tokens)
    {
        final long n = Math.max(1, tokens);
        itlNs.recordValueWithCount(clamp(gapNs / n), n);
    }

    /**
     * A request completed successfully.
     *
     * @param second seconds since the run started, at completion.
     * @param ttftNs first token minus intended send time.
     * @param e2eNs completion minus intended send time.
     * @param prompt prompt tokens (the server's usage, else the plan's).
     * @param output output tokens (the server's usage, else the chunks counted).
     * @param meanGapNs mean gap between its token chunks, or -1 when it had fewer than two.
     * @param good true when it met every SLO.
     * @param measured false during warm-up.
     */
    public void onCompleted(final int second, final long ttftNs, final long e2eNs, final long prompt,
        final long output, final long meanGapNs, final boolean good, final boolean measured)
    {
        grow(second);
        completedPerSecond[second]++;
        outputTokensPerSecond[second] += output;
        if (!measured)
        {
            return;
        }
        completed++;
        promptTokens += prompt;
        outputTokens += output;
        this.ttftNs.recordValue(clamp(ttftNs));
        this.e2eNs.recordValue(clamp(e2eNs));
        if (output > 1)
        {
            tpotNs.recordValue(clamp((e2eNs - ttftNs) / (output - 1)));
        }
        if (meanGapNs >= 0)
        {
            itlRequestMeanNs.recordValue(clamp(meanGapNs));
        }
        if (good)
        {
            goodRequests++;
        }
    }

    /**
     * The hops of a measured prefill/decode request that completed (its TTFT, from the intended send, is dispatch
     * lateness + prefill + handoff + decode first token).
     *
     * @param prefillNs the prefill hop: its write to its whole JSON answer.
     * @param handoffNs the prefill's answer to the decode hop's write.
     * @param decodeFirstTokenNs the decode hop's write to its first token.
     */
    public void onHops(final long prefillNs, final long handoffNs, final long decodeFirstTokenNs)
    {
        this.prefillNs.recordValue(clamp(prefillNs));
        this.handoffNs.recordValue(clamp(handoffNs));
        this.decodeFirstTokenNs.recordValue(clamp(decodeFirstTokenNs));
    }

    /**
     * A request failed.
     *
     * @param second seconds since the run started.
     * @param kind the error kind ({@code http_503}, {@code connection_reset}, {@code timeout}, ...).
     * @param measured false during warm-up.
     */
    public void onFailed(final int second, final String kind, final boolean measured)
    {
        onFailed(second, kind, null, measured);
    }

    /**
     * A request failed, with what the server said.
     *
     * @param second seconds since the run started.
     * @param kind the error kind ({@code http_400}, ...).
     * @param message the server's error message, or null; the first one of each kind is kept for the report.
     * @param measured false during warm-up.
     */
    public void onFailed(final int second, final String kind, final String message, final boolean measured)
    {
        grow(second);
        errorsPerSecond[second]++;
        if (measured)
        {
            failed++;
            errors.merge(kind, 1L, Long::sum);
            if (null != message)
            {
                errorMessages.putIfAbsent(kind, message);
            }
        }
    }

    /**
     * Add this recorder's data to another (merging the event loops of a run).
     *
     * @param total the accumulator.
     */
    public void mergeInto(final RunRecorder total)
    {
        total.ttftNs.add(ttftNs);
        total.itlNs.add(itlNs);
        total.itlRequestMeanNs.add(itlRequestMeanNs);
        total.tpotNs.add(tpotNs);
        total.e2eNs.add(e2eNs);
        total.dispatchLatenessNs.add(dispatchLatenessNs);
        total.prefillNs.add(prefillNs);
        total.handoffNs.add(handoffNs);
        total.decodeFirstTokenNs.add(decodeFirstTokenNs);
        errors.forEach((k, v) -> total.errors.merge(k, v, Long::sum));
        errorMessages.forEach(total.errorMessages::putIfAbsent);
        total.started += started;
        total.peakInFlight = Math.max(total.peakInFlight, peakInFlight);
        total.completed += completed;
        total.failed += failed;
        total.promptTokens += promptTokens;
        total.outputTokens += outputTokens;
        total.goodRequests += goodRequests;
        total.grow(completedPerSecond.length - 1);
        for (int i = 0; i < completedPerSecond.length; i++)
        {
            total.completedPerSecond[i] += completedPerSecond[i];
            total.outputTokensPerSecond[i] += outputTokensPerSecond[i];
            total.startedPerSecond[i] += startedPerSecond[i];
            total.errorsPerSecond[i] += errorsPerSecond[i];
        }
    }

    private void grow(final int second)
    {
        if (second >= completedPerSecond.length)
        {
            final int length = Math.max(second + 1, completedPerSecond.length * 2);
            completedPerSecond = Arrays.copyOf(completedPerSecond, length);
            outputTokensPerSecond = Arrays.copyOf(outputTokensPerSecond, length);
            startedPerSecond = Arrays.copyOf(startedPerSecond, length);
            errorsPerSecond = Arrays.copyOf(errorsPerSecond, length);
        }
    }

    private static long clamp(final long ns)
    {
        return Math.max(0, Math.min(HIGHEST_NS, ns));
    }
}
