/**
 * The simulated vLLM engine core. {@link Engine} is a state machine that queues {@link Request}s, composes them into
 * {@link Step}s with vLLM V1's scheduling (token budget, chunked prefill, {@code max-num-seqs}, FCFS or priority, the
 * LoRA cap, preemption when KV blocks run out), times each step with a {@link dev.tapedeck.latency.LatencyModel} and
 * emits tokens and finishes to an {@link OutputSink}; {@link EngineConfig} holds its settings and
 * {@link VirtualTimeDriver} runs it in virtual time.
 * <p>
 * The engine never reads a clock: every entry point takes {@code nowNs}, and its driver calls
 * {@link Engine#doWork(long)} at or after {@link Engine#nextDeadlineNs()}. It never knows its faces: nothing here uses
 * Netty, ZeroMQ, HTTP or the engine-core wire; a face is only an {@link OutputSink}, a capture a
 * {@link RequestObserver}, KV-event publishing a {@link dev.tapedeck.kv.KvEventSink}. {@code EngineArchitectureTest}
 * checks the clock rule and that KV events and capture are reached only through those interfaces.
 * <p>
 * <b>Threading</b>: single-threaded, with no locks. An engine, and each request once submitted, belong to the one
 * thread that drives it (a {@code serve} event loop, a {@code play} agent thread, or the caller of
 * {@link VirtualTimeDriver}), and sinks and observers are called on that thread. An {@link EngineConfig} is filled on
 * one thread and serves one engine.
 */
package dev.tapedeck.engine;
