package dev.tapedeck.nixl.sidechannel;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * The handshake compatibility hash of vLLM's NixlConnector, computed as vLLM computes it, so a tapedeck prefill and a
 * vLLM decode (or the reverse) agree on it for the same inputs.
 * <p>
 * Source read: {@code vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py} at vLLM commit
 * {@code 002a1057e9ae674d7bdc9c4be95bc29d65d2e808} ({@code NIXL_CONNECTOR_VERSION = 2}),
 * {@code compute_nixl_compatibility_hash(vllm_config, attn_backend_name)}, and {@code hash_factors} in
 * {@code vllm/config/utils.py} (commit {@code 00ba1f410053694bf9329569b1ff644448e2f6ba}). The hash is
 * {@code hashlib.sha256(json.dumps(factors, sort_keys=True).encode()).hexdigest()} over the dict
 * <pre>
 * vllm_version, nixl_connector_version, model, dtype (str(torch dtype), e.g. "torch.bfloat16"), num_kv_heads,
 * head_size, num_hidden_layers, attn_backend_name, cache_dtype (e.g. "auto")
 * </pre>
 * {@code json.dumps} defaults: keys sorted, separators {@code ", "} and {@code ": "}, {@code ensure_ascii=True}
 * (every non-ASCII character as {@code \\uXXXX}, surrogate pairs beyond the BMP). Newer vLLM
 * ({@code v1/nixl/metadata.py}, connector version 12) adds {@code is_hma_enabled}, {@code speculative_config} and
 * {@code transfer_mode}; this class computes the version-2 set.
 * <p>
 * Stateless; thread safe.
 */
public final class CompatibilityHash
{
    private CompatibilityHash()
    {
    }

    /**
     * The factors vLLM hashes.
     *
     * @param vllmVersion {@code vllm.__version__}, e.g. {@code 0.11.1}.
     * @param connectorVersion {@code NIXL_CONNECTOR_VERSION}, 2 in the commit read.
     * @param model {@code model_config.model}.
     * @param dtype {@code str(model_config.dtype)}, e.g. {@code torch.bfloat16}.
     * @param numKvHeads total KV heads.
     * @param headSize head size.
     * @param numHiddenLayers total hidden layers.
     * @param attnBackendName the attention backend's name, e.g. {@code FLASH_ATTN}.
     * @param cacheDtype {@code str(cache_config.cache_dtype)}, e.g. {@code auto}.
     */
    public record Inputs(String vllmVersion, int connectorVersion, String model, String dtype, int numKvHeads,
        int headSize, int numHiddenLayers, String attnBackendName, String cacheDtype)
    {
        /**
         * Checks that no string is null.
         */
        public Inputs
        {
            Objects.requireNonNull(vllmVersion, "vllmVersion");
            Objects.requireNonNull(model, "model");
            Objects.requireNonNull(dtype, "dtype");
            Objects.requireNonNull(attnBackendName, "attnBackendName");
            Objects.requireNonNull(cacheDtype, "cacheDtype");
        }
    }

    /**
     * @param inputs the factors.
     * @return the JSON text vLLM hashes, byte for byte what Python's {@code json.dumps(factors, sort_keys=True)}
     *     prints.
     */
    public static String canonicalJson(final Inputs inputs)
    {
        final StringBuilder out = new StringBuilder(256);
        out.append('{');
        appendKey(out, "attn_backend_name", true).append(quote(inputs.attnBackendName()));
        appendKey(out, "cache_dtype", false).append(quote(inputs.cacheDtype()));
        appendKey(out, "dtype", false).append(quote(inputs.dtype()));
        appendKey(out, "head_size", false).append(inputs.headSize());
        appendKey(out, "model", false).append(quote(inputs.model()));
        appendKey(out, "nixl_connector_version", false).append(inputs.connectorVersion());
        appendKey(out, "num_hidden_layers", false).append(inputs.numHiddenLayers());
        appendKey(out, "num_kv_heads", false).append(inputs.numKvHeads());
        appendKey(out, "vllm_version", false).append(quote(inputs.vllmVersion()));
        return out.append('}').toString();
    }

    /**
     * @param inputs the factors.
     * @return the SHA-256 of {@link #canonicalJson}, as 64 lower-case hex digits (vLLM's
     *     {@code compatibility_hash}).
     */
    public static String compute(final Inputs inputs)
    {
        try
        {
            final byte[] digest = MessageDigest.getInstance("SHA-256")
                .digest(canonicalJson(inputs).getBytes(StandardCharsets.UTF_8));
            final StringBuilder hex = new StringBuilder(64);
            for (final byte b : digest)
            {
                hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
            }
            return hex.toString();
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }

    private static StringBuilder appendKey(final StringBuilder out, final String key, final boolean first)
    {
        if (!first)
        {
            out.append(", ");
        }
        return out.append('"').append(key).append("\": ");
    }

    /**
     * @param value a string.
     * @return it as Python's {@code json.dumps} writes a string with {@code ensure_ascii=True}.
     */
    static String quote(final String value)
    {
        final StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            switch (c)
            {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                case '\b':
                    out.append("\\b");
                    break;
                case '\f':
                    out.append("\\f");
                    break;
                default:
                    if (c < 0x20 || c > 0x7e)
                    {
                        out.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }
}
