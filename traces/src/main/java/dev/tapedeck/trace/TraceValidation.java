package dev.tapedeck.trace;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The cross-field rules of a record, as vllm-vcr checks them on read, plus range checks no capture can violate:
 * <ul>
 *   <li>{@code prompt_tokens}, {@code output_tokens} and {@code ttft_ms} are present; times are not negative;</li>
 *   <li>more than one output token needs {@code itl_ms} or {@code itl_summary};</li>
 *   <li>{@code itl_ctx} arrays and {@code itl_tokens} have {@code itl_ms}'s length; {@code itl_tokens} has no zeros
 *       and sums to less than {@code output_tokens} (the first chunk holds the rest);</li>
 *   <li>{@code output_token_ids} holds {@code output_tokens} ids; {@code finish_reason} is a known reason.</li>
 * </ul>
 * Stateless; thread safe.
 */
public final class TraceValidation
{
    /** The finish reasons a record may carry. */
    public static final Set<String> FINISH_REASONS = Set.of("stop", "length", "abort", "error", "repetition");

    private TraceValidation()
    {
    }

    /**
     * @param record the record.
     * @return what is wrong with it, empty when it is valid.
     */
    public static List<String> problems(final TraceRecord record)
    {
        final List<String> problems = new ArrayList<>();
        if (record.promptTokens() < 0)
        {
            problems.add("prompt_tokens is missing");
        }
        if (record.outputTokens() < 0)
        {
            problems.add("output_tokens is missing");
        }
        if (Double.isNaN(record.ttftMs()))
        {
            problems.add("ttft_ms is missing");
        }
        else if (record.ttftMs() < 0)
        {
            problems.add("ttft_ms is negative: " + record.ttftMs());
        }
        if (null != record.arrivalMs() && record.arrivalMs() < 0)
        {
            problems.add("arrival_ms is negative: " + record.arrivalMs());
        }
        if (record.outputTokens() > 1 && null == record.itlMs() && null == record.itlSummary())
        {
            problems.add("output_tokens is " + record.outputTokens() + " but neither itl_ms nor itl_summary is given");
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
        if (null != record.outputTokenIds() && record.outputTokenIds().length != record.outputTokens())
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
        if (sum >= record.outputTokens())
        {
            problems.add("itl_tokens sums to " + sum + ", which leaves no tokens for the first chunk of " +
                record.outputTokens());
        }
    }
}
