/**
 * The KV data plane of prefill/decode disaggregation: a {@link dev.tapedeck.nixl.KvPool} of real block bytes and the
 * {@link dev.tapedeck.nixl.KvDataPlane}s that move them from a prefill process to a decode process, as vLLM's
 * NixlConnector moves KV blocks with NIXL. A plane is chosen at run time by {@link dev.tapedeck.nixl.KvDataPlanes}
 * ({@code auto|noop|tcp|ucx|nixl}); a plane that cannot start says why and the factory falls back to the next.
 * The control plane (vLLM's {@code kv_transfer_params}, pinned blocks, the handshake) lives above this package.
 */
package dev.tapedeck.nixl;
