package dev.tapedeck.trace.tools;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.tapedeck.latency.SeededRandom;
import dev.tapedeck.latency.StepCoefficients;
import dev.tapedeck.trace.TraceMeta;

/**
 * The workload of {@code inspect gen-demo}, a synthetic trace that looks like a capture: this class draws the
 * requests and the meta line; core runs them through the real engine in virtual time and captures the trace
 * ({@code dev.tapedeck.capture.DemoTraceRun}). The same options give the same requests.
 * <ul>
 *   <li>Workload: Poisson arrivals (exponential gaps, the first at 0); prompt and output lengths lognormal
 *       (heavy-tailed: median x e^(sigma z)); an output that reaches {@code max_tokens} ends with {@code length},
 *       else {@code stop}. A share of prompts starts with one of a few shared system prompts (picked with weights
 *       1, 1/2, 1/3, ...), so {@code block_hashes} (block size 16, computed from the synthetic token ids) share
 *       prefixes and later requests get prefix-cache hits ({@code cached_tokens}).</li>
 *   <li>Engine settings for the run: {@value #MAX_NUM_SEQS} sequences, {@value #MAX_NUM_BATCHED_TOKENS} batched
 *       tokens, blocks of {@value #BLOCK_SIZE}, context {@value #MAX_MODEL_LEN}, the step model
 *       {@link StepCoefficients#DENSE_8B_RTXPRO6000} (an 8B dense model on one RTX PRO 6000).</li>
 *   <li>{@code fast}: short prompts (median 128) and outputs (median 12, at most 64) at 20 requests/s, so the
 *       whole trace spans seconds and replays quickly; the default is 4 requests/s with prompts of median 600 and
 *       outputs of median 150 (at most 1024).</li>
 * </ul>
 * Stateless; thread safe.
 */
public final class DemoTraceGenerator
{
    /** Running-set cap of the engine that times the trace. */
    public static final int MAX_NUM_SEQS = 256;
    /** Token budget per step of that engine. */
    public static final int MAX_NUM_BATCHED_TOKENS = 8192;
    /** KV block size, also of {@code block_hashes}. */
    public static final int BLOCK_SIZE = 16;
    /** Context length: the longest prompt plus its {@code max_tokens}. */
    public static final int MAX_MODEL_LEN = 16_384;

    private static final int VOCABULARY = 32_000;

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
     * One generated request.
     *
     * @param arrivalMs arrival, ms since the first (whole microseconds).
     * @param promptTokenIds the prompt's token ids (do not modify).
     * @param maxTokens its {@code max_tokens}.
     * @param outputTokens how many tokens it generates: {@code maxTokens} when it ends with {@code length}, fewer
     *     when the model stops by itself ({@code stop}).
     */
    public record DemoRequest(double arrivalMs, int[] promptTokenIds, int maxTokens, int outputTokens)
    {
        /**
         * @return {@code length} when the output reaches {@code max_tokens}, else {@code stop}.
         */
        public String finishReason()
        {
            return outputTokens >= maxTokens ? "length" : "stop";
        }
    }

    /**
     * @param options what is generated.
     * @return the meta line: a simulated 8B model, block size 16, {@code source: gen-demo}, and the generator's
     *     settings under {@code gen_demo}.
     */
    public static TraceMeta meta(final Options options)
    {
        final TraceMeta meta = new TraceMeta().model("synthetic/dense-8b").gpu("simulated RTX PRO 6000").tp(1L)
            .maxNumSeqs((long)MAX_NUM_SEQS).source("gen-demo").blockSize((long)BLOCK_SIZE);
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

    /**
     * Draw the requests.
     *
     * @param options what to generate.
     * @return the requests in arrival order, the first at 0.
     */
    public static List<DemoRequest> requests(final Options options)
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
        final List<DemoRequest> requests = new ArrayList<>(options.records());
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
            final int[] prompt = Arrays.copyOf(prefix, promptTokens);
            for (int t = Math.min(prefix.length, promptTokens); t < promptTokens; t++)
            {
                prompt[t] = random.nextInt(VOCABULARY);
            }
            final int natural = lognormal(random, profile.outputMedian(), profile.outputSigma(), 1, Integer.MAX_VALUE);
            final int outputTokens = Math.min(natural, profile.maxTokens());
            requests.add(new DemoRequest(roundMs(arrivalMs), prompt, profile.maxTokens(), outputTokens));
        }
        return requests;
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

    /**
     * @param ms milliseconds.
     * @return rounded to the microsecond.
     */
    public static double roundMs(final double ms)
    {
        return Math.round(ms * 1000.0) / 1000.0;
    }
}
