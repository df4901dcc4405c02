package dev.tapedeck.latency;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.tapedeck.trace.TraceReader;
import dev.tapedeck.trace.TraceRecord;

/**
 * {@code --latency-trace FILE[,FILE...]}: latencies learnt from captured requests (vllm-vcr or tapedeck traces), after
 * vllm-vcr's trace latency model.
 * <ul>
 *   <li><b>TTFT</b>: a prefill service curve {@code T(u) = max(a + b u + c u^2, floor)} over uncached prompt tokens
 *       {@code u}, fitted (weighted least squares) to the 10th percentile TTFT of sliding windows (600 tokens wide,
 *       stride 400, at least 5 requests, weight sqrt(n)) of the requests at the trace's lowest concurrency; a quadratic
 *       when it is convex and rising over the data, else a line; without either, TTFTs drawn from the nearest prompt
 *       bucket's lowest-concurrency requests, scaled by {@code u / median u} (0.25 to 8) when borrowed. What the
 *       steps charge for the request's prefill in isolation is taken off {@code T(u)}; the rest is held after the
 *       end of its prefill ({@link #firstTokenOverheadNs}), so an isolated request's TTFT is {@code T(u)} and one whose
 *       chunks wait behind other work pays the wait on top.</li>
 *   <li><b>Decode</b>: paced per request ({@link #pacedStepNs}): requests' clean gaps (no prefill admitted in the
 *       gap, per {@code itl_ctx}; all gaps without it) are donors, in a grid of context cells (prompt bucket, and
 *       whether the request saw big prefill chunks in more than 6% of its gaps) by concurrency bucket. A request picks
 *       a donor in its nearest non-empty cell (weighted by tokens) per concurrency bucket, keeps it, and draws steps
 *       from the donor's sorted gaps (interpolated) with the nearer step's {@code itl_tokens}. Its cell is a churn
 *       cell when the engine admitted a big chunk (over {@value DecodePacing#BIG_CHUNK_TOKENS} uncached tokens)
 *       within a second before the request's admission ({@link DecodePacing#regime}).</li>
 *   <li><b>Prefill chunks</b> ({@link #stepDurationNs}, the part of a step besides paced decodes):
 *       {@code cost(t) = c0 t + c1 t^2 / 2} ms, the chunk-cost law fitted to the gaps that admitted a prefill chunk
 *       (their excess over the request's median clean gap), at least {@code full_step_floor} when the step fills the
 *       token budget. The law's KV-depth term is summed over the step's chunks at their depths (from
 *       {@link StepShape#prefillAttentionPairs()}; at depth 0 for a shape that does not tell).</li>
 *   <li>{@code K = max(itl_tokens) - 1} turns on speculative-decoding accounting; output lengths for requests without
 *       {@code max_tokens} are drawn from the traces' {@code output_tokens}.</li>
 * </ul>
 * Immutable after construction; safe to share between engines. Draws come from the caller's generator; a paced step
 * allocates nothing.
 */
public final class TraceLatencyModel implements LatencyModel
{
    static final long[] PROMPT_EDGES = {0, 65, 129, 257, 513, 1025, 2049, 4097, 8193, 16385, 32769};
    static final int PROMPT_BUCKETS = PROMPT_EDGES.length;
    static final int CELLS = 2 * PROMPT_BUCKETS;
    static final int CONCURRENCY_BUCKETS = 8;
    static final int BIG_CHUNK_TOKENS = DecodePacing.BIG_CHUNK_TOKENS;
    private static final double NS_PER_MS = 1e6;

    private final String description;
    private final int maxBatchedTokens;
    /** Prefill service curve: a + b u + c u^2 (ms), or NaN a without a curve. */
    private final double curveA;
    private final double curveB;
    private final double curveC;
    private final double curveFloorMs;
    /** Fallback TTFTs per uncached-prompt bucket (sorted ms) and their median u. */
    private final double[][] ttftByBucket;
    private final double[] medianUByBucket;
    private final double lawC0;
    private final double lawC1;
    private final double fullStepFloorMs;
    /** Donors: sorted gaps (ms) and tokens per donor; cumulative token weights per cell. */
    private final double[][] donorGapsMs;
    private final int[][] donorTokens;
    private final int[][] cellDonors;
    private final double[][] cellCumulativeWeights;
    /** Nearest non-empty cell for each (cell, concurrency bucket). */
    private final int[][] nearestCell;
    private final int speculativeTokens;
    private final double[] outputLengths;

