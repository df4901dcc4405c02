package dev.tapedeck.kvtransfer;

import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * What a {@link NixlConnector} runs with: vLLM's {@code --kv-transfer-config} (connector, role, engine id, failure
 * policy, handshake check) and tapedeck's data-plane flags.
 *
 * @param role {@code kv_producer}, {@code kv_consumer} or {@code kv_both}.
 * @param engineId this engine's id ({@code remote_engine_id} to its decodes; {@code _dp<rank>} is appended per rank).
 * @param sideChannelHost the address the side channel binds and prefills advertise as {@code remote_host}.
 * @param sideChannelPort the side channel's port for rank 0 (rank r uses this plus r; 0 picks a free one).
 * @param dataPlane {@code auto}, {@code noop}, {@code tcp}, {@code ucx} or {@code nixl}.
 * @param shape the model's KV shape: what the handshake's compatibility hash covers.
 * @param kvBytesPerToken the model's KV bytes per token (the shape's unless {@code --kv-bytes-per-token} says).
 * @param byteScale the fraction of those bytes a real plane moves; 0 picks the largest that keeps the pool within
 *     {@code poolMaxBytes}.
 * @param poolMaxBytes the largest pool {@code byteScale=0} allows.
 * @param verify whether a decode checks every block it pulled.
 * @param recomputeOnFailure vLLM's {@code kv_load_failure_policy}: true for {@code recompute}, false for {@code fail}.
 * @param enforceHandshakeCompat whether a remote's compatibility hash must match ours.
 * @param abortTimeoutNs how long a prefill keeps blocks no notification came for
 *     ({@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT}).
 * @param handshakeTimeoutMs how long a side-channel exchange may take.
 * @param transferLatencyNs modelled fixed cost of a transfer ({@code noop} only).
 * @param transferBytesPerSecond modelled bandwidth ({@code noop} only); 0 for none.
 * @param transferNsPerToken modelled cost per pulled token ({@code noop} only; llm-d's
 *     {@code --kv-cache-transfer-time-per-token}).
 */
