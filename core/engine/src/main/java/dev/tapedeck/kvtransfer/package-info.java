/**
 * Prefill/decode disaggregation's control plane, after vLLM's NixlConnector: {@link
 * dev.tapedeck.kvtransfer.NixlConnector} implements the engine's {@link dev.tapedeck.engine.KvConnector} over a
 * {@link dev.tapedeck.nixl.KvDataPlane} and the NIXL side channel; {@link dev.tapedeck.kvtransfer.KvTransferSettings}
 * holds {@code --kv-transfer-config} and the data-plane flags.
 */
package dev.tapedeck.kvtransfer;