    private TraceLatencyModel(final String description, final List<TraceRecord> records, final int maxBatchedTokens)
    {
        this.description = description;
        this.maxBatchedTokens = Math.max(1, maxBatchedTokens);
        final double[] curve = TraceLatencyFit.serviceCurve(records);
        curveA = curve[0];
        curveB = curve[1];
        curveC = curve[2];
        curveFloorMs = curve[3];
        ttftByBucket = new double[PROMPT_BUCKETS][];
        medianUByBucket = new double[PROMPT_BUCKETS];
        TraceLatencyFit.ttftBuckets(records, ttftByBucket, medianUByBucket);
        final double[] law = TraceLatencyFit.chunkLaw(records, this.maxBatchedTokens);
        lawC0 = law[0];
        lawC1 = law[1];
        fullStepFloorMs = TraceLatencyFit.fullStepFloor(records, cost(this.maxBatchedTokens));
        final List<double[]> gaps = new ArrayList<>();
        final List<int[]> tokens = new ArrayList<>();
        final List<List<double[]>> byCell = new ArrayList<>();
        for (int i = 0; i < CELLS * CONCURRENCY_BUCKETS; i++)
        {
            byCell.add(new ArrayList<>());
        }
        int maxTokens = 1;
        for (final TraceRecord record : records)
        {
            final double[][] steps = TraceLatencyFit.donorSteps(record);
            if (null == steps)
            {
                continue;
            }
            double weight = 0;
            final int[] stepTokens = new int[steps[1].length];
            for (int i = 0; i < stepTokens.length; i++)
            {
                stepTokens[i] = (int)steps[1][i];
                weight += stepTokens[i];
                maxTokens = Math.max(maxTokens, stepTokens[i]);
            }
            if (null != record.itlSummary() && null == record.itlMs())
            {
                weight = Math.max(1, record.itlSummary().count());
            }
            final int cell = promptBucket(record.promptTokens()) + (TraceLatencyFit.isChurn(record) ?
                PROMPT_BUCKETS : 0);
            byCell.get(cell * CONCURRENCY_BUCKETS + concurrencyBucket(record.concurrency()))
                .add(new double[] {gaps.size(), weight});
            gaps.add(steps[0]);
            tokens.add(stepTokens);
        }
        if (gaps.isEmpty())
        {
            throw new IllegalArgumentException(description + ": no record has ITL data (itl_ms or itl_summary); " +
                "a latency trace needs requests with more than one output token");
        }
        donorGapsMs = gaps.toArray(new double[0][]);
        donorTokens = tokens.toArray(new int[0][]);
        cellDonors = new int[byCell.size()][];
        cellCumulativeWeights = new double[byCell.size()][];
        for (int c = 0; c < byCell.size(); c++)
        {
            final List<double[]> donors = byCell.get(c);
            cellDonors[c] = new int[donors.size()];
            cellCumulativeWeights[c] = new double[donors.size()];
            double sum = 0;
            for (int d = 0; d < donors.size(); d++)
            {
                cellDonors[c][d] = (int)donors.get(d)[0];
                sum += donors.get(d)[1];
                cellCumulativeWeights[c][d] = sum;
            }
        }
        nearestCell = new int[CELLS][CONCURRENCY_BUCKETS];
        for (int cell = 0; cell < CELLS; cell++)
        {
            for (int conc = 0; conc < CONCURRENCY_BUCKETS; conc++)
            {
                nearestCell[cell][conc] = nearest(cell, conc);
            }
        }
        speculativeTokens = maxTokens - 1;
        outputLengths = TraceLatencyFit.outputLengths(records);
    }

    /**
     * @param files vllm-vcr or tapedeck traces (JSONL, {@code .gz}).
     * @param maxBatchedTokens the engine's {@code --max-num-batched-tokens} (the chunk law's budget).
     * @return the model learnt from every record of every file.
     * @throws IOException if a file cannot be read.
     * @throws IllegalArgumentException (naming the file, and the line of a bad record) when a file is not a trace, or
     *     no record has ITL data.
     */
    public static TraceLatencyModel read(final List<Path> files, final int maxBatchedTokens) throws IOException
    {
        final List<TraceRecord> records = new ArrayList<>();
        for (final Path file : files)
        {
            final List<TraceRecord> read = TraceReader.readAll(file).records();
            if (read.isEmpty())
            {
                throw new IllegalArgumentException(file + ": no records");
            }
            records.addAll(read);
        }
        return of(records, maxBatchedTokens, "trace latency of " + files);
    }

