package dev.tapedeck.cli;

import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import picocli.CommandLine;

import dev.tapedeck.latency.ModelArchitecture;
import dev.tapedeck.kvtransfer.KvTransferSettings;
import dev.tapedeck.latency.Durations;

/**
 * Prefill/decode disaggregation flags shared by {@code serve} and {@code play}: vLLM's {@code --kv-transfer-config}
 * and the NIXL side channel's environment as flags, and tapedeck's data plane.
 */
final class KvTransferOptions
{
    @CommandLine.Option(names = "--kv-transfer-config", paramLabel = "JSON",
        description = "vLLM's KV transfer config, e.g. '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'" +
            ": NixlConnector turns on P/D disaggregation (engine_id, kv_load_failure_policy and " +
            "kv_connector_extra_config.enforce_handshake_compat are honoured); OffloadingConnector " +
            "(cpu_bytes_to_use or num_cpu_blocks, block_size) and LMCacheConnectorV1 " +
            "(lmcache.max_local_cpu_size) add a CPU KV tier (docs/offload.md).")
    String config;

    @CommandLine.Option(names = "--kv-data-plane", paramLabel = "auto|noop|tcp|ucx|nixl", defaultValue = "noop",
        description = "How KV bytes move: noop models the transfer time; tcp (Java), ucx (native, needs libucx) " +
            "and nixl (needs libnixl_capi) move real bytes; auto takes the best that starts. A plane that cannot " +
            "start falls back to the next with a logged reason (default: ${DEFAULT-VALUE}).")
    String dataPlane;

    @CommandLine.Option(names = "--side-channel-port", paramLabel = "PORT",
        description = "NIXL side-channel port of rank 0 (rank r uses PORT + r; 0 picks a free one; default: " +
            "VLLM_NIXL_SIDE_CHANNEL_PORT or 5600).")
    Integer sideChannelPort;

    @CommandLine.Option(names = "--side-channel-host", paramLabel = "HOST",
        description = "Address the side channel and the tcp plane bind and prefills advertise as remote_host " +
            "(default: VLLM_NIXL_SIDE_CHANNEL_HOST or 127.0.0.1).")
    String sideChannelHost;

    @CommandLine.Option(names = "--kv-model-shape", paramLabel = "LAYERS:KV_HEADS:HEAD_SIZE[:DTYPE_BYTES]",
        description = "The model's KV shape, for KV bytes per token (layers x KV heads x head size x 2 x dtype " +
            "bytes, unless --kv-bytes-per-token) and the handshake hash (default: built in for common models, else " +
            "Qwen3-8B's 36:8:128:2).")
    String modelShape;

    @CommandLine.Option(names = "--kv-byte-scale", paramLabel = "FRACTION", defaultValue = "0",
        description = "Fraction of the real KV bytes a real plane moves; 0 picks the largest that keeps each " +
            "engine's pool within 256 MiB (default: ${DEFAULT-VALUE}).")
    double byteScale;

