package dev.tapedeck.cli;

import java.util.Locale;
import java.util.Map;

import picocli.CommandLine;

import dev.tapedeck.engine.KvOffloadSettings;
import dev.tapedeck.latency.GpuSpec;
import dev.tapedeck.latency.ModelArchitecture;

/**
 * A KV tier in host memory behind the GPU's, with vLLM's flags: {@code --kv-offloading-size} and
 * {@code --kv-offloading-backend}, or (through {@code --kv-transfer-config}, where a command has it) the
 * {@code OffloadingConnector} or LMCache's {@code LMCacheConnectorV1}. Shared by serve, play and simulate through
 * {@link EngineOptions}.
 */
final class KvOffloadOptions
{
    private static final double GIB = 1L << 30;

    @CommandLine.Option(names = "--kv-offloading-size", paramLabel = "GIB",
        description = "vLLM's CPU KV offloading: a tier of GIB GiB of host memory per engine (the total over its " +
            "tensor-parallel GPUs) that keeps computed prompt blocks; a prefix hit there is loaded back over the " +
            "GPU's host link instead of recomputed.")
    Double sizeGib;

    @CommandLine.Option(names = "--kv-offloading-backend", paramLabel = "native|lmcache", defaultValue = "native",
        description = "Which connector --kv-offloading-size stands for: native (vLLM's OffloadingConnector) or " +
            "lmcache (LMCacheConnectorV1); modelled alike (default: ${DEFAULT-VALUE}).")
    String backend;

    @CommandLine.Option(names = "--kv-offload-bandwidth", paramLabel = "GB/S",
        description = "Per-direction bandwidth of each GPU's host link for KV offloading, GB/s (1e9 bytes/s) " +
            "(default: --gpu's, 50 for PCIe 5.0 parts such as H100, 25 for PCIe 4.0 parts such as A100).")
    Double bandwidthGbps;

    /** The connector named by {@code --kv-transfer-config} when it is an offloading one, else null. */
    private Map<?, ?> transferConfig;

    /**
     * @param config the parsed {@code --kv-transfer-config}.
     * @return true when it names an offloading connector (taken here; not prefill/decode disaggregation).
     */
    static boolean isOffloading(final Map<?, ?> config)
    {
        final Object connector = config.get("kv_connector");
        return KvOffloadSettings.OFFLOADING_CONNECTOR.equals(connector) ||
            KvOffloadSettings.LMCACHE_CONNECTOR.equals(connector);
    }

    /**
     * Take an offloading connector's {@code --kv-transfer-config}.
     *
     * @param config the parsed JSON object.
     */
    void transferConfig(final Map<?, ?> config)
    {
        transferConfig = config;
    }

    /**
     * @param model the model's KV geometry, or null for Qwen3-8B's.
     * @param tensorParallel GPUs per engine.
     * @param bytesPerTokenPerGpu {@code --kv-bytes-per-token}, or null for the model's.
     * @param gpu the GPU, or null for an H100.
     * @return the tier's settings, or null without one.
     * @throws IllegalArgumentException for a bad or contradictory setting.
     */
    KvOffloadSettings settings(final ModelArchitecture model, final int tensorParallel, final Long bytesPerTokenPerGpu,
        final GpuSpec gpu)
    {
        if (null == sizeGib && null == transferConfig)
        {
            return null;
        }
        if (null != sizeGib && null != transferConfig)
        {
            throw new IllegalArgumentException("give --kv-offloading-size or an offloading --kv-transfer-config, " +
                "not both");
        }
        final ModelArchitecture shape = null != model ? model : ModelArchitecture.lookup("Qwen/Qwen3-8B");
        final long perGpu = null != bytesPerTokenPerGpu ? bytesPerTokenPerGpu :
            Math.max(1, (long)shape.kvBytesPerTokenPerGpu(tensorParallel));
        final long total = perGpu * tensorParallel;
        if (null != bandwidthGbps && !(bandwidthGbps > 0))
        {
            throw new IllegalArgumentException("--kv-offload-bandwidth must be positive, got " + bandwidthGbps);
        }
        final double bytesPerSecond = null != bandwidthGbps ? bandwidthGbps * 1e9 :
            (null == gpu ? GpuSpec.lookup("H100") : gpu).hostLinkBytesPerS();
        if (null != sizeGib)
        {
            if (!(sizeGib > 0))
            {
                throw new IllegalArgumentException("--kv-offloading-size must be positive, got " + sizeGib);
            }
            final String connector = switch (backend.toLowerCase(Locale.ROOT))
            {
                case "native" -> KvOffloadSettings.OFFLOADING_CONNECTOR;
                case "lmcache" -> KvOffloadSettings.LMCACHE_CONNECTOR;
                default -> throw new IllegalArgumentException("--kv-offloading-backend is native or lmcache, got '" +
                    backend + "'");
            };
            return new KvOffloadSettings(connector, (long)(sizeGib * GIB), 0, 0, total, perGpu, bytesPerSecond);
        }
        return fromTransferConfig(total, perGpu, bytesPerSecond);
    }