    /**
     * @param records captured requests.
     * @param maxBatchedTokens the engine's token budget per step.
     * @param description what the model was learnt from (for messages and {@link #describe()}).
     * @return the model.
     * @throws IllegalArgumentException when no record has ITL data.
     */
    public static TraceLatencyModel of(final List<TraceRecord> records, final int maxBatchedTokens,
        final String description)
    {
        if (records.isEmpty())
        {
            throw new IllegalArgumentException(description + ": no records");
        }
        return new TraceLatencyModel(description, records, maxBatchedTokens);
    }

    static int promptBucket(final long tokens)
    {
        int bucket = 0;
        for (int i = 1; i < PROMPT_EDGES.length; i++)
        {
            if (tokens >= PROMPT_EDGES[i])
            {
                bucket = i;
            }
        }
        return bucket;
    }

    static int concurrencyBucket(final long running)
    {
        if (1 == running)
        {
            return 0;
        }
        if (running >= 2 && running <= 4)
        {
            return 1;
        }
        if (running >= 5 && running <= 6)
        {
            return 2;
        }
        if (running >= 7 && running <= 8)
        {
            return 3;
        }
        if (running >= 9 && running <= 16)
        {
            return 4;
        }
        if (running >= 17 && running <= 32)
        {
            return 5;
        }
        return running >= 33 && running <= 64 ? 6 : 7;
    }

    private int nearest(final int cell, final int conc)
    {
        int best = -1;
        int bestDistance = Integer.MAX_VALUE;
        int bestPromptDistance = Integer.MAX_VALUE;
        for (int c = 0; c < CELLS; c++)
        {
            for (int k = 0; k < CONCURRENCY_BUCKETS; k++)
            {
                if (0 == cellDonors[c * CONCURRENCY_BUCKETS + k].length)
                {
                    continue;
                }
                final int promptDistance = Math.abs(c - cell);
                final int distance = promptDistance + Math.abs(k - conc);
                if (distance < bestDistance || (distance == bestDistance && promptDistance < bestPromptDistance))
                {
                    best = c * CONCURRENCY_BUCKETS + k;
                    bestDistance = distance;
                    bestPromptDistance = promptDistance;
                }
            }
        }
        return best;
    }

    /** The chunk-cost law for one chunk at KV depth 0, in ms. */
    double cost(final int chunkTokens)
    {
        return cost(chunkTokens, 0);
    }

    /** The chunk-cost law {@code c0 t + c1 ((d + t)^2 - d^2) / 2} for one chunk at KV depth {@code d}, in ms. */
    private double cost(final int chunkTokens, final long depth)
    {
        return lawC0 * chunkTokens + lawC1 * (chunkTokens * (double)depth + chunkTokens * (double)chunkTokens / 2);
    }

    /**
     * @return the service curve's coefficients {a, b, c, floor} in ms, a NaN without a curve.
     */
    double[] serviceCurve()
    {
        return new double[] {curveA, curveB, curveC, curveFloorMs};
    }

    @Override
    public long stepDurationNs(final StepShape step, final SeededRandom random)
    {
        if (0 == step.prefillTokens())
        {
            return 0;
        }
        // sum over the chunks of c0 t + c1 ((d0 + t)^2 - d0^2) / 2 = c0 t + c1 (t d0 + t^2 / 2): the query-key pairs
        // of the chunks' attention, less t / 2 each
        final long pairs = step.prefillAttentionPairs();
        double ms = pairs > 0 ? lawC0 * step.prefillTokens() + lawC1 * (pairs - step.prefillTokens() / 2.0) :
            cost(step.prefillTokens());
        if (step.scheduledTokens() >= maxBatchedTokens)
        {
            ms = Math.max(ms, fullStepFloorMs);
        }
        return (long)(ms * NS_PER_MS);
    }

    /** The trace model charges a request's whole TTFT after its prefill ({@link #firstTokenOverheadNs}). */
    @Override
    public long firstTokenDelayNs(final int promptTokens, final int cachedTokens, final int runningRequests,
        final SeededRandom random)
    {
        return 0;
    }

    /**
     * vllm-vcr's first-token overhead: the request's isolated TTFT {@code T(u)} ({@link #serviceTimeMs}) less what
     * the engine's steps charge for its prefill in isolation (its chunks of at most the budget, priced by the chunk
     * law from the cached depth on, a full chunk at least the full-step floor), at least 0. An isolated request's TTFT
     * is thus {@code T(u)}; a request whose chunks wait behind other work pays the wait on top.
     */
    @Override
    public long firstTokenOverheadNs(final int promptTokens, final int cachedTokens, final int runningRequests,
        final SeededRandom random)
    {
        final int uncached = Math.max(promptTokens - cachedTokens, 1);
        final double chargedMs = isolatedChargeMs(uncached, Math.max(cachedTokens, 0));
        return (long)(Math.max(serviceTimeMs(uncached, random) - chargedMs, 0) * NS_PER_MS);
    }

