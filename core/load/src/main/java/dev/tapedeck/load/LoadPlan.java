package dev.tapedeck.load;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.workload.Workload;
import dev.tapedeck.workload.WorkloadRequest;

/**
 * What a run sends: requests in intended send order with their sizes, block ids and sessions. Built from a workload
 * (open loop at its time stamps, scaled), from a rate and length distributions (open loop), or as a pool of requests
 * for closed-loop workers (offsets unused). Immutable.
 *
 * @param requests requests in intended send order.
 * @param sessions number of sessions (requests with {@code session >= 0} belong to one).
 * @param blockSize tokens per hash id, 0 without ids.
 * @param description one line for the report ("mooncake, 12,031 requests over 3,537 s, time scale 0.01").
 * @param notes adjustments the user should know about.
 */
public record LoadPlan(List<PlannedRequest> requests, int sessions, int blockSize, String description,
    List<String> notes)
{
    /**
     * @param workload the workload (arrival order).
     * @param timeScale multiplier on every arrival gap and think time (0.5 replays twice as fast).
     * @param maxRequests keep the first N requests by arrival (0 for all).
     * @param maxSeconds keep requests whose scaled arrival is within this many seconds (0 for all).
     * @param outputOverride output lengths drawn for every request, or null to keep the workload's.
     * @param seed seed of the output draws.
     * @return the plan.
     */
    public static LoadPlan fromWorkload(final Workload workload, final double timeScale, final int maxRequests,
        final double maxSeconds, final LengthDistribution outputOverride, final long seed)
    {
        final SeededRandom random = new SeededRandom(seed);
        if (!(timeScale > 0))
        {
            throw new IllegalArgumentException("--time-scale must be > 0");
        }
        final List<PlannedRequest> planned = new ArrayList<>();
        final Map<String, Integer> sessionIndex = new HashMap<>();
        for (final WorkloadRequest r : workload.requests())
        {
            if (maxRequests > 0 && planned.size() >= maxRequests)
            {
                break;
            }
            final long offsetNs = Math.round(r.arrivalMs() * 1e6 * timeScale);
            if (maxSeconds > 0 && offsetNs > maxSeconds * 1e9)
            {
                break;
            }
            final int session = null == r.session() ? -1 :
                sessionIndex.computeIfAbsent(r.session(), k -> sessionIndex.size());
            final long thinkNs = Double.isNaN(r.thinkMs()) ? 0 : Math.round(r.thinkMs() * 1e6 * timeScale);
            planned.add(new PlannedRequest(planned.size(), offsetNs, r.promptTokens(),
                null != outputOverride ? outputOverride.draw(random) : r.outputTokens(), r.hashIds(), session, r.turn(),
                thinkNs));
        }
        if (planned.isEmpty())
        {
            throw new IllegalArgumentException("the workload has no requests to send (after --max-requests / " +
                "--max-seconds)");
        }
        final double spanS = planned.get(planned.size() - 1).offsetNs() / 1e9;
        final String description = String.format(java.util.Locale.ROOT, "%s, %,d requests over %.1f s%s%s",
            workload.source(), planned.size(), spanS, 1.0 == timeScale ? "" : " (time scale " + timeScale + ")",
            sessionIndex.isEmpty() ? "" : ", " + sessionIndex.size() + " sessions");
        return new LoadPlan(List.copyOf(planned), sessionIndex.size(), workload.hashBlockSize(), description,
            workload.notes());
    }

    /**
     * Open loop at a mean rate.
     *
     * @param ratePerS mean requests per second.
     * @param arrivals the gap process.
     * @param durationS how long to generate arrivals.
     * @param prompt prompt lengths.
     * @param output output lengths.
     * @param seed the seed.
     * @param maxRequests cap on requests (0 for none).
     * @return the plan.
     */
    public static LoadPlan fromRate(final double ratePerS, final ArrivalProcess arrivals, final double durationS,
        final LengthDistribution prompt, final LengthDistribution output, final long seed, final int maxRequests)
    {
        if (!(ratePerS > 0) || !(durationS > 0))
        {
            throw new IllegalArgumentException("--rate and --duration must be > 0");
        }
        final SeededRandom random = new SeededRandom(seed);
        final List<PlannedRequest> planned = new ArrayList<>();
        final double meanGapNs = 1e9 / ratePerS;
        long offsetNs = 0;
        while (offsetNs < durationS * 1e9 && (0 == maxRequests || planned.size() < maxRequests))
        {
            planned.add(new PlannedRequest(planned.size(), offsetNs, prompt.draw(random), output.draw(random), null,
                -1, 0, 0));
            offsetNs += arrivals.nextGapNs(meanGapNs, random);
        }
        return new LoadPlan(List.copyOf(planned), 0, 0, String.format(java.util.Locale.ROOT,
            "rate %.1f/s (%s) for %.0f s, prompt %s, output %s", ratePerS, arrivals, durationS, prompt, output),
            List.of());
    }

    /**
     * A pool of generated requests for closed-loop workers.
     *
     * @param count how many.
     * @param prompt prompt lengths.
     * @param output output lengths.
     * @param seed the seed.
     * @return the plan (offsets are 0).
     */
    public static LoadPlan pool(final int count, final LengthDistribution prompt, final LengthDistribution output,
        final long seed)
    {
        final SeededRandom random = new SeededRandom(seed);
        final List<PlannedRequest> planned = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            planned.add(new PlannedRequest(i, 0, prompt.draw(random), output.draw(random), null, -1, 0, 0));
        }
        return new LoadPlan(List.copyOf(planned), 0, 0, "generated: prompt " + prompt + ", output " + output,
            List.of());
    }

    /**
     * @return true when some requests must wait for an earlier turn of their session.
     */
    public boolean hasSessions()
    {
        return sessions > 0;
    }
}
