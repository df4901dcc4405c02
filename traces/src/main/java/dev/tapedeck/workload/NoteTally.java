package dev.tapedeck.workload;

import java.util.ArrayList;
import java.util.List;

/**
 * Counts one kind of adjustment or rule violation and remembers where the first few happened, so a loader can report
 * "3,012 rows ...: file:7, file:9, file:12, ..." as one note instead of one per row. Not thread safe.
 */
final class NoteTally
{
    private static final int PLACES = 3;

    private final String what;
    private final List<String> places = new ArrayList<>(PLACES);
    private long count;

    /**
     * @param what the sentence describing the case, e.g. "requests break the ceil rule".
     */
    NoteTally(final String what)
    {
        this.what = what;
    }

    /**
     * @param where {@code file:line} (and detail) of one occurrence.
     */
    void add(final String where)
    {
        count++;
        if (places.size() < PLACES)
        {
            places.add(where);
        }
    }

    long count()
    {
        return count;
    }

    /**
     * Add the note to {@code notes} when anything was counted.
     */
    void addTo(final List<String> notes)
    {
        if (0 == count)
        {
            return;
        }
        notes.add(count + " " + what + " (" + String.join("; ", places) + (count > places.size() ? "; ..." : "") +
            ")");
    }
}
