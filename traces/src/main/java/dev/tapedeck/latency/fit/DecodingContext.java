package dev.tapedeck.latency.fit;

import java.util.Arrays;
import java.util.List;

import dev.tapedeck.trace.TraceRecord;

/**
 * The mean KV context of the requests decoding when each gap of a capture closed: every record with
 * {@code arrival_ms} and {@code itl_ms} is put on the capture's timeline (first token at {@code arrival_ms + ttft_ms},
 * each later chunk {@code itl_ms} after the one before), decoding from its first token to its last with a context of
 * its prompt plus the tokens it had so far. A gap's answer is the mean over the records decoding in the step that
 * closed it, the gap's own record included, with their contexts before that step's tokens. A record without
 * {@code arrival_ms} gets its own context. Stateless; runs on the caller's thread.
 */
final class DecodingContext
{
    private DecodingContext()
    {
    }

    /**
     * @param capture one capture's records.
     * @param sameStepMs token times at most this far apart (ms) belong to one step.
     * @return per record, per gap, the mean context in tokens (an empty array for a record without gaps).
     */
    static double[][] meanContext(final List<TraceRecord> capture, final double sameStepMs)
    {
        final double[][] mean = new double[capture.size()][];
        final Events events = new Events();
        for (int r = 0; r < capture.size(); r++)
        {
            final TraceRecord record = capture.get(r);
            final double[] itl = record.itlMs();
            final int gaps = null == itl ? 0 : itl.length;
            mean[r] = new double[gaps];
            if (0 == gaps)
            {
                continue;
            }
            final int[] tokens = record.itlTokens();
            long sum = 0;
            for (int i = 0; i < gaps; i++)
            {
                sum += null == tokens ? 1 : tokens[i];
            }
            final long first = Math.max(1, record.outputTokens() - sum);
            long context = record.promptTokens() + first;
            for (int i = 0; i < gaps; i++)
            {
                mean[r][i] = context;
                context += null == tokens ? 1 : tokens[i];
            }
            if (null != record.arrivalMs())
            {
                double at = record.arrivalMs() + record.ttftMs();
                events.change(at, 1, record.promptTokens() + first);
                for (int i = 0; i < gaps; i++)
                {
                    at += itl[i];
                    events.query(at, r, i);
                    events.change(at, 0, null == tokens ? 1 : tokens[i]);
                }
                events.change(at, -1, -context);
            }
        }
        events.sweep(mean, sameStepMs);
        return mean;
    }

    /** Token events on one timeline: growable primitive columns. */
    private static final class Events
    {
        private double[] time = new double[1024];
        private int[] count = new int[1024];
        private long[] context = new long[1024];
        private int[] record = new int[1024];
        private int[] gap = new int[1024];
        private int size;

        void change(final double at, final int countDelta, final long contextDelta)
        {
            add(at, countDelta, contextDelta, -1, 0);
        }

        void query(final double at, final int recordIndex, final int gapIndex)
        {
            add(at, 0, 0, recordIndex, gapIndex);
        }

        private void add(final double at, final int countDelta, final long contextDelta, final int recordIndex,
            final int gapIndex)
        {
            if (size == time.length)
            {
                final int capacity = size * 2;
                time = Arrays.copyOf(time, capacity);
                count = Arrays.copyOf(count, capacity);
                context = Arrays.copyOf(context, capacity);
                record = Arrays.copyOf(record, capacity);
                gap = Arrays.copyOf(gap, capacity);
            }
            time[size] = at;
            count[size] = countDelta;
            context[size] = contextDelta;
            record[size] = recordIndex;
            gap[size] = gapIndex;
            size++;
        }

        /**
         * In time order, one step (a run of events closer than {@code sameStepMs}) at a time: answer its queries with
         * the records decoding before it, then apply its changes.
         */
        void sweep(final double[][] mean, final double sameStepMs)
        {
            final int[] order = sortedByTime();
            long decoding = 0;
            long contextSum = 0;
            int start = 0;
            while (start < size)
            {
                int end = start + 1;
                while (end < size && time[order[end]] - time[order[end - 1]] <= sameStepMs)
                {
                    end++;
                }
                for (int k = start; k < end; k++)
                {
                    final int e = order[k];
                    if (record[e] >= 0 && decoding > 0)
                    {
                        mean[record[e]][gap[e]] = contextSum / (double)decoding;
                    }
                }
                for (int k = start; k < end; k++)
                {
                    decoding += count[order[k]];
                    contextSum += context[order[k]];
                }
                start = end;
            }
        }

        /** Event indices by time (a stable bottom-up merge sort on primitives). */
        private int[] sortedByTime()
        {
            int[] from = new int[size];
            int[] to = new int[size];
            for (int i = 0; i < size; i++)
            {
                from[i] = i;
            }
            for (int width = 1; width < size; width *= 2)
            {
                for (int lo = 0; lo < size; lo += 2 * width)
                {
                    final int mid = Math.min(lo + width, size);
                    final int hi = Math.min(lo + 2 * width, size);
                    int a = lo;
                    int b = mid;
                    for (int k = lo; k < hi; k++)
                    {
                        to[k] = b >= hi || a < mid && time[from[a]] <= time[from[b]] ? from[a++] : from[b++];
                    }
                }
                final int[] swap = from;
                from = to;
                to = swap;
            }
            return from;
        }
    }
}
