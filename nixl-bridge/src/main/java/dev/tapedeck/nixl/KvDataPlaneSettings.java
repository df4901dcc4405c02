package dev.tapedeck.nixl;

import java.util.Objects;

/**
 * What a {@link KvDataPlane} is opened with.
 *
 * @param kind {@code auto}, {@code noop}, {@code tcp}, {@code ucx} or {@code nixl} ({@code --kv-data-plane}).
 * @param engineId this engine's id, the plane's agent name ({@code remote_engine_id} to its peers).
 * @param numBlocks blocks in the pool (the engine's KV blocks).
 * @param blockBytes bytes per block, a positive multiple of 8 (block size x KV bytes per token x byte scale).
 * @param host the address the plane binds and advertises for data ({@code tcp}); 127.0.0.1 keeps it on loopback.
 */
public record KvDataPlaneSettings(String kind, String engineId, int numBlocks, int blockBytes, String host)
{
    /**
     * Checks the values.
     */
    public KvDataPlaneSettings
    {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(engineId, "engineId");
        Objects.requireNonNull(host, "host");
        KvPool.blocksPerRegion(numBlocks, blockBytes);
    }

    /**
     * @param value another kind.
     * @return these settings with that kind.
     */
    public KvDataPlaneSettings withKind(final String value)
    {
        return new KvDataPlaneSettings(value, engineId, numBlocks, blockBytes, host);
    }
}
