package dev.tapedeck.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.tapedeck.trace.TraceRecord;

/**
 * A trace's records keyed for replay, as vllm-vcr's replay sources match them: the records in canonical replay
 * order (stably sorted by {@code arrival_ms}, records without it last in file order; position {@code i} is request
 * {@code ...-i}), and an index from 64-bit keys to the records that carry them. A lookup takes the first candidate
 * not served yet, else serves the first candidate again, so repeated prompts walk through their recordings.
 * <p>
 * <b>Thread safe</b>: the engines of one {@code serve} (each on its own event loop) share it; a lookup is made once per
 * request, at submission, under the index's lock.
 */
final class RecordIndex
{
    private static final java.util.regex.Pattern REPLAY_ID = java.util.regex.Pattern.compile("replay-(\\d+)");

    private final List<TraceRecord> records;
    private final Map<Long, List<Integer>> byKey = new HashMap<>();
    private final boolean[] served;

    RecordIndex(final List<TraceRecord> fileOrder)
    {
        records = new ArrayList<>(fileOrder);
        records.sort(Comparator.comparingDouble(r -> null == r.arrivalMs() ? Double.MAX_VALUE : r.arrivalMs()));
        served = new boolean[records.size()];
    }

    List<TraceRecord> records()
    {
        return records;
    }

    void put(final long key, final int index)
    {
        final List<Integer> candidates = byKey.computeIfAbsent(key, k -> new ArrayList<>(1));
        if (candidates.isEmpty() || candidates.get(candidates.size() - 1) != index)
        {
            candidates.add(index);
        }
    }

    boolean isEmpty()
    {
        return byKey.isEmpty();
    }

    /**
     * @return the record to serve for {@code key}, or -1 when no record has it.
     */
    synchronized int take(final long key)
    {
        final List<Integer> candidates = byKey.get(key);
        if (null == candidates)
        {
            return -1;
        }
        for (final int index : candidates)
        {
            if (!served[index])
            {
                served[index] = true;
                return index;
            }
        }
        return candidates.get(0);
    }

    /**
     * @param keys a chain of keys, shallowest first (a prompt's block hashes).
     * @return the record to serve for the deepest key any record has, or -1.
     */
    synchronized int takeDeepest(final long[] keys)
    {
        for (int i = keys.length - 1; i >= 0; i--)
        {
            if (byKey.containsKey(keys[i]))
            {
                return take(keys[i]);
            }
        }
        return -1;
    }

    /**
     * @param requestId a request id; its index is the integer after its last {@code replay-} when it holds one (a
     *     frontend's {@code chatcmpl-replay-3-0} is 3), else after its last {@code -}.
     * @return that index when it names a record, else -1.
     */
    int indexOf(final String requestId)
    {
        // "replay-<i>" anywhere in the id (a frontend adds its prefix and a choice suffix: chatcmpl-replay-3-0), else
        // the number after the last dash
        final java.util.regex.Matcher replay = REPLAY_ID.matcher(requestId);
        String found = null;
        while (replay.find())
        {
            found = replay.group(1);
        }
        final int dash = requestId.lastIndexOf('-');
        final String digits = null != found ? found : requestId.substring(dash + 1);
        if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(Character::isDigit))
        {
            return -1;
        }
        final int index = Integer.parseInt(digits);
        return index < records.size() ? index : -1;
    }

    /** The FNV-1a 64 key of a prompt's length and its deepest full-block hash: the content key of a prompt. */
    static long contentKey(final long promptTokens, final long deepestBlockHash)
    {
        long hash = deepestBlockHash;
        for (int shift = 0; shift < 64; shift += 8)
        {
            hash = (hash ^ ((promptTokens >>> shift) & 0xff)) * 0x100000001b3L;
        }
        return hash;
    }
}
