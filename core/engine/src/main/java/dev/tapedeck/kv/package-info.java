/**
 * The KV cache's building blocks, after vLLM V1: {@link BlockPool}, a fixed pool of reference-counted blocks whose
 * freed blocks keep their hash until reused (prefix-cache hits, least-recently-freed eviction); {@link BlockHasher},
 * vLLM's chained {@code sha256_cbor} block hashes; {@link KvEventSink}, which hears of every block stored, evicted or
 * cleared; and {@link KvCapacity}, which sizes the pool from GPU memory as vLLM does at start.
 * <p>
 * Depends on nothing else of tapedeck ({@code EngineArchitectureTest} forbids the engine, KV-event and capture
 * packages); the engine's KV-cache manager builds on it, and KV-event publishing implements {@link KvEventSink}.
 * <p>
 * <b>Threading</b>: a {@link BlockPool} and a {@link BlockHasher} belong to one engine and are used on its thread only,
 * as are the {@link KvEventSink} calls; {@link KvCapacity} is stateless and safe from any thread.
 */
package dev.tapedeck.kv;
