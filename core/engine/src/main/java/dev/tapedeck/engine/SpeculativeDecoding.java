package dev.tapedeck.engine;

import java.util.Arrays;

import dev.tapedeck.latency.SeededRandom;

/**
 * Speculative decoding as vLLM's {@code --speculative-config} sets it up: every decoding request is scheduled with
 * {@code K} draft tokens besides its own (they count against the step's token budget), and the verification accepts a
 * leading run of them, so a decode step emits 1 to {@code K + 1} tokens.
 * <p>
 * Which drafts are accepted is drawn from the request's seeded generator: position {@code i} (0-based) is accepted
 * with probability {@code rate[i] / rate[i - 1]} once position {@code i - 1} was, so that over many drafts the share
 * of drafts whose position {@code i} is accepted is {@code rate[i]}: the per-position acceptance rate vLLM logs and
 * exposes ({@code vllm:spec_decode_num_accepted_tokens_per_pos / vllm:spec_decode_num_drafts}). A single rate
 * {@code p} stands for {@code p, p^2, p^3, ...} (each draft accepted with probability {@code p} after the previous
 * one). When {@link #recorded()} is true (replayed steps, a trace's bursts) the bursts come from the recording and no
 * draws are made; {@code K} then only sets the budget and the accounting.
 * <p>
 * Immutable; shared by the engines of one configuration.
 */
public final class SpeculativeDecoding
{
    /** The default per-position acceptance, when none is given: each draft accepted with probability 0.7. */
    public static final double DEFAULT_ACCEPTANCE_RATE = 0.7;

    private final int numSpeculativeTokens;
    private final double[] acceptanceRates;
    private final double[] conditional;
    private final boolean recorded;

    private SpeculativeDecoding(final int numSpeculativeTokens, final double[] acceptanceRates,
        final boolean recorded)
    {
        this.numSpeculativeTokens = numSpeculativeTokens;
        this.acceptanceRates = acceptanceRates;
        this.recorded = recorded;
        conditional = new double[numSpeculativeTokens];
        for (int i = 0; i < numSpeculativeTokens; i++)
        {
            final double previous = 0 == i ? 1.0 : acceptanceRates[i - 1];
            conditional[i] = previous <= 0 ? 0 : Math.min(1.0, acceptanceRates[i] / previous);
        }
    }

    /**
     * @param numSpeculativeTokens {@code K}, at least 1.
     * @param rates per-position acceptance rates in [0, 1], non-increasing: one value (a per-draft probability, see
     *     the class comment), or {@code K} values; null for {@link #DEFAULT_ACCEPTANCE_RATE}.
     * @return the settings.
     * @throws IllegalArgumentException for K below 1 or rates that are not a non-increasing list of one or K values
     *     in [0, 1].
     */
    public static SpeculativeDecoding of(final int numSpeculativeTokens, final double[] rates)
    {
        if (numSpeculativeTokens < 1)
        {
            throw new IllegalArgumentException("num_speculative_tokens must be >= 1, got " + numSpeculativeTokens);
        }
        final double[] given = null == rates ? new double[] {DEFAULT_ACCEPTANCE_RATE} : rates;
        if (1 != given.length && numSpeculativeTokens != given.length)
        {
            throw new IllegalArgumentException("give one acceptance rate or " + numSpeculativeTokens +
                " (one per draft position), got " + given.length);
        }
        final double[] perPosition = new double[numSpeculativeTokens];
        for (int i = 0; i < numSpeculativeTokens; i++)
        {
            perPosition[i] = 1 == given.length ? Math.pow(given[0], i + 1) : given[i];
            if (!(perPosition[i] >= 0 && perPosition[i] <= 1))
            {
                throw new IllegalArgumentException("acceptance rates must be in [0, 1], got " + Arrays.toString(given));
            }
            if (i > 0 && perPosition[i] > perPosition[i - 1])
            {
                throw new IllegalArgumentException("acceptance rates must not increase with the position (a draft " +
                    "is accepted only after the ones before it), got " + Arrays.toString(given));
            }
        }
        return new SpeculativeDecoding(numSpeculativeTokens, perPosition, false);
    }

    /**
     * For bursts that come from a recording (replayed steps, a trace's {@code itl_tokens}): {@code K} drafts are
     * scheduled and accounted, the accepted count is what the recording says.
     *
     * @param numSpeculativeTokens {@code K}, at least 1.
     * @return the settings.
     */
    public static SpeculativeDecoding recorded(final int numSpeculativeTokens)
    {
        if (numSpeculativeTokens < 1)
        {
            throw new IllegalArgumentException("num_speculative_tokens must be >= 1, got " + numSpeculativeTokens);
        }
        return new SpeculativeDecoding(numSpeculativeTokens, new double[numSpeculativeTokens], true);
    }

    /**
     * @return {@code K}: draft tokens per decoding request and step.
     */
    public int numSpeculativeTokens()
    {
        return numSpeculativeTokens;
    }

    /**
     * @return true when bursts come from a recording rather than from acceptance draws.
     */
    public boolean recorded()
    {
        return recorded;
    }

    /**
     * @param position 0-based draft position.
     * @return the share of drafts whose token at that position is accepted.
     */
    public double acceptanceRate(final int position)
    {
        return acceptanceRates[position];
    }

    /**
     * Draw how many of a request's drafts the verification accepts: a leading run.
     *
     * @param drafts draft tokens scheduled, 0 to {@code K}.
     * @param random the request's generator.
     * @return accepted drafts, 0 to {@code drafts}.
     */
    int accept(final int drafts, final SeededRandom random)
    {
        int accepted = 0;
        while (accepted < drafts && random.nextDouble() < conditional[accepted])
        {
            accepted++;
        }
        return accepted;
    }

    @Override
    public String toString()
    {
        return recorded ? "speculative decoding, " + numSpeculativeTokens + " drafts, recorded bursts" :
            "speculative decoding, " + numSpeculativeTokens + " drafts, acceptance " + Arrays.toString(acceptanceRates);
    }
}
