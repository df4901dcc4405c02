/**
 * The {@code record} product: {@link RecordingTap#start(RecordContext)} starts a tap between a real vLLM frontend and a
 * real vLLM engine core, configured by a {@link RecordContext}. The tap plays the frontend to the engine and engine 0
 * to the frontend, relays every frame of every message byte for byte both ways, and from the relayed payloads writes a
 * vllm-vcr trace (one record per finished request) and an optional step-stats sidecar. {@link MsgPackTree} and
 * {@link SchedulerStatsNames} turn msgpack control messages and scheduler stats into JSON trees.
 * <p>
 * Does not depend on the engine: the tap runs no simulation; it decodes the wire with the protocol codecs and writes
 * the trace with the traces module.
 * <p>
 * <b>Threading</b>: two Agrona agents on threads of their own, sharing only a single-producer single-consumer queue and
 * volatile counters. The relay ({@code tapedeck-record-relay}) owns the ZeroMQ context and every socket, and forwards
 * each message before it queues its payload; the capture writer ({@code tapedeck-record-writer}) decodes, builds the
 * records and writes the files. A {@link RecordContext} is filled on one thread. {@link RecordingTap#stop()} and the
 * accessors are safe from any thread; {@link MsgPackTree} and {@link SchedulerStatsNames} are stateless.
 */
package dev.tapedeck.record;
