package dev.tapedeck.simulate.fit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * One inference-perf experiment of a real vLLM server, as the BLIS training runs record it: {@code exp-config.yaml}
 * (model, tensor parallelism, max-model-len, max-num-batched-tokens, max-num-seqs), {@code profile.yaml} (a
 * shared-prefix workload: system prompts x users, system prompt, question and output lengths; constant-rate stages) and
 * {@code results/stage_N_lifecycle_metrics.json} (per stage: TTFT, request latency and prompt length distributions).
 * <p>
 * Immutable once read; thread safe.
 *
 * @param name the experiment's directory name.
 * @param model the served model.
 * @param tensorParallel the tensor-parallel size.
 * @param maxModelLen vLLM's max-model-len.
 * @param maxNumBatchedTokens vLLM's max-num-batched-tokens.
 * @param maxNumSeqs vLLM's max-num-seqs.
 * @param systemPrompts distinct system prompts.
 * @param usersPerSystemPrompt users per system prompt.
 * @param systemPromptTokens tokens of a system prompt (shared by its users).
 * @param outputTokens output tokens of every request (ignore_eos).
 * @param stages the load stages with what was measured in each.
 */
public record BlisExperiment(String name, String model, int tensorParallel, int maxModelLen,
    int maxNumBatchedTokens, int maxNumSeqs, int systemPrompts, int usersPerSystemPrompt, int systemPromptTokens,
    int outputTokens, List<Stage> stages)
{
    /**
     * One constant-rate stage and what the real server did in it.
     *
     * @param ratePerS requests per second.
     * @param durationS seconds.
     * @param promptTokens the measured mean prompt length (the template adds a few tokens to the profile's).
     * @param completed requests that succeeded.
     * @param failed requests that failed.
     * @param ttftMeanMs measured mean TTFT.
     * @param ttftP99Ms measured p99 TTFT.
     * @param e2eMeanMs measured mean request latency.
     * @param e2eP99Ms measured p99 request latency.
     */
    public record Stage(double ratePerS, double durationS, int promptTokens, long completed, long failed,
        double ttftMeanMs, double ttftP99Ms, double e2eMeanMs, double e2eP99Ms)
    {
        /**
         * @param outputTokens the output length.
         * @return the mean inter-token latency, derived as the data's README says: (E2E - TTFT) / (output - 1).
         */
        public double itlMeanMs(final int outputTokens)
        {
            return (e2eMeanMs - ttftMeanMs) / Math.max(1, outputTokens - 1);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * @param dir an experiment directory.
     * @return the experiment.
     * @throws IOException if a file is missing or malformed (the message names it).
     */
    public static BlisExperiment read(final Path dir) throws IOException
    {
        final Map<String, String> config = new HashMap<>();
        for (final String line : Files.readAllLines(dir.resolve("exp-config.yaml")))
        {
            final int colon = line.indexOf(':');
            if (colon > 0)
            {
                config.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
            }
        }
        final JsonNode profile = JSON.readTree(dir.resolve("profile.yaml").toFile());
        final JsonNode prefix = profile.at("/data/shared_prefix");
        final List<Stage> stages = new ArrayList<>();
        final JsonNode load = profile.at("/load/stages");
        for (int i = 0; i < load.size(); i++)
        {
            final JsonNode measured = JSON.readTree(dir.resolve("results").resolve("stage_" + i +
                "_lifecycle_metrics.json").toFile());
            final JsonNode ok = measured.path("successes");
            final JsonNode latency = ok.path("latency");
            stages.add(new Stage(load.get(i).path("rate").asDouble(), load.get(i).path("duration").asDouble(),
                (int)Math.round(ok.at("/prompt_len/mean").asDouble()), ok.path("count").asLong(),
                measured.at("/failures/count").asLong(),
                latency.at("/time_to_first_token/mean").asDouble() * 1e3,
                latency.at("/time_to_first_token/p99").asDouble() * 1e3,
                latency.at("/request_latency/mean").asDouble() * 1e3,
                latency.at("/request_latency/p99").asDouble() * 1e3));
        }
        return new BlisExperiment(dir.getFileName().toString(), config.get("model"),
            Integer.parseInt(config.get("tensor_parallelism")), Integer.parseInt(config.get("max_model_len")),
            Integer.parseInt(config.get("max_num_batched_tokens")), Integer.parseInt(config.get("max_num_seqs")),
            prefix.path("num_unique_system_prompts").asInt(), prefix.path("num_users_per_system_prompt").asInt(),
            prefix.path("system_prompt_len").asInt(), prefix.path("output_len").asInt(), List.copyOf(stages));
    }

    /**
     * @param data a directory of experiment directories.
     * @param modelSubstring what the wanted experiments' directory names contain (the model, e.g.
     *     {@code llama-2-7b}).
     * @return those experiments, sorted by name.
     * @throws IOException if one cannot be read (the message names the file).
     */
    public static List<BlisExperiment> readAll(final Path data, final String modelSubstring) throws IOException
    {
        final List<BlisExperiment> experiments = new ArrayList<>();
        try (java.util.stream.Stream<Path> dirs = Files.list(data))
        {
            for (final Path dir : dirs.sorted().toList())
            {
                if (Files.isDirectory(dir) && dir.getFileName().toString().contains(modelSubstring))
                {
                    experiments.add(read(dir));
                }
            }
        }
        return experiments;
    }

    /**
     * @param replacement the stages to keep.
     * @return this experiment with only those stages.
     */
    public BlisExperiment withStages(final List<Stage> replacement)
    {
        return new BlisExperiment(name, model, tensorParallel, maxModelLen, maxNumBatchedTokens, maxNumSeqs,
            systemPrompts, usersPerSystemPrompt, systemPromptTokens, outputTokens, List.copyOf(replacement));
    }

    /**
     * @return true when more than 5% of some stage's requests failed: the server was overloaded (the BLIS reasoning
     *     runs), so the measured latencies are of the survivors; such a run is a check of overload, not a fit target.
     */
    public boolean overloaded()
    {
        for (final Stage stage : stages)
        {
            if (stage.failed() > 0.05 * (stage.completed() + stage.failed()))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the workload's kind, from the directory name ({@code general}, {@code codegen}, ...).
     */
    public String workloadKind()
    {
        return name.substring(name.lastIndexOf('-') + 1);
    }
}
