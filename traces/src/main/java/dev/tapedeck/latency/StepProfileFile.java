package dev.tapedeck.latency;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A step profile in a file ({@code --step-profile FILE}), as {@code inspect fit} writes it: the step model's
 * coefficients, the modelled frontend delay, and where they come from.
 * <pre>
 * {"schema":"tapedeck-step-profile/1","name":"llama-2-7b-fitted","base_us":5970.8,"prefill_token_us":40.2,
 *  "decode_request_us":59.6,"context_kilo_token_us":1.0,"jitter":0,"frontend_delay_us":0,
 *  "source":"fitted by tapedeck inspect fit ...","provenance":{...}}
 * </pre>
 * or, for the physics model ({@code inspect fit --roofline}), the deployment and its corrections instead of the four
 * linear coefficients:
 * <pre>
 * {"schema":"tapedeck-step-profile/1","name":"llama-2-7b-tp1-h100","model":{"name":"meta-llama/Llama-2-7b-hf",
 *  "num_hidden_layers":32,...},"gpu":"H100","tensor_parallel_size":1,"roofline":{"step_us":161.8,"layer_us":10.3,
 *  "request_us":3.0,"compute":1.0,"weights":1.38,"kv":1.17,"all_reduce_link":1.43,"all_reduce_us":2.2,
 *  "experts":1.37},"jitter":0,"frontend_delay_us":14068,"frontend_delay_jitter":0.5,"source":"...",
 *  "provenance":{...}}
 * </pre>
 * Stateless; thread safe.
 */
public final class StepProfileFile
{
    /** The schema name written and required. */
    public static final String SCHEMA = "tapedeck-step-profile/1";

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private StepProfileFile()
    {
    }

    /**
     * A profile read from a file.
     *
     * @param coefficients the linear step model, or null for a physics profile.
     * @param frontendDelayNs the modelled frontend delay ({@code --frontend-delay} when not given on the command line).
     * @param provenance how it was made (free-form; empty when the file has none).
     * @param roofline the physics profile, or null for a linear one.
     */
    public record Loaded(StepCoefficients coefficients, long frontendDelayNs, JsonNode provenance,
        RooflineProfile roofline)
    {
    }

    private static final String[] ROOFLINE_FIELDS = {"step_us", "layer_us", "request_us", "compute", "weights", "kv",
        "all_reduce_link", "all_reduce_us", "experts"};

    /**
     * @param path the file.
     * @return the profile.
     * @throws IOException naming the file when it cannot be read or is not a step profile.
     */
    public static Loaded read(final Path path) throws IOException
    {
        final JsonNode root;
        try
        {
            root = JSON.readTree(path.toFile());
        }
        catch (final JsonProcessingException ex)
        {
            throw new IOException(path + ": not valid JSON: " + ex.getOriginalMessage(), ex);
        }
        if (null == root || !SCHEMA.equals(root.path("schema").asText()))
        {
            throw new IOException(path + ": not a step profile (schema must be " + SCHEMA + ")");
        }
        try
        {
            final long frontendDelayNs = Math.round(root.path("frontend_delay_us").asDouble(0) * 1000);
            if (root.has("roofline"))
            {
                return new Loaded(null, frontendDelayNs, root.path("provenance"), roofline(root, path,
                    frontendDelayNs));
            }
            return new Loaded(new StepCoefficients(required(root, "name", path).asText(),
                required(root, "base_us", path).asDouble(), required(root, "prefill_token_us", path).asDouble(),
                required(root, "decode_request_us", path).asDouble(),
                required(root, "context_kilo_token_us", path).asDouble(), root.path("jitter").asDouble(0),
                root.path("source").asText(path.toString())), frontendDelayNs, root.path("provenance"), null);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException(path + ": " + ex.getMessage(), ex);
        }
    }

