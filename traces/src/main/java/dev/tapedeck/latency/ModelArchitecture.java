package dev.tapedeck.latency;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The shape of a transformer that sets what one engine step costs and how much KV one token takes: the fields of a
 * Hugging Face {@code config.json}. The catalog ({@link #KNOWN}) holds well-known models' published configurations;
 * {@link #read(Path)} takes any decoder-only {@code config.json} (Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE
 * field names).
 * <p>
 * Immutable; thread safe.
 *
 * @param name the model id.
 * @param layers {@code num_hidden_layers}.
 * @param hiddenSize {@code hidden_size}.
 * @param heads {@code num_attention_heads}.
 * @param kvHeads {@code num_key_value_heads}.
 * @param headDim {@code head_dim} (default {@code hidden_size / num_attention_heads}).
 * @param intermediateSize the MLP's width ({@code intermediate_size}; an expert's, {@code moe_intermediate_size}, for a
 *     mixture of experts).
 * @param vocabSize {@code vocab_size}.
 * @param experts routed experts per layer ({@code num_local_experts} / {@code num_experts}); 0 for a dense model.
 * @param expertsPerToken experts each token is routed to ({@code num_experts_per_tok}); 0 for a dense model.
 * @param tiedEmbeddings {@code tie_word_embeddings}: the LM head reuses the embedding matrix.
 * @param parameters the published parameter count (weights are {@code parameters x dtype bytes}).
 * @param contextLength the context length vLLM derives from the config when no {@code --max-model-len} is given
 *     ({@code max_position_embeddings} or its aliases, times a {@code rope_scaling} factor); 0 when the config gives
 *     none.
 */
public record ModelArchitecture(String name, int layers, int hiddenSize, int heads, int kvHeads, int headDim,
    int intermediateSize, int vocabSize, int experts, int expertsPerToken, boolean tiedEmbeddings, long parameters,
    int contextLength)
{
    /** Built-in models, from their published {@code config.json}; looked up by {@link #lookup(String)}. */
    public static final List<ModelArchitecture> KNOWN = List.of(
        dense("Qwen/Qwen3-0.6B", 28, 1024, 16, 8, 128, 3072, 151_936, true, 751_632_384L, 40_960),
        dense("Qwen/Qwen3-8B", 36, 4096, 32, 8, 128, 12_288, 151_936, false, 8_190_735_360L, 40_960),
        dense("Qwen/Qwen3-14B", 40, 5120, 40, 8, 128, 17_408, 151_936, false, 14_768_307_200L, 40_960),
        dense("Qwen/Qwen3-32B", 64, 5120, 64, 8, 128, 25_600, 151_936, false, 32_762_123_264L, 40_960),
        new ModelArchitecture("Qwen/Qwen3-30B-A3B", 48, 2048, 32, 4, 128, 768, 151_936, 128, 8, false,
            30_532_122_624L, 40_960),
        new ModelArchitecture("Qwen/Qwen3-30B-A3B-Instruct-2507", 48, 2048, 32, 4, 128, 768, 151_936, 128, 8, false,
            30_532_122_624L, 262_144),
        dense("Qwen/Qwen2.5-7B", 28, 3584, 28, 4, 128, 18_944, 152_064, false, 7_615_616_512L, 131_072),
        dense("meta-llama/Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, 128_256, true, 1_235_814_400L, 131_072),
        dense("meta-llama/Llama-3.2-3B", 28, 3072, 24, 8, 128, 8192, 128_256, true, 3_212_749_824L, 131_072),
        dense("meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 128, 14_336, 128_256, false, 8_030_261_248L, 131_072),
        dense("meta-llama/Llama-3.1-70B", 80, 8192, 64, 8, 128, 28_672, 128_256, false, 70_553_706_496L, 131_072),
        dense("meta-llama/Llama-3.3-70B", 80, 8192, 64, 8, 128, 28_672, 128_256, false, 70_553_706_496L, 131_072),
        dense("meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 128, 11_008, 32_000, false, 6_738_415_616L, 4096),
        dense("meta-llama/Llama-2-13b-hf", 40, 5120, 40, 40, 128, 13_824, 32_000, false, 13_015_864_320L, 4096),
        dense("meta-llama/Llama-2-70b-hf", 80, 8192, 64, 8, 128, 28_672, 32_000, false, 68_976_648_192L, 4096),
        dense("codellama/CodeLlama-34b-hf", 48, 8192, 64, 8, 128, 22_016, 32_000, false, 33_743_970_304L, 16_384),
        dense("mistralai/Mistral-7B-v0.1", 32, 4096, 32, 8, 128, 14_336, 32_000, false, 7_241_732_096L, 32_768),
        new ModelArchitecture("mistralai/Mixtral-8x7B-v0.1", 32, 4096, 32, 8, 128, 14_336, 32_000, 8, 2, false,
            46_702_792_704L, 32_768));

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] SUFFIXES = {"-instruct-hf", "-chat-hf", "-instruct", "-chat", "-hf"};
    /** The config fields vLLM reads a model's context length from (it takes the smallest present). */
    private static final List<String> CONTEXT_FIELDS = List.of("max_position_embeddings", "n_positions",
        "max_seq_len", "seq_length", "model_max_length", "max_sequence_length", "max_seq_length", "seq_len");

    /**
     * Validates the shape.
     */
    public ModelArchitecture
    {
        if (layers <= 0 || hiddenSize <= 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0 || intermediateSize <= 0 ||
            vocabSize <= 0 || experts < 0 || expertsPerToken < 0 || expertsPerToken > experts || parameters <= 0 ||
            contextLength < 0)
        {
            throw new IllegalArgumentException("model '" + name + "': every dimension must be positive and " +
                "num_experts_per_tok at most the experts");
        }
    }

    private static ModelArchitecture dense(final String name, final int layers, final int hidden, final int heads,
        final int kvHeads, final int headDim, final int intermediate, final int vocab, final boolean tied,
        final long parameters, final int contextLength)
    {
        return new ModelArchitecture(name, layers, hidden, heads, kvHeads, headDim, intermediate, vocab, 0, 0, tied,
            parameters, contextLength);
    }

    /**
     * @param dtypeBytes bytes per KV element (2 for bf16/fp16, 1 for fp8).
     * @return KV bytes one token takes over all layers: 2 (K and V) x layers x kv heads x head dim x dtype bytes.
     */
    public long kvBytesPerToken(final int dtypeBytes)
    {
        return 2L * layers * kvHeads * headDim * dtypeBytes;
    }

    /**
     * @param tensorParallel GPUs the model is split over.
     * @return bf16 KV bytes one token takes on each GPU: KV heads shard over at most their number of GPUs (beyond it
     *     each GPU keeps a copy of one head).
     */
    public double kvBytesPerTokenPerGpu(final int tensorParallel)
    {
        return kvBytesPerToken(2) / (double)Math.min(tensorParallel, kvHeads);
    }

    /**
     * @param tensorParallel GPUs the model is split over.
     * @return bf16 weight bytes each GPU holds.
     */
    public long weightBytesPerGpu(final int tensorParallel)
    {
        return parameters * 2 / tensorParallel;
    }

    /**
     * @return weights of one layer's attention projections (Q, K, V, O).
     */
    public long attentionParametersPerLayer()
    {
        return (long)hiddenSize * headDim * (2L * heads + 2L * kvHeads);
    }

    /**
     * @return weights of one expert's (or the dense model's) gated MLP: gate, up and down projections.
     */
    public long mlpParametersPerExpert()
    {
        return 3L * hiddenSize * intermediateSize;
    }

    /**
     * @return the weights one token multiplies through, per layer (attention plus its routed experts' MLPs).
     */
    public long activeParametersPerLayer()
    {
        return attentionParametersPerLayer() + mlpParametersPerExpert() * Math.max(1, expertsPerToken);
    }

    /**
     * @return true for a mixture of experts.
     */
    public boolean moe()
    {
        return experts > 0;
    }

    /**
     * @param model a model id or path ({@code Qwen/Qwen3-8B}, {@code /models/Qwen3-8B},
     *     {@code meta-llama/Llama-3.1-8B-Instruct}, {@code codellama/CodeLlama-34b-Instruct-hf}).
     * @return its built-in architecture, or null: matched on the last path element, case-insensitively, with an
     *     {@code -Instruct}, {@code -chat} or {@code -hf} suffix ignored.
     */
    public static ModelArchitecture lookup(final String model)
    {
        if (null == model)
        {
            return null;
        }
        final String wanted = baseName(model);
        for (final ModelArchitecture known : KNOWN)
        {
            if (baseName(known.name).equals(wanted))
            {
                return known;
            }
        }
        return null;
    }

    private static String baseName(final String model)
    {
        String base = model.substring(model.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT);
        for (final String suffix : SUFFIXES)
        {
            if (base.endsWith(suffix))
            {
                base = base.substring(0, base.length() - suffix.length());
                break;
            }
        }
        return base;
    }

    /**
     * @param configJson a Hugging Face {@code config.json}.
     * @return its architecture, named by the file's {@code _name_or_path} or the file's parent folder; the parameter
     *     count is computed from the dimensions (embeddings, attention, MLPs or experts and routers).
     * @throws IOException naming the file when it cannot be read or lacks a dimension.
     */
    public static ModelArchitecture read(final Path configJson) throws IOException
    {
        final JsonNode root;
        try
        {
            root = JSON.readTree(configJson.toFile());
        }
        catch (final JsonProcessingException ex)
        {
            throw new IOException(configJson + ": not valid JSON: " + ex.getOriginalMessage(), ex);
        }
        final Path parent = configJson.toAbsolutePath().getParent();
        return fromConfig(root, root.path("_name_or_path").asText(null == parent || null == parent.getFileName() ?
            configJson.toString() : parent.getFileName().toString()), configJson.toString(), "config.json");
    }

    /**
     * @param root the fields of a Hugging Face {@code config.json} (its {@code text_config} when it has one), and
     *     optionally {@code parameters}, the published count; without it the count is computed from the dimensions
     *     (embeddings, attention, MLPs or experts and routers).
     * @param name the model's name.
     * @param file the file it comes from, for messages.
     * @param what what in the file holds it, for messages ({@code config.json}, {@code the step profile's model}).
     * @return the architecture.
     * @throws IOException naming the file when a dimension is missing or not positive.
     */
    public static ModelArchitecture fromConfig(final JsonNode root, final String name, final String file,
        final String what) throws IOException
    {
        final JsonNode text = root.has("text_config") ? root.get("text_config") : root;
        final String where = file + ": " + what;
        final int hidden = required(text, where, "hidden_size");
        final int heads = required(text, where, "num_attention_heads");
        if (heads <= 0)
        {
            throw new IOException(file + ": num_attention_heads must be positive, got " + heads);
        }
        final int experts = text.path("num_local_experts").asInt(text.path("num_experts").asInt(0));
        final int intermediate = experts > 0 && text.has("moe_intermediate_size") ?
            text.get("moe_intermediate_size").asInt() : required(text, where, "intermediate_size");
        final int layers = required(text, where, "num_hidden_layers");
        final int kvHeads = text.path("num_key_value_heads").asInt(heads);
        final int headDim = text.path("head_dim").isNumber() ? text.get("head_dim").asInt() : hidden / heads;
        final int vocab = required(text, where, "vocab_size");
        final int perToken = experts > 0 ? text.path("num_experts_per_tok").asInt(2) : 0;
        final boolean tied = text.path("tie_word_embeddings")
            .asBoolean(root.path("tie_word_embeddings").asBoolean(false));
        final long attention = (long)hidden * headDim * (2L * heads + 2L * kvHeads);
        final long mlp = 3L * hidden * intermediate * Math.max(1, experts) + (long)hidden * experts;
        final long parameters = root.path("parameters").isNumber() ? root.get("parameters").asLong() :
            layers * (attention + mlp) + (long)vocab * hidden * (tied ? 1 : 2);
        try
        {
            return new ModelArchitecture(name, layers, hidden, heads, kvHeads, headDim, intermediate, vocab, experts,
                perToken, tied, parameters, contextLength(text));
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IOException(file + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * vLLM's derivation of the default {@code max_model_len}: the smallest of the length fields the config has, times
     * the {@code rope_scaling} factor for a scaling that extends the context (YaRN from its original length; not
     * {@code llama3}, {@code su} or {@code longrope}, whose length fields already hold the extended context).
     */
    private static int contextLength(final JsonNode text)
    {
        long length = Long.MAX_VALUE;
        for (final String field : CONTEXT_FIELDS)
        {
            if (text.path(field).isNumber() && text.get(field).asLong() > 0)
            {
                length = Math.min(length, text.get(field).asLong());
            }
        }
        if (Long.MAX_VALUE == length)
        {
            return 0;
        }
        final JsonNode scaling = text.path("rope_scaling");
        final String type = scaling.path("rope_type").asText(scaling.path("type").asText("default"));
        if (scaling.path("factor").isNumber() && !List.of("default", "llama3", "su", "longrope").contains(type))
        {
            if ("yarn".equals(type) && scaling.path("original_max_position_embeddings").isNumber())
            {
                length = scaling.get("original_max_position_embeddings").asLong();
            }
            length = (long)(length * scaling.get("factor").asDouble());
        }
        return (int)Math.min(Integer.MAX_VALUE, length);
    }

    private static int required(final JsonNode node, final String where, final String field) throws IOException
    {
        final JsonNode value = node.get(field);
        if (null == value || !value.isNumber())
        {
            throw new IOException(where + " has no numeric " + field);
        }
        return value.asInt();
    }

    /**
     * @return names of the built-in models, for error messages.
     */
    public static List<String> knownNames()
    {
        return KNOWN.stream().map(ModelArchitecture::name).toList();
    }
}
