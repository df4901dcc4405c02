/**
 * vLLM's engine-core wire (ZeroMQ frames of msgpack) as codecs, for every supported vLLM line ({@link VllmLine}): the
 * startup {@link Handshake}; the {@link RequestType} byte that opens each input message; ADD requests, decoded by
 * {@link AddRequestDecoder} into a reused {@link AddRequest}; {@link UtilityCall}s and their replies; and
 * {@link EngineCoreOutputsEncoder}, which writes one {@code EngineCoreOutputs} message per step and client, with its
 * {@link SchedulerStats}.
 * <p>
 * Codecs only: no sockets, no threads, no engine. They read and write Agrona buffers through
 * {@code dev.tapedeck.protocol.msgpack}; their callers ({@code play}'s engine agents, {@code record}'s tap, the golden
 * vectors of {@code conformance}) own the buffers and the sockets.
 * <p>
 * <b>Threading</b>: decoders, encoders and the mutable {@link AddRequest}, {@link UtilityCall} and
 * {@link SchedulerStats} are not thread safe: one of each per owning thread, reused from message to message.
 * {@link VllmLine} is immutable and {@link Handshake} stateless, both safe from any thread.
 */
package dev.tapedeck.protocol.enginecore;