public record KvTransferSettings(String role, String engineId, String sideChannelHost, int sideChannelPort,
    String dataPlane, ModelShape shape, long kvBytesPerToken, double byteScale, long poolMaxBytes, boolean verify,
    boolean recomputeOnFailure, boolean enforceHandshakeCompat, long abortTimeoutNs, int handshakeTimeoutMs,
    long transferLatencyNs, double transferBytesPerSecond, long transferNsPerToken)
{
    /** vLLM's {@code VLLM_NIXL_SIDE_CHANNEL_PORT} default. */
    public static final int DEFAULT_SIDE_CHANNEL_PORT = 5600;
    /** vLLM's {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT} default: 480 s. */
    public static final long DEFAULT_ABORT_TIMEOUT_NS = 480_000_000_000L;
    /** Qwen3-8B's KV shape (36 layers, 8 KV heads of 128, bfloat16), tapedeck's default model. */
    public static final ModelShape DEFAULT_SHAPE = new ModelShape(36, 8, 128, 2);

    /**
     * The model's KV-cache shape.
     *
     * @param layers hidden layers.
     * @param kvHeads KV heads.
     * @param headSize head size.
     * @param dtypeBytes bytes per KV element (2 for bfloat16).
     */
    public record ModelShape(int layers, int kvHeads, int headSize, int dtypeBytes)
    {
        /**
         * Checks the values.
         */
        public ModelShape
        {
            if (layers < 1 || kvHeads < 1 || headSize < 1 || dtypeBytes < 1)
            {
                throw new IllegalArgumentException("a KV shape needs positive layers, KV heads, head size and dtype " +
                    "bytes, got " + layers + ":" + kvHeads + ":" + headSize + ":" + dtypeBytes);
            }
        }

        /**
         * @return KV bytes per token: layers x KV heads x head size x 2 (K and V) x dtype bytes.
         */
        public long bytesPerToken()
        {
            return (long)layers * kvHeads * headSize * 2 * dtypeBytes;
        }

        /**
         * @return the dtype as vLLM prints it in the compatibility hash.
         */
        public String torchDtype()
        {
            return 4 == dtypeBytes ? "torch.float32" : 1 == dtypeBytes ? "torch.float8_e4m3fn" : "torch.bfloat16";
        }
    }
    /** The pool an automatic byte scale keeps within: 256 MiB. */
    public static final long DEFAULT_POOL_MAX_BYTES = 256L << 20;

    /**
     * Checks the values.
     */
    public KvTransferSettings
    {
        if (!"kv_producer".equals(role) && !"kv_consumer".equals(role) && !"kv_both".equals(role))
        {
            throw new IllegalArgumentException("kv_role must be kv_producer, kv_consumer or kv_both, got " + role);
        }
        java.util.Objects.requireNonNull(shape, "shape");
        if (kvBytesPerToken < 1 || byteScale < 0 || byteScale > 1 || poolMaxBytes < 8 || abortTimeoutNs < 1 ||
            handshakeTimeoutMs < 1 || transferLatencyNs < 0 || transferBytesPerSecond < 0 || transferNsPerToken < 0)
        {
            throw new IllegalArgumentException("invalid KV transfer settings: " + this);
        }
    }

    /**
     * Read vLLM's {@code --kv-transfer-config} JSON object (already parsed): {@code kv_connector} must be
     * {@code NixlConnector}, {@code kv_role} is required; {@code engine_id} defaults to a random UUID as in vLLM;
     * {@code kv_load_failure_policy} ({@code fail} by default, as vLLM) and
     * {@code kv_connector_extra_config.enforce_handshake_compat} are honoured; other keys are accepted and ignored.
     *
     * @param config the JSON object.
     * @param defaults the data-plane flags and everything not in the JSON.
     * @return the settings.
     * @throws IllegalArgumentException naming the key that is wrong.
     */
    public static KvTransferSettings fromConfig(final Map<?, ?> config, final KvTransferSettings defaults)
    {
        final Object connector = config.get("kv_connector");
        if (!"NixlConnector".equals(connector))
        {
            throw new IllegalArgumentException("--kv-transfer-config: kv_connector " + connector + " is not " +
                "simulated; tapedeck simulates NixlConnector");
        }
        final Object role = config.get("kv_role");
        if (!(role instanceof String))
        {
            throw new IllegalArgumentException("--kv-transfer-config: kv_role is required (kv_producer, " +
                "kv_consumer or kv_both)");
        }
        final Object engineId = config.get("engine_id");
        final Object policy = null == config.get("kv_load_failure_policy") ? "fail" :
            config.get("kv_load_failure_policy");
        if (!"fail".equals(policy) && !"recompute".equals(policy))
        {
            throw new IllegalArgumentException("--kv-transfer-config: kv_load_failure_policy must be recompute or " +
                "fail, got " + policy);
        }
        boolean enforce = defaults.enforceHandshakeCompat();
        final Object extra = config.get("kv_connector_extra_config");
        if (extra instanceof Map && ((Map<?, ?>)extra).containsKey("enforce_handshake_compat"))
        {
            final Object value = ((Map<?, ?>)extra).get("enforce_handshake_compat");
            enforce = value instanceof Boolean ? (Boolean)value :
                !"false".equals(String.valueOf(value).toLowerCase(Locale.ROOT));
        }
        return new KvTransferSettings((String)role,
            null == engineId ? UUID.randomUUID().toString() : String.valueOf(engineId),
            defaults.sideChannelHost(), defaults.sideChannelPort(), defaults.dataPlane(), defaults.shape(),
            defaults.kvBytesPerToken(),
            defaults.byteScale(), defaults.poolMaxBytes(), defaults.verify(), "recompute".equals(policy), enforce,
            defaults.abortTimeoutNs(), defaults.handshakeTimeoutMs(), defaults.transferLatencyNs(),
            defaults.transferBytesPerSecond(), defaults.transferNsPerToken());
    }

    /**
     * @return true when this engine may prefill for a remote decode.
     */
    public boolean isProducer()
    {
        return !"kv_consumer".equals(role);
    }

    /**
     * @return true when this engine may pull a remote prefill's KV.
     */
    public boolean isConsumer()
    {
        return !"kv_producer".equals(role);
    }

    /**
     * @param rank a data-parallel rank.
     * @return these settings for that rank: engine id {@code <id>_dp<rank>} (as vLLM names data-parallel engines) and
     *     side-channel port plus the rank; rank 0 keeps both.
     */
    public KvTransferSettings forRank(final int rank)
    {
        if (0 == rank)
        {
            return this;
        }
        return new KvTransferSettings(role, engineId + "_dp" + rank, sideChannelHost,
            0 == sideChannelPort ? 0 : sideChannelPort + rank, dataPlane, shape, kvBytesPerToken, byteScale,
            poolMaxBytes, verify, recomputeOnFailure, enforceHandshakeCompat, abortTimeoutNs, handshakeTimeoutMs,
            transferLatencyNs, transferBytesPerSecond, transferNsPerToken);
    }

    /**
     * @param tokens tokens pulled.
     * @return the modelled transfer time of that many tokens' KV, in nanoseconds.
     */
    public long modelledTransferNs(final long tokens)
    {
        final double bytes = (double)tokens * kvBytesPerToken;
        final double bandwidthNs = transferBytesPerSecond > 0 ? bytes / transferBytesPerSecond * 1e9 : 0;
        return transferLatencyNs + (long)bandwidthNs + tokens * transferNsPerToken;
    }
}
