package dev.tapedeck.trace.tools;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.latency.StepLatencyModel;
import dev.tapedeck.trace.PromptBlockHashes;
import dev.tapedeck.trace.TraceMeta;
import dev.tapedeck.trace.TraceRecord;
import dev.tapedeck.trace.TraceWriter;

/**
 * {@code inspect gen-demo}: a synthetic trace that looks like a capture, for demos and tests. The same options give a
 * byte-identical file.
 * <ul>
 *   <li>Workload: Poisson arrivals (exponential gaps, the first at 0); prompt and output lengths lognormal
 *       (heavy-tailed: median x e^(sigma z)); an output that reaches {@code max_tokens} ends with {@code length},
 *       else {@code stop}. A share of prompts starts with one of a few shared system prompts (picked with weights
 *       1, 1/2, 1/3, ...), so {@code block_hashes} (block size 16, computed from the synthetic token ids) share
 *       prefixes and later requests get prefix-cache hits ({@code cached_tokens}).</li>
 *   <li>Timing: {@link DemoEngine}, a vLLM-V1-shaped step loop in virtual time whose step durations come from the
 *       step model with {@link StepCoefficients#DENSE_8B_RTXPRO6000} (an 8B dense model on one RTX PRO 6000).
 *       TTFT therefore includes queueing and chunked prefill, ITL grows with the batch, and {@code itl_ctx} holds
 *       each step's running requests and prefill tokens. Times are rounded to the microsecond.</li>
 *   <li>{@code concurrency} is the number of requests in flight at arrival, this one included. Records are written
 *       in finish order, as a capture writes them.</li>
 *   <li>{@code fast}: short prompts (median 128) and outputs (median 12, at most 64) at 20 requests/s, so the
 *       whole trace spans seconds and replays quickly; the default is 4 requests/s with prompts of median 600 and
 *       outputs of median 150 (at most 1024).</li>
 * </ul>
 * Stateless; thread safe.
 */
public final class DemoTraceGenerator
{
    private static final int VOCABULARY = 32_000;
    private static final int MAX_MODEL_LEN = 16_384;

    private static final Profile REALISTIC = new Profile("realistic", 4.0, 600, 0.9, 150, 0.9, 1024, 400, 6, 0.6);
    private static final Profile FAST = new Profile("fast", 20.0, 128, 0.8, 12, 0.7, 64, 64, 4, 0.6);

    private DemoTraceGenerator()
    {
    }

    /**
     * What to generate.
     *
     * @param records how many requests.
     * @param seed the seed of every draw.
     * @param fast true for short requests at a high rate.
     */
    public record Options(int records, long seed, boolean fast)
    {
        /**
         * Checks the options.
         */
        public Options
        {
            if (records < 1)
            {
                throw new IllegalArgumentException("--records must be at least 1, got " + records);
            }
        }
    }

    /**
     * What was generated.
     *
     * @param records records written.
     * @param spanMs from the first arrival to the last token.
     * @param peakConcurrency the largest {@code concurrency}.
     * @param outputTokens tokens generated in all.
     */
    public record Result(int records, double spanMs, long peakConcurrency, long outputTokens)
    {
    }

    private record Profile(String name, double arrivalsPerSecond, double promptMedian, double promptSigma,
        double outputMedian, double outputSigma, int maxTokens, double prefixMedian, int prefixes,
        double prefixShare)
    {
    }

    /**
     * Generate a trace file.
     *
     * @param options what to generate.
     * @param out the file (gzip when it ends with {@code .gz}).
     * @return what was generated.
     * @throws IOException if the file cannot be written.
     */
    public static Result write(final Options options, final Path out) throws IOException
    {
        final List<DemoEngine.Request> requests = workload(options);
        final double[] endsMs = new double[requests.size()];
        final long[] counts = new long[3];
        try (TraceWriter writer = TraceWriter.open(out, meta(options)))
        {
            new DemoEngine(new StepLatencyModel(StepCoefficients.DENSE_8B_RTXPRO6000)).run(requests,
                (request, endMs) ->
                {
                    final int finished = (int)counts[0];
                    endsMs[finished] = endMs;
                    counts[0]++;
                    final long concurrency = 1 + request.index - endedBy(endsMs, finished + 1, request.arrivalMs);
                    counts[1] = Math.max(counts[1], concurrency);
                    counts[2] += request.outputTokens;
                    writer.write(record(request, concurrency), false);
                });
        }
        return new Result(requests.size(), endsMs[requests.size() - 1], counts[1], counts[2]);
    }

