package dev.tapedeck.nixl;

/**
 * A remote plane this process can read from, made by {@link KvDataPlane#addPeer}.
 *
 * @param engineId the remote engine's id (NIXL's agent name).
 * @param handle the plane's own reference to the peer (a native index for {@code ucx}).
 * @param address where the peer is reached, for messages ({@code host:port}, or the native plane's name for it).
 */
public record KvPeer(String engineId, long handle, String address)
{
}
