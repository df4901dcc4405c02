package dev.tapedeck.trace;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The cross-field rules of a record, as vllm-vcr checks them on read, plus range checks no capture can violate. They
 * come in two sets, because a trace is used two ways:
 * <ul>
 *   <li><b>as a workload</b> ({@code load}, {@code simulate}, {@code --from trace}), a record is a request to send and
 *       needs only {@code prompt_tokens} ({@code arrival_ms} too, checked by the loader): {@link #workloadProblems}
 *       checks that, that no time is negative, that {@code itl_ctx} arrays and {@code itl_tokens} have
 *       {@code itl_ms}'s length, that {@code itl_tokens} has no zeros and sums to less than {@code output_tokens},
 *       that {@code output_token_ids} holds {@code output_tokens} ids and that {@code finish_reason} is known;</li>
 *   <li><b>as a latency source</b> (vcr's rules, {@code --latency-trace}, replay, fitting), a record must also carry
 *       what was measured: {@link #latencyProblems} wants {@code output_tokens} and {@code ttft_ms}, and more than
 *       one output token needs {@code itl_ms} or {@code itl_summary}.</li>
 * </ul>
 * {@link #problems} is both sets: a record valid as a latency source. Stateless; thread safe.
 */
public final class TraceValidation
{
    /** The finish reasons a record may carry. */
    public static final Set<String> FINISH_REASONS = Set.of("stop", "length", "abort", "error", "repetition");

    /** The tail of every latency-source message: the record is still a request to replay. */
    private static final String AS_WORKLOAD = " (a latency source needs it; as a workload request the record is fine)";

    private TraceValidation()
    {
    }

    /**
     * @param record the record.
     * @return what is wrong with it as a latency source, the workload rules included; empty when it is valid.
     */
    public static List<String> problems(final TraceRecord record)
    {
        final List<String> problems = workloadProblems(record);
        problems.addAll(latencyProblems(record));
        return problems;
    }

    /**
     * @param record the record.
     * @return what keeps it from being replayed as a request; empty when it is a valid workload request.
     */
    public static List<String> workloadProblems(final TraceRecord record)
    {
        final List<String> problems = new ArrayList<>();
        if (record.promptTokens() < 0)
        {
            problems.add("prompt_tokens is missing");
        }
        if (record.ttftMs() < 0)
        {
            problems.add("ttft_ms is negative: " + record.ttftMs());
        }
        if (null != record.arrivalMs() && record.arrivalMs() < 0)
        {
            problems.add("arrival_ms is negative: " + record.arrivalMs());
        }
        if (null != record.e2eMs() && record.e2eMs() < 0)
        {
            problems.add("e2e_ms is negative: " + record.e2eMs());
        }
        final double[] itlMs = record.itlMs();
        if (null != itlMs)
        {
            for (int i = 0; i < itlMs.length; i++)
            {
                if (itlMs[i] < 0)
                {
                    problems.add("itl_ms[" + i + "] is negative: " + itlMs[i]);
                    break;
                }
            }
        }
        checkContext(record, itlMs, problems);
        checkChunks(record, itlMs, problems);
        if (null != record.outputTokenIds() && record.outputTokens() >= 0 &&
            record.outputTokenIds().length != record.outputTokens())
        {
            problems.add("output_token_ids has " + record.outputTokenIds().length + " ids but output_tokens is " +
                record.outputTokens());
        }
        if (null != record.finishReason() && !FINISH_REASONS.contains(record.finishReason()))
        {
            problems.add("finish_reason '" + record.finishReason() + "' is not one of " +
                "stop, length, abort, error, repetition");
        }
        return problems;
    }

    /**
     * @param record the record.
     * @return what a latency source needs and the record lacks (each message says so: the record may still be a
     *     valid workload request); empty when it has it all.
     */
    public static List<String> latencyProblems(final TraceRecord record)
    {
        final List<String> problems = new ArrayList<>();
        if (record.outputTokens() < 0)
        {
            problems.add("output_tokens is missing" + AS_WORKLOAD);
        }
        if (Double.isNaN(record.ttftMs()))
        {
            problems.add("ttft_ms is missing" + AS_WORKLOAD);
        }
        if (record.outputTokens() > 1 && null == record.itlMs() && null == record.itlSummary())
        {
            problems.add("output_tokens is " + record.outputTokens() + " but neither itl_ms nor itl_summary is given" +
                AS_WORKLOAD);
        }
        return problems;
    }

    private static void checkContext(final TraceRecord record, final double[] itlMs, final List<String> problems)
    {
        final TraceRecord.ItlContext context = record.itlContext();
        if (null == context)
        {
            return;
        }
        if (null == itlMs)
        {
            problems.add("itl_ctx is given without itl_ms");
            return;
        }
        if (context.numRunning().length != itlMs.length || context.prefillTokens().length != itlMs.length)
        {
            problems.add("itl_ctx arrays must have itl_ms's length " + itlMs.length + " (num_running " +
                context.numRunning().length + ", prefill_tokens " + context.prefillTokens().length + ")");
        }
    }

    private static void checkChunks(final TraceRecord record, final double[] itlMs, final List<String> problems)
    {
        final int[] itlTokens = record.itlTokens();
        if (null == itlTokens)
        {
            return;
        }
        if (null == itlMs || itlTokens.length != itlMs.length)
        {
            problems.add("itl_tokens must have itl_ms's length " + (null == itlMs ? 0 : itlMs.length) + ", has " +
                itlTokens.length);
            return;
        }
        long sum = 0;
        for (int i = 0; i < itlTokens.length; i++)
        {
            if (0 == itlTokens[i])
            {
                problems.add("itl_tokens[" + i + "] is 0: every chunk after a gap carries at least one token");
                return;
            }
            sum += Integer.toUnsignedLong(itlTokens[i]);
        }
        if (record.outputTokens() >= 0 && sum >= record.outputTokens())
        {
            problems.add("itl_tokens sums to " + sum + ", which leaves no tokens for the first chunk of " +
                record.outputTokens());
        }
    }
}