    @CommandLine.Option(names = "--kv-verify", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Check every pulled block's content (default: ${DEFAULT-VALUE}).")
    boolean verify;

    @CommandLine.Option(names = "--kv-transfer-latency", paramLabel = "DURATION", defaultValue = "1ms",
        description = "noop plane: fixed cost of a pull (default: ${DEFAULT-VALUE}).")
    String latency;

    @CommandLine.Option(names = "--kv-transfer-bandwidth", paramLabel = "GB/S", defaultValue = "25",
        description = "noop plane: modelled bandwidth in GB/s (1e9 bytes/s; 0 for none; default: ${DEFAULT-VALUE}).")
    double bandwidthGbps;

    @CommandLine.Option(names = "--kv-cache-transfer-latency", paramLabel = "MS",
        description = "llm-d-inference-sim's flag: noop plane's fixed pull time in ms (replaces the bandwidth model).")
    Double llmdLatencyMs;

    @CommandLine.Option(names = "--kv-cache-transfer-time-per-token", paramLabel = "MS",
        description = "llm-d-inference-sim's flag: noop plane's pull time per token in ms (replaces the bandwidth " +
            "model).")
    Double llmdMsPerToken;

    /**
     * @param model the served model (its built-in KV shape, if known).
     * @param bytesPerToken {@code --kv-bytes-per-token}, or null for the shape's.
     * @return the settings, or null when {@code --kv-transfer-config} is absent.
     * @throws IllegalArgumentException for a bad value.
     */
    KvTransferSettings settings(final String model, final Long bytesPerToken)
    {
        final Map<?, ?> json = json();
        if (null == json || KvOffloadOptions.isOffloading(json))
        {
            return null;
        }
        final KvTransferSettings.ModelShape shape = shape(modelShape, model);
        final boolean llmd = null != llmdLatencyMs || null != llmdMsPerToken;
        final String envPort = System.getenv("VLLM_NIXL_SIDE_CHANNEL_PORT");
        final String envHost = System.getenv("VLLM_NIXL_SIDE_CHANNEL_HOST");
        final String envTimeout = System.getenv("VLLM_NIXL_ABORT_REQUEST_TIMEOUT");
        final KvTransferSettings defaults = new KvTransferSettings("kv_both", "unset",
            null != sideChannelHost ? sideChannelHost : null != envHost ? envHost : "127.0.0.1",
            null != sideChannelPort ? sideChannelPort : null != envPort ? Integer.parseInt(envPort.trim()) :
                KvTransferSettings.DEFAULT_SIDE_CHANNEL_PORT,
            dataPlane, shape, null != bytesPerToken ? bytesPerToken : shape.bytesPerToken(), byteScale,
            KvTransferSettings.DEFAULT_POOL_MAX_BYTES, verify, false, true,
            null != envTimeout ? (long)(Double.parseDouble(envTimeout.trim()) * 1e9) :
                KvTransferSettings.DEFAULT_ABORT_TIMEOUT_NS,
            5_000,
            llmd ? (long)(1e6 * (null == llmdLatencyMs ? 0 : llmdLatencyMs)) : Durations.parseNs(latency),
            llmd ? 0 : bandwidthGbps * 1e9,
            llmd && null != llmdMsPerToken ? (long)(llmdMsPerToken * 1e6) : 0);
        return KvTransferSettings.fromConfig(json, defaults);
    }

    /**
     * Hand an offloading connector's {@code --kv-transfer-config} (OffloadingConnector, LMCacheConnectorV1) to the
     * engine's host KV tier; any other connector stays here.
     *
     * @param offload the engine's offloading flags.
     * @throws IllegalArgumentException when the config is not a JSON object.
     */
    void offloadInto(final KvOffloadOptions offload)
    {
        final Map<?, ?> json = json();
        if (null != json && KvOffloadOptions.isOffloading(json))
        {
            offload.transferConfig(json);
        }
    }

    private Map<?, ?> json()
    {
        if (null == config)
        {
            return null;
        }
        try
        {
            return new ObjectMapper().readValue(config, Map.class);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalArgumentException("--kv-transfer-config is not a JSON object: " +
                ex.getOriginalMessage());
        }
    }

    private static KvTransferSettings.ModelShape shape(final String text, final String model)
    {
        if (null == text)
        {
            final ModelArchitecture profile = ModelArchitecture.lookup(model);
            return null == profile ? KvTransferSettings.DEFAULT_SHAPE :
                new KvTransferSettings.ModelShape(profile.layers(), profile.kvHeads(), profile.headDim(), 2);
        }
        final String[] parts = text.split(":");
        if (parts.length < 3 || parts.length > 4)
        {
            throw new IllegalArgumentException("--kv-model-shape must be LAYERS:KV_HEADS:HEAD_SIZE[:DTYPE_BYTES], " +
                "got '" + text + "'");
        }
        try
        {
            return new KvTransferSettings.ModelShape(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]),
                Integer.parseInt(parts[2]), 4 == parts.length ? Integer.parseInt(parts[3]) : 2);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--kv-model-shape must be LAYERS:KV_HEADS:HEAD_SIZE[:DTYPE_BYTES], " +
                "got '" + text + "'");
        }
    }
}
