/**
 * vLLM NixlConnector's side channel, byte-compatible with vLLM (read at commit 002a1057): the ZeroMQ ROUTER a prefill
 * serves its handshake on ({@link dev.tapedeck.nixl.sidechannel.SideChannelServer}), the REQ side a decode fetches it
 * with ({@link dev.tapedeck.nixl.sidechannel.SideChannelClient}), the msgpack of {@code NixlHandshakePayload} and
 * {@code NixlAgentMetadata} ({@link dev.tapedeck.nixl.sidechannel.HandshakeCodec}) and the compatibility hash
 * ({@link dev.tapedeck.nixl.sidechannel.CompatibilityHash}). tapedeck adds one request, {@code tapedeck_notif}, which
 * carries a done-notification when the data plane cannot ({@code noop}).
 */
package dev.tapedeck.nixl.sidechannel;
