package dev.tapedeck.nixl.sidechannel;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import dev.tapedeck.nixl.KvDataPlane;

/**
 * What a prefill tells a decode about its KV memory, named and shaped after vLLM's {@code NixlAgentMetadata}
 * dataclass ({@code nixl_connector.py} @002a1057): msgspec encodes a dataclass as a msgpack <b>map</b> keyed by the
 * field names, in declaration order: {@code engine_id} (str), {@code agent_metadata} (bin), {@code kv_caches_base_addr}
 * (array of int), {@code device_id} (int), {@code num_blocks} (int), {@code block_lens} (array of int),
 * {@code kv_cache_layout} (str), {@code block_size} (int). tapedeck appends {@code plane} (str) and
 * {@code kvb_version} (int); msgspec ignores keys a dataclass does not declare, so a vLLM decode still reads it.
 * <p>
 * Immutable (the arrays are copied in and out); thread safe.
 *
 * @param engineId the prefill engine's id ({@code remote_engine_id}).
 * @param agentMetadata the data plane's {@link KvDataPlane#agentMetadata()} (NIXL's {@code getLocalMD} blob).
 * @param kvCachesBaseAddr one base address per registered region.
 * @param deviceId the device the regions live on; 0 for host memory.
 * @param numBlocks blocks per region.
 * @param blockLens bytes per block, one per region.
 * @param kvCacheLayout {@code HND} or {@code NHD}.
 * @param blockSize tokens per block.
 * @param plane the data plane's kind ({@code tcp}, {@code ucx}, ...), or null when the peer did not say (vLLM).
 * @param kvbVersion tapedeck's bridge version, 0 when the peer did not say.
 */
public record NixlAgentMetadata(String engineId, byte[] agentMetadata, List<Long> kvCachesBaseAddr, int deviceId,
    int numBlocks, List<Long> blockLens, String kvCacheLayout, int blockSize, String plane, int kvbVersion)
{
    /** The bridge version tapedeck writes as {@code kvb_version}. */
    public static final int KVB_VERSION = 1;

    /**
     * Checks the values and copies the arrays.
     */
    public NixlAgentMetadata
    {
        Objects.requireNonNull(engineId, "engineId");
        Objects.requireNonNull(kvCacheLayout, "kvCacheLayout");
        agentMetadata = agentMetadata.clone();
        kvCachesBaseAddr = List.copyOf(kvCachesBaseAddr);
        blockLens = List.copyOf(blockLens);
    }

    /**
     * The metadata of one of tapedeck's planes: one region starting at offset 0 (the plane addresses blocks by id),
     * layout {@code HND}, device 0.
     *
     * @param engineId this engine's id.
     * @param plane the opened plane.
     * @param blockSizeTokens tokens per block.
     * @return the metadata to serve over the side channel.
     */
    public static NixlAgentMetadata of(final String engineId, final KvDataPlane plane, final int blockSizeTokens)
    {
        return new NixlAgentMetadata(engineId, plane.agentMetadata(), List.of(0L), 0, plane.pool().numBlocks(),
            List.of((long)plane.pool().blockBytes()), "HND", blockSizeTokens, plane.kind(), KVB_VERSION);
    }

    /**
     * @return a copy of the plane's metadata blob.
     */
    @Override
    public byte[] agentMetadata()
    {
        return agentMetadata.clone();
    }

    @Override
    public boolean equals(final Object other)
    {
        return other instanceof NixlAgentMetadata that && engineId.equals(that.engineId) &&
            Arrays.equals(agentMetadata, that.agentMetadata) && kvCachesBaseAddr.equals(that.kvCachesBaseAddr) &&
            deviceId == that.deviceId && numBlocks == that.numBlocks && blockLens.equals(that.blockLens) &&
            kvCacheLayout.equals(that.kvCacheLayout) && blockSize == that.blockSize &&
            Objects.equals(plane, that.plane) && kvbVersion == that.kvbVersion;
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(engineId, Arrays.hashCode(agentMetadata), kvCachesBaseAddr, deviceId, numBlocks,
            blockLens, kvCacheLayout, blockSize, plane, kvbVersion);
    }

    @Override
    public String toString()
    {
        return "NixlAgentMetadata{engine_id=" + engineId + ", agent_metadata=" + agentMetadata.length +
            " bytes, kv_caches_base_addr=" + kvCachesBaseAddr + ", device_id=" + deviceId + ", num_blocks=" +
            numBlocks + ", block_lens=" + blockLens + ", kv_cache_layout=" + kvCacheLayout + ", block_size=" +
            blockSize + ", plane=" + plane + ", kvb_version=" + kvbVersion + "}";
    }
}
