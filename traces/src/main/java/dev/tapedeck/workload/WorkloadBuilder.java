package dev.tapedeck.workload;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import dev.tapedeck.trace.TraceFormatException;

/**
 * Collects a loader's requests and notes and makes the {@link Workload}: requests stably sorted by arrival, arrivals
 * shifted so the first is at 0 ms (with a note when they were not, and the shift kept as the workload's origin),
 * hash ids cut to the prompt's blocks (with a note when there were more). Not thread safe.
 */
final class WorkloadBuilder
{
    private final String source;
    private final List<WorkloadRequest> requests = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final NoteTally extraHashIds = new NoteTally("requests have more hash ids than prompt blocks; the ids " +
        "past the prompt's last block were dropped");
    private int hashBlockSize;
    private boolean sorted = true;

    WorkloadBuilder(final String source)
    {
        this.source = source;
    }

    /**
     * @param blockSize tokens per hash id, 0 when the requests carry none.
     * @return this.
     */
    WorkloadBuilder hashBlockSize(final int blockSize)
    {
        hashBlockSize = blockSize;
        return this;
    }

    int hashBlockSize()
    {
        return hashBlockSize;
    }

    /**
     * @param note something the loader adjusted or skipped.
     */
    void note(final String note)
    {
        notes.add(note);
    }

    List<String> notes()
    {
        return notes;
    }

    int size()
    {
        return requests.size();
    }

    /**
     * Add a request.
     *
     * @param where {@code file:line} of its source, for messages.
     */
    void add(final String where, final double arrivalMs, final long promptTokens, final long outputTokens,
        final long[] hashIds, final String session, final int turn, final double thinkMs)
    {
        if (!Double.isFinite(arrivalMs))
        {
            throw new TraceFormatException(where + ": the arrival time is not a finite number: " + arrivalMs);
        }
        if (promptTokens < 1 || promptTokens > Integer.MAX_VALUE)
        {
            throw new TraceFormatException(where + ": the prompt must have 1 to " + Integer.MAX_VALUE +
                " tokens, has " + promptTokens);
        }
        if (outputTokens > Integer.MAX_VALUE)
        {
            throw new TraceFormatException(where + ": the output length is too large: " + outputTokens);
        }
        long[] ids = hashIds;
        if (null != ids && hashBlockSize > 0)
        {
            final long blocks = (promptTokens + hashBlockSize - 1) / hashBlockSize;
            if (ids.length > blocks)
            {
                extraHashIds.add(where + ": " + ids.length + " ids for " + promptTokens + " tokens");
                ids = Arrays.copyOf(ids, (int)blocks);
            }
        }
        if (!requests.isEmpty() && arrivalMs < requests.get(requests.size() - 1).arrivalMs())
        {
            sorted = false;
        }
        requests.add(new WorkloadRequest(arrivalMs, (int)promptTokens,
            outputTokens < 0 ? WorkloadRequest.UNKNOWN : (int)outputTokens, ids, session, turn, thinkMs));
    }

    /**
     * @param noteUnsorted true to note that the input was not in arrival order (for formats meant to be sorted).
     * @return the workload.
     */
    Workload build(final boolean noteUnsorted)
    {
        extraHashIds.addTo(notes);
        List<WorkloadRequest> ordered = requests;
        if (!sorted)
        {
            ordered = new ArrayList<>(requests);
            ordered.sort(Comparator.comparingDouble(WorkloadRequest::arrivalMs)); // stable
            if (noteUnsorted)
            {
                notes.add("the input is not in arrival order: requests were sorted by arrival (stable)");
            }
        }
        double shiftMs = 0;
        if (!ordered.isEmpty() && 0 != ordered.get(0).arrivalMs())
        {
            shiftMs = ordered.get(0).arrivalMs();
            final List<WorkloadRequest> shifted = new ArrayList<>(ordered.size());
            for (final WorkloadRequest request : ordered)
            {
                shifted.add(new WorkloadRequest(request.arrivalMs() - shiftMs, request.promptTokens(),
                    request.outputTokens(), request.hashIds(), request.session(), request.turn(), request.thinkMs()));
            }
            ordered = shifted;
            notes.add("arrivals shifted by " + Workload.formatMs(-shiftMs) + " ms so the first request is at 0 ms");
        }
        return new Workload(source, hashBlockSize, ordered, notes, shiftMs);
    }
}
