package dev.tapedeck.workload;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds multi-turn sessions in a workload that has prefix block ids but no session column (Mooncake, captured
 * traces): a request continues the most recent earlier request, not yet continued, whose full prompt blocks (at
 * least {@value #MIN_SHARED_BLOCKS}) are the first blocks of its own prompt, as the next turn of a chat contains the
 * whole previous prompt. Block ids in these sources name a block together with everything before it (chained), so
 * the id of the parent's last full block identifies its whole prefix. Requests that continue nothing start sessions
 * of their own only when something continues them. Applied by {@link Workloads#load(java.nio.file.Path,
 * WorkloadFormat)} and nowhere else, so every command sees the same sessions for the same file. Stateless; thread safe.
 */
final class SessionInference
{
    /** Fewer shared blocks than this is a shared system prompt, not a conversation. */
    static final int MIN_SHARED_BLOCKS = 2;

    private SessionInference()
    {
    }

    /**
     * @param workload a workload in arrival order; returned unchanged when it has sessions already or no block ids.
     * @return the workload with {@code session} and {@code turn} set on every request that is part of a chain.
     */
    static Workload infer(final Workload workload)
    {
        final List<WorkloadRequest> requests = workload.requests();
        final int blockSize = workload.hashBlockSize();
        if (blockSize <= 0 || requests.stream().anyMatch(r -> null != r.session()) ||
            requests.stream().noneMatch(r -> null != r.hashIds()))
        {
            return workload;
        }
        final int[] parent = new int[requests.size()];
        final boolean[] continued = new boolean[requests.size()];
        // id of the last full block -> requests whose full blocks end with it, latest last
        final Map<Long, List<Integer>> byLastFullBlock = new HashMap<>();
        int chained = 0;
        for (int i = 0; i < requests.size(); i++)
        {
            parent[i] = -1;
            final long[] ids = requests.get(i).hashIds();
            if (null == ids)
            {
                continue;
            }
            for (int f = ids.length; f >= MIN_SHARED_BLOCKS && parent[i] < 0; f--)
            {
                final List<Integer> candidates = byLastFullBlock.get(ids[f - 1]);
                for (int c = null == candidates ? -1 : candidates.size() - 1; c >= 0; c--)
                {
                    final int candidate = candidates.get(c);
                    final long[] candidateIds = requests.get(candidate).hashIds();
                    if (!continued[candidate] && f == fullBlocks(requests.get(candidate), blockSize) &&
                        java.util.Arrays.equals(candidateIds, 0, f, ids, 0, f))
                    {
                        parent[i] = candidate;
                        continued[candidate] = true;
                        chained++;
                        break;
                    }
                }
            }
            final int full = fullBlocks(requests.get(i), blockSize);
            if (full >= MIN_SHARED_BLOCKS)
            {
                byLastFullBlock.computeIfAbsent(ids[full - 1], k -> new ArrayList<>()).add(i);
            }
        }
        if (0 == chained)
        {
            return workload;
        }
        final String[] session = new String[requests.size()];
        final int[] turn = new int[requests.size()];
        int sessions = 0;
        final List<WorkloadRequest> out = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++)
        {
            if (parent[i] >= 0)
            {
                session[i] = session[parent[i]];
                turn[i] = turn[parent[i]] + 1;
            }
            else if (continued[i])
            {
                session[i] = "inferred-" + sessions++;
            }
            final WorkloadRequest r = requests.get(i);
            out.add(new WorkloadRequest(r.arrivalMs(), r.promptTokens(), r.outputTokens(), r.hashIds(), session[i],
                turn[i], r.thinkMs()));
        }
        final List<String> notes = new ArrayList<>(workload.notes());
        notes.add("sessions inferred from block ids: " + sessions + " multi-turn sessions covering " +
            (chained + sessions) + " of " + requests.size() + " requests");
        return new Workload(workload.source(), blockSize, out, notes);
    }

    private static int fullBlocks(final WorkloadRequest request, final int blockSize)
    {
        return null == request.hashIds() ? 0 : Math.min(request.hashIds().length, request.promptTokens() / blockSize);
    }
}