    /**
     * @param options what is generated.
     * @return the meta line: a simulated 8B model, block size 16, {@code source: gen-demo}, and the generator's
     *     settings under {@code gen_demo}.
     */
    public static TraceMeta meta(final Options options)
    {
        final TraceMeta meta = new TraceMeta().model("synthetic/dense-8b").gpu("simulated RTX PRO 6000").tp(1L)
            .maxNumSeqs((long)DemoEngine.MAX_NUM_SEQS).source("gen-demo").blockSize((long)DemoEngine.BLOCK_SIZE);
        final ObjectNode settings = JsonNodeFactory.instance.objectNode();
        settings.put("records", options.records());
        settings.put("seed", options.seed());
        settings.put("profile", profile(options).name());
        settings.put("step_profile", StepCoefficients.DENSE_8B_RTXPRO6000.name());
        meta.extra().put("gen_demo", settings);
        return meta;
    }

    private static Profile profile(final Options options)
    {
        return options.fast() ? FAST : REALISTIC;
    }

    private static List<DemoEngine.Request> workload(final Options options)
    {
        final Profile profile = profile(options);
        final SeededRandom random = new SeededRandom(SeededRandom.mix(options.seed(), 0x6e6d6f));
        final int[][] prefixes = new int[profile.prefixes()][];
        double prefixWeights = 0;
        for (int p = 0; p < prefixes.length; p++)
        {
            prefixes[p] = tokens(random, lognormal(random, profile.prefixMedian(), 0.5, 16, 4096));
            prefixWeights += 1.0 / (p + 1);
        }
        final int longestPrompt = MAX_MODEL_LEN - profile.maxTokens();
        final List<DemoEngine.Request> requests = new ArrayList<>(options.records());
        double arrivalMs = 0;
        for (int i = 0; i < options.records(); i++)
        {
            if (i > 0)
            {
                arrivalMs += -Math.log(1.0 - random.nextDouble()) / profile.arrivalsPerSecond() * 1000.0;
            }
            final int[] prefix = random.nextDouble() < profile.prefixShare() ?
                prefixes[pick(random, prefixWeights, prefixes.length)] : new int[0];
            final int userTokens = lognormal(random, profile.promptMedian(), profile.promptSigma(), 1, longestPrompt);
            final int promptTokens = Math.min(prefix.length + userTokens, longestPrompt);
            final int[] prompt = java.util.Arrays.copyOf(prefix, promptTokens);
            for (int t = Math.min(prefix.length, promptTokens); t < promptTokens; t++)
            {
                prompt[t] = random.nextInt(VOCABULARY);
            }
            final int natural = lognormal(random, profile.outputMedian(), profile.outputSigma(), 1, Integer.MAX_VALUE);
            final int outputTokens = Math.min(natural, profile.maxTokens());
            requests.add(new DemoEngine.Request(i, roundMs(arrivalMs), promptTokens,
                PromptBlockHashes.of(prompt, promptTokens, DemoEngine.BLOCK_SIZE), outputTokens,
                natural >= profile.maxTokens() ? "length" : "stop"));
        }
        return requests;
    }

    private static TraceRecord record(final DemoEngine.Request request, final long concurrency)
    {
        final TraceRecord record = request.capture.cachedTokens(request.cachedTokens).toRecord(request.finishReason);
        record.concurrency(concurrency).ttftMs(roundMs(record.ttftMs()));
        final double[] gaps = record.itlMs();
        for (int g = 0; g < gaps.length; g++)
        {
            gaps[g] = roundMs(gaps[g]);
        }
        return record;
    }

    /**
     * @return how many of the first {@code count} (ascending) end times are at or before {@code atMs}.
     */
    private static int endedBy(final double[] endsMs, final int count, final double atMs)
    {
        int low = 0;
        int high = count;
        while (low < high)
        {
            final int middle = (low + high) >>> 1;
            if (endsMs[middle] <= atMs)
            {
                low = middle + 1;
            }
            else
            {
                high = middle;
            }
        }
        return low;
    }

    private static int pick(final SeededRandom random, final double totalWeight, final int count)
    {
        double draw = random.nextDouble() * totalWeight;
        for (int p = 0; p < count; p++)
        {
            draw -= 1.0 / (p + 1);
            if (draw < 0)
            {
                return p;
            }
        }
        return count - 1;
    }

    private static int lognormal(final SeededRandom random, final double median, final double sigma, final int min,
        final int max)
    {
        final double value = median * Math.exp(sigma * random.nextGaussian());
        return (int)Math.max(min, Math.min(max, Math.round(value)));
    }

    private static int[] tokens(final SeededRandom random, final int count)
    {
        final int[] tokens = new int[count];
        for (int t = 0; t < count; t++)
        {
            tokens[t] = random.nextInt(VOCABULARY);
        }
        return tokens;
    }

    private static double roundMs(final double ms)
    {
        return Math.round(ms * 1000.0) / 1000.0;
    }
}