    private static RooflineProfile roofline(final JsonNode root, final Path path, final long frontendDelayNs)
        throws IOException
    {
        final JsonNode m = required(root, "model", path);
        final ModelArchitecture model = ModelArchitecture.fromConfig(m, required(m, "name", path).asText(),
            path.toString(), "the step profile's model");
        final JsonNode r = required(root, "roofline", path);
        final double[] values = new double[ROOFLINE_FIELDS.length];
        for (int k = 0; k < values.length; k++)
        {
            values[k] = required(r, ROOFLINE_FIELDS[k], path).asDouble();
        }
        final String name = required(root, "name", path).asText();
        return new RooflineProfile(name, model, GpuSpec.lookup(required(root, "gpu", path).asText()),
            required(root, "tensor_parallel_size", path).asInt(),
            RooflineCoefficients.of(name, values).withJitter(root.path("jitter").asDouble(0)), frontendDelayNs,
            root.path("frontend_delay_jitter").asDouble(0), root.path("source").asText(path.toString()));
    }

    private static JsonNode required(final JsonNode root, final String field, final Path path) throws IOException
    {
        final JsonNode value = root.get(field);
        if (null == value || value.isNull())
        {
            throw new IOException(path + ": the step profile has no " + field);
        }
        return value;
    }

    /**
     * @param path where to write.
     * @param profile the physics profile (its frontend delay included).
     * @param provenance how it was made.
     * @throws IOException if the file cannot be written.
     */
    public static void write(final Path path, final RooflineProfile profile, final ObjectNode provenance)
        throws IOException
    {
        final ObjectNode root = JSON.createObjectNode();
        root.put("schema", SCHEMA);
        root.put("name", profile.name());
        final ModelArchitecture a = profile.model();
        final ObjectNode m = root.putObject("model");
        m.put("name", a.name());
        m.put("num_hidden_layers", a.layers());
        m.put("hidden_size", a.hiddenSize());
        m.put("num_attention_heads", a.heads());
        m.put("num_key_value_heads", a.kvHeads());
        m.put("head_dim", a.headDim());
        m.put("intermediate_size", a.intermediateSize());
        m.put("vocab_size", a.vocabSize());
        m.put("num_experts", a.experts());
        m.put("num_experts_per_tok", a.expertsPerToken());
        m.put("tie_word_embeddings", a.tiedEmbeddings());
        m.put("parameters", a.parameters());
        if (a.contextLength() > 0)
        {
            m.put("max_position_embeddings", a.contextLength());
        }
        root.put("gpu", profile.gpu().name());
        root.put("tensor_parallel_size", profile.tensorParallel());
        final ObjectNode r = root.putObject("roofline");
        final double[] values = profile.coefficients().values();
        for (int k = 0; k < values.length; k++)
        {
            r.put(ROOFLINE_FIELDS[k], values[k]);
        }
        root.put("jitter", profile.coefficients().jitter());
        root.put("frontend_delay_us", profile.frontendDelayNs() / 1000.0);
        root.put("frontend_delay_jitter", profile.frontendDelayJitter());
        root.put("source", profile.source());
        root.set("provenance", provenance);
        writeFile(path, root);
    }

    /**
     * @param path where to write.
     * @param coefficients the step model.
     * @param frontendDelayNs the modelled frontend delay.
     * @param provenance how it was made.
     * @throws IOException if the file cannot be written.
     */
    public static void write(final Path path, final StepCoefficients coefficients, final long frontendDelayNs,
        final ObjectNode provenance) throws IOException
    {
        final ObjectNode root = JSON.createObjectNode();
        root.put("schema", SCHEMA);
        root.put("name", coefficients.name());
        root.put("base_us", coefficients.baseUs());
        root.put("prefill_token_us", coefficients.prefillTokenUs());
        root.put("decode_request_us", coefficients.decodeRequestUs());
        root.put("context_kilo_token_us", coefficients.contextKiloTokenUs());
        root.put("jitter", coefficients.jitter());
        root.put("frontend_delay_us", frontendDelayNs / 1000.0);
        root.put("source", coefficients.source());
        root.set("provenance", provenance);
        writeFile(path, root);
    }

    private static void writeFile(final Path path, final ObjectNode root) throws IOException
    {
        final Path parent = path.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        JSON.writeValue(path.toFile(), root);
    }
}