    /** What the steps charge for prefilling {@code uncached} tokens from depth {@code cached}, alone, in ms. */
    double isolatedChargeMs(final int uncached, final long cached)
    {
        double ms = 0;
        long depth = cached;
        for (int left = uncached; left > 0; )
        {
            final int chunk = Math.min(left, maxBatchedTokens);
            final double chunkMs = cost(chunk, depth);
            ms += chunk >= maxBatchedTokens ? Math.max(chunkMs, fullStepFloorMs) : chunkMs;
            depth += chunk;
            left -= chunk;
        }
        return ms;
    }

    /**
     * The isolated TTFT of {@code uncached} prompt tokens, in ms: the service curve, or without one a TTFT drawn from
     * the nearest prompt bucket (scaled when borrowed).
     */
    double serviceTimeMs(final int uncached, final SeededRandom random)
    {
        if (!Double.isNaN(curveA))
        {
            return Math.max(Math.max(curveA + curveB * uncached + curveC * uncached * (double)uncached,
                curveFloorMs), 0);
        }
        final int bucket = promptBucket(uncached);
        int found = -1;
        for (int distance = 0; distance < PROMPT_BUCKETS && found < 0; distance++)
        {
            if (bucket - distance >= 0 && null != ttftByBucket[bucket - distance])
            {
                found = bucket - distance;
            }
            else if (bucket + distance < PROMPT_BUCKETS && null != ttftByBucket[bucket + distance])
            {
                found = bucket + distance;
            }
        }
        if (found < 0)
        {
            return 0;
        }
        final double[] sorted = ttftByBucket[found];
        double ms = sorted[(int)(random.nextDouble() * sorted.length)];
        if (found != bucket && medianUByBucket[found] > 0)
        {
            ms *= Math.min(Math.max(uncached / medianUByBucket[found], 0.25), 8.0);
        }
        return ms;
    }

    @Override
    public DecodePacing newDecodePacing(final int promptTokens)
    {
        return new DecodePacing(promptBucket(promptTokens), PROMPT_BUCKETS, CONCURRENCY_BUCKETS);
    }

    @Override
    public long pacedStepNs(final DecodePacing pacing, final int runningRequests, final SeededRandom random)
    {
        final int conc = concurrencyBucket(runningRequests);
        int donor = pacing.donorByConcurrency[conc];
        if (donor < 0)
        {
            final int cell = nearestCell[pacing.contextCell][conc];
            final double[] cumulative = cellCumulativeWeights[cell];
            final double pick = random.nextDouble() * cumulative[cumulative.length - 1];
            int index = Arrays.binarySearch(cumulative, pick);
            index = index < 0 ? -index - 1 : index + 1;
            donor = cellDonors[cell][Math.min(index, cumulative.length - 1)];
            pacing.donorByConcurrency[conc] = donor;
        }
        final double[] gaps = donorGapsMs[donor];
        final int[] tokens = donorTokens[donor];
        final double position = random.nextDouble() * (gaps.length - 1);
        final int low = (int)position;
        final int high = Math.min(low + 1, gaps.length - 1);
        final double fraction = position - low;
        pacing.tokens = fraction < 0.5 ? tokens[low] : tokens[high];
        return (long)((gaps[low] + (gaps[high] - gaps[low]) * fraction) * NS_PER_MS);
    }

    @Override
    public int speculativeTokens()
    {
        return speculativeTokens;
    }

    @Override
    public int sampleOutputLength(final SeededRandom random)
    {
        return (int)Math.max(1, Math.round(outputLengths[(int)(random.nextDouble() * outputLengths.length)]));
    }

    @Override
    public String describe()
    {
        return description + (Double.isNaN(curveA) ? ", TTFT by prompt bucket" : String.format(java.util.Locale.ROOT,
            ", TTFT %.3g + %.3g u + %.3g u^2 ms (floor %.3g)", curveA, curveB, curveC, curveFloorMs)) +
            String.format(java.util.Locale.ROOT, ", chunk law c0 %.3g c1 %.3g ms, full-step floor %.3g ms, " +
            "%d donors, K %d", lawC0, lawC1, fullStepFloorMs, donorGapsMs.length, speculativeTokens);
    }
}
