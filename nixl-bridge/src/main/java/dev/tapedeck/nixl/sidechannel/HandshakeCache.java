package dev.tapedeck.nixl.sidechannel;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * One handshake per remote engine id, as vLLM's decode keeps {@code _handshake_futures} / {@code _remote_agents}:
 * the first request for an engine starts the fetch, later ones share its future; a failed fetch is forgotten so the
 * next request tries again.
 * <p>
 * <b>Threading</b>: thread safe; never blocks (the fetch runs on the {@link SideChannelClient}'s thread).
 */
public final class HandshakeCache
{
    private final SideChannelClient client;
    private final ConcurrentMap<String, CompletableFuture<Handshake>> byEngineId = new ConcurrentHashMap<>();

    /**
     * @param client the client that fetches.
     */
    public HandshakeCache(final SideChannelClient client)
    {
        this.client = client;
    }

    /**
     * @param engineId the remote engine id ({@code remote_engine_id}); the metadata must carry it.
     * @param host its side-channel host ({@code remote_host}).
     * @param port its side-channel port ({@code remote_port}).
     * @return the cached or started handshake.
     */
    public CompletableFuture<Handshake> get(final String engineId, final String host, final int port)
    {
        final CompletableFuture<Handshake> existing = byEngineId.get(engineId);
        if (null != existing)
        {
            return existing;
        }
        final CompletableFuture<Handshake> started = new CompletableFuture<>();
        final CompletableFuture<Handshake> raced = byEngineId.putIfAbsent(engineId, started);
        if (null != raced)
        {
            return raced;
        }
        client.fetch(host, port, 0, engineId).whenComplete((handshake, error) ->
        {
            if (null != error)
            {
                byEngineId.remove(engineId, started);
                started.completeExceptionally(error);
            }
            else
            {
                started.complete(handshake);
            }
        });
        return started;
    }

    /**
     * Forget an engine (its metadata changed, or it went away).
     *
     * @param engineId the remote engine id.
     */
    public void invalidate(final String engineId)
    {
        byEngineId.remove(engineId);
    }
}
