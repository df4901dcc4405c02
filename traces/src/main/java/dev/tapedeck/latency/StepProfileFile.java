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
 * {"schema":"tapedeck-step-profile/1","name":"llama-2-7b-tp1-h100","base_us":5970.8,"prefill_token_us":40.2,
 *  "decode_request_us":59.6,"context_kilo_token_us":1.0,"jitter":0,"frontend_delay_us":0,
 *  "source":"fitted by tapedeck inspect fit ...","provenance":{...}}
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
     * @param coefficients the step model.
     * @param frontendDelayNs the modelled frontend delay ({@code --frontend-delay} when not given on the command line).
     * @param provenance how it was made (free-form; empty when the file has none).
     */
    public record Loaded(StepCoefficients coefficients, long frontendDelayNs, JsonNode provenance)
    {
    }

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
            return new Loaded(new StepCoefficients(required(root, "name", path).asText(),
                required(root, "base_us", path).asDouble(), required(root, "prefill_token_us", path).asDouble(),
                required(root, "decode_request_us", path).asDouble(),
                required(root, "context_kilo_token_us", path).asDouble(), root.path("jitter").asDouble(0),
                root.path("source").asText(path.toString())),
                Math.round(root.path("frontend_delay_us").asDouble(0) * 1000), root.path("provenance"));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException(path + ": " + ex.getMessage(), ex);
        }
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
        final Path parent = path.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        JSON.writeValue(path.toFile(), root);
    }
}