    private KvOffloadSettings fromTransferConfig(final long total, final long perGpu, final double bytesPerSecond)
    {
        final String connector = (String)transferConfig.get("kv_connector");
        final Object extraValue = transferConfig.get("kv_connector_extra_config");
        final Map<?, ?> extra = extraValue instanceof Map<?, ?> m ? m : Map.of();
        if (KvOffloadSettings.LMCACHE_CONNECTOR.equals(connector))
        {
            if (Boolean.FALSE.equals(extra.get("lmcache.local_cpu")))
            {
                throw new IllegalArgumentException("--kv-transfer-config: LMCacheConnectorV1 with lmcache.local_cpu " +
                    "false has no CPU tier to model");
            }
            // LMCache's local CPU buffer per worker (tensor-parallel rank), 5 GB by default (its GB are GiB); the
            // engine's tier is all of its workers' buffers
            final double gibPerWorker = number(extra, "lmcache.max_local_cpu_size", 5.0);
            final long workers = Math.max(1, total / perGpu);
            return new KvOffloadSettings(connector, (long)(gibPerWorker * GIB * workers), 0, 0, total, perGpu,
                bytesPerSecond);
        }
        final Object spec = extra.get("spec_name");
        if (null != spec && !"CPUOffloadingSpec".equals(spec))
        {
            throw new IllegalArgumentException("--kv-transfer-config: spec_name " + spec + " is not modelled " +
                "(CPUOffloadingSpec is)");
        }
        final Object policy = extra.get("eviction_policy");
        if (null != policy && !"lru".equals(policy))
        {
            throw new IllegalArgumentException("--kv-transfer-config: eviction_policy " + policy + " is not " +
                "modelled (lru, vLLM's default, is)");
        }
        final double bytes = number(extra, "cpu_bytes_to_use", 0);
        final double blocks = number(extra, "num_cpu_blocks", 0);
        if (bytes > 0 == blocks > 0)
        {
            throw new IllegalArgumentException("--kv-transfer-config: OffloadingConnector needs " +
                "kv_connector_extra_config.cpu_bytes_to_use (bytes, vLLM 0.14 and newer) or num_cpu_blocks " +
                "(older lines), one of them");
        }
        final int blockTokens = (int)number(extra, "block_size", 0);
        return new KvOffloadSettings(connector, (long)bytes, (int)blocks, blockTokens, total, perGpu,
            bytesPerSecond);
    }

    private static double number(final Map<?, ?> extra, final String key, final double fallback)
    {
        final Object value = extra.get(key);
        if (null == value)
        {
            return fallback;
        }
        if (value instanceof Number number && number.doubleValue() >= 0)
        {
            return number.doubleValue();
        }
        throw new IllegalArgumentException("--kv-transfer-config: kv_connector_extra_config." + key +
            " must be a non-negative number, got " + value);
    }
}
