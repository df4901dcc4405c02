package dev.tapedeck.workload;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A request schedule to replay: requests sorted by arrival, with the block size behind their {@code hash_ids}.
 * Immutable once built; safe to share between threads. Loaders live in {@link Workloads}; the file format is read by
 * {@link WorkloadReader} and written by {@link WorkloadWriter} (docs/workloads.md).
 *
 * @param source where it came from ({@code mooncake}, {@code azure}, {@code kvcache-tester}, ...).
 * @param hashBlockSize tokens per hash id (512 for Mooncake, 64 for kv-cache-tester), 0 when there are none.
 * @param requests requests in arrival order.
 * @param notes what the loader adjusted or skipped, for the user to read.
 * @param originMs the source's own time of arrival 0 (a source whose first request is at 60,000 ms is shifted to
 *     start at 0 with origin 60,000), so that {@link #fixedSchedule} can window and time it on the source's clock.
 */
public record Workload(String source, int hashBlockSize, List<WorkloadRequest> requests, List<String> notes,
    double originMs)
{
    /**
     * @throws IllegalArgumentException when the requests are not in arrival order or the block size is negative.
     */
    public Workload
    {
        requests = List.copyOf(requests);
        notes = List.copyOf(notes);
        if (hashBlockSize < 0)
        {
            throw new IllegalArgumentException("hashBlockSize must not be negative: " + hashBlockSize);
        }
        for (int i = 1; i < requests.size(); i++)
        {
            if (requests.get(i).arrivalMs() < requests.get(i - 1).arrivalMs())
            {
                throw new IllegalArgumentException("requests must be in arrival order: request " + i + " arrives at " +
                    requests.get(i).arrivalMs() + " ms, before request " + (i - 1));
            }
        }
    }

    /**
     * A workload on its source's clock.
     *
     * @param source where it came from.
     * @param hashBlockSize tokens per hash id, 0 when there are none.
     * @param requests requests in arrival order.
     * @param notes what the loader adjusted or skipped.
     */
    public Workload(final String source, final int hashBlockSize, final List<WorkloadRequest> requests,
        final List<String> notes)
    {
        this(source, hashBlockSize, requests, notes, 0);
    }

    /**
     * AIPerf's fixed schedule ({@code --fixed-schedule} and its offsets) on the source's clock (arrival plus
     * {@link #originMs()}): only the requests whose time is within {@code [startMs, endMs]} (both inclusive, either
     * open when null), timed from {@code startMs} when given, else from the source's time 0 when {@code absolute}
     * (a first request at 60 s is sent after 60 s), else from the first request kept.
     *
     * @param absolute time from the source's 0 rather than from the first request.
     * @param startMs the earliest source time kept and the schedule's zero, or null.
     * @param endMs the latest source time kept, or null.
     * @return the windowed workload, with a note of what it kept.
     * @throws IllegalArgumentException when {@code startMs > endMs} or no request falls in the window.
     */
    public Workload fixedSchedule(final boolean absolute, final Double startMs, final Double endMs)
    {
        checkScheduleWindow(startMs, endMs);
        final List<WorkloadRequest> kept = new ArrayList<>();
        for (final WorkloadRequest r : requests)
        {
            final double sourceMs = r.arrivalMs() + originMs;
            if ((null == startMs || sourceMs >= startMs) && (null == endMs || sourceMs <= endMs))
            {
                kept.add(r);
            }
        }
        if (kept.isEmpty())
        {
            throw new IllegalArgumentException("no request of the workload falls between " +
                (null == startMs ? "its start" : formatMs(startMs) + " ms") + " and " +
                (null == endMs ? "its end" : formatMs(endMs) + " ms") + (requests.isEmpty() ? "" : " (its requests " +
                "are at " + formatMs(originMs + requests.get(0).arrivalMs()) + " to " +
                formatMs(originMs + requests.get(requests.size() - 1).arrivalMs()) + " ms)"));
        }
        final double zeroMs = null != startMs ? startMs : absolute ? 0 : kept.get(0).arrivalMs() + originMs;
        final List<WorkloadRequest> timed = new ArrayList<>(kept.size());
        for (final WorkloadRequest r : kept)
        {
            timed.add(new WorkloadRequest(r.arrivalMs() + originMs - zeroMs, r.promptTokens(), r.outputTokens(),
                r.hashIds(), r.session(), r.turn(), r.thinkMs()));
        }
        final List<String> withNote = new ArrayList<>(notes);
        withNote.add("fixed schedule: " + kept.size() + " of " + requests.size() + " requests, timed from " +
            formatMs(zeroMs) + " ms of the source's clock");
        return new Workload(source, hashBlockSize, timed, withNote, zeroMs);
    }

    /**
     * @return milliseconds from the first arrival to the last, 0 for fewer than two requests.
     */
    public double spanMs()
    {
        if (requests.size() < 2)
        {
            return 0;
        }
        return requests.get(requests.size() - 1).arrivalMs() - requests.get(0).arrivalMs();
    }

    /**
     * @return distinct sessions named by the requests (requests without a session are not counted).
     */
    public int sessionCount()
    {
        final Set<String> sessions = new HashSet<>();
        for (final WorkloadRequest request : requests)
        {
            if (null != request.session())
            {
                sessions.add(request.session());
            }
        }
        return sessions.size();
    }

    /**
     * {@code users} concurrent users, as kv-cache-tester runs them: user {@code u} replays session {@code u mod S} of
     * this workload's {@code S} sessions (in order of their first request), starting {@code u * rampMs / users}
     * after the first, with hash ids of its own ({@code id + (u + 1) * 2^40}: users share no prefix blocks, not even
     * those their sessions shared). Requests without a session are left out, with a note.
     *
     * @param users how many users, 1 to 2^23.
     * @param rampMs over how long their starts are spread.
     * @return the users' requests in arrival order.
     * @throws IllegalArgumentException when the workload has no sessions, {@code users} is out of range, or a hash id
     *     does not fit below 2^40.
     */
    public Workload withUsers(final int users, final double rampMs)
    {
        return withUsers(users, rampMs, 0);
    }

    /**
     * {@link #withUsers(int, double)} for users numbered from {@code firstUser}: each user's hash ids are its own, so
     * the levels of a sweep against one server (which keeps its cache from level to level) share no blocks.
     *
     * @param users how many users.
     * @param rampMs over how long their starts are spread.
     * @param firstUser the number of the first user (its ids move by {@code (firstUser + 1) * 2^40}).
     * @return the users' requests in arrival order.
     * @throws IllegalArgumentException as {@link #withUsers(int, double)} does.
     */
    public Workload withUsers(final int users, final double rampMs, final int firstUser)
    {
        if (users < 1 || firstUser < 0 || (long)firstUser + users > 1 << 23)
        {
            throw new IllegalArgumentException("users must be between 1 and 2^23, got " + users + " from " +
                firstUser);
        }
        final java.util.Map<String, List<WorkloadRequest>> sessions = new java.util.LinkedHashMap<>();
        int sessionless = 0;
        for (final WorkloadRequest r : requests)
        {
            if (null != r.session())
            {
                sessions.computeIfAbsent(r.session(), k -> new ArrayList<>()).add(r);
            }
            else
            {
                sessionless++;
            }
        }
        if (sessions.isEmpty())
        {
            throw new IllegalArgumentException("users replay sessions; this workload (" + source + ") has none");
        }
        final List<List<WorkloadRequest>> ordered = new ArrayList<>(sessions.values());
        final List<WorkloadRequest> replayed = new ArrayList<>();
        for (int u = 0; u < users; u++)
        {
            final List<WorkloadRequest> session = ordered.get(u % ordered.size());
            final double shiftMs = u * rampMs / users - session.get(0).arrivalMs();
            final long namespace = (long)(firstUser + u + 1) << 40;
            for (final WorkloadRequest r : session)
            {
                long[] ids = null;
                if (null != r.hashIds())
                {
                    ids = new long[r.hashIds().length];
                    for (int i = 0; i < ids.length; i++)
                    {
                        if (r.hashIds()[i] >>> 40 != 0)
                        {
                            throw new IllegalArgumentException("users: hash id " + r.hashIds()[i] + " of session " +
                                r.session() + " does not fit below 2^40 (each user's ids move by (user + 1) * 2^40)");
                        }
                        ids[i] = r.hashIds()[i] + namespace;
                    }
                }
                replayed.add(new WorkloadRequest(r.arrivalMs() + shiftMs, r.promptTokens(), r.outputTokens(), ids,
                    r.session() + "#user" + (firstUser + u), r.turn(), r.thinkMs()));
            }
        }
        replayed.sort(java.util.Comparator.comparingDouble(WorkloadRequest::arrivalMs));
        final List<String> withNote = new ArrayList<>(notes);
        if (sessionless > 0)
        {
            withNote.add(sessionless + " requests without a session are left out of the users' replay");
        }
        return new Workload(source, hashBlockSize, replayed, withNote, originMs);
    }

    /**
     * The same requests as independent ones ({@code --sessions off}): no session, turn 0, no think time.
     *
     * @return a workload without sessions; this one when it has none.
     */
    public Workload withoutSessions()
    {
        if (requests.stream().allMatch(r -> null == r.session() && 0 == r.turn() && Double.isNaN(r.thinkMs())))
        {
            return this;
        }
        final List<WorkloadRequest> independent = new ArrayList<>(requests.size());
        for (final WorkloadRequest r : requests)
        {
            independent.add(new WorkloadRequest(r.arrivalMs(), r.promptTokens(), r.outputTokens(), r.hashIds(), null,
                0, Double.NaN));
        }
        return new Workload(source, hashBlockSize, independent, notes, originMs);
    }

    /**
     * @param startMs a fixed schedule's start offset, or null.
     * @param endMs its end offset, or null.
     * @throws IllegalArgumentException when the start is after the end, in the words of AIPerf's flags.
     */
    public static void checkScheduleWindow(final Double startMs, final Double endMs)
    {
        if (null != startMs && null != endMs && startMs > endMs)
        {
            throw new IllegalArgumentException("--fixed-schedule-start-offset (" + formatMs(startMs) + " ms) is " +
                "after --fixed-schedule-end-offset (" + formatMs(endMs) + " ms)");
        }
    }

    /**
     * @param ms a time in milliseconds.
     * @return it without a needless fraction or exponent ({@code 3536999}, {@code 680.59}).
     */
    public static String formatMs(final double ms)
    {
        if (!Double.isFinite(ms))
        {
            return Double.toString(ms);
        }
        if (ms == Math.rint(ms) && Math.abs(ms) < 0x1p53)
        {
            return Long.toString((long)ms);
        }
        return BigDecimal.valueOf(ms).stripTrailingZeros().toPlainString();
    }
}
