package dev.tapedeck.nixl.sidechannel;

/**
 * A decoded handshake reply, vLLM's {@code NixlHandshakePayload} with its {@code agent_metadata_bytes} decoded.
 * <p>
 * Immutable; thread safe.
 *
 * @param compatibilityHash the remote's {@code compatibility_hash} ({@link CompatibilityHash}).
 * @param metadata the remote's agent metadata.
 */
public record Handshake(String compatibilityHash, NixlAgentMetadata metadata)
{
}
