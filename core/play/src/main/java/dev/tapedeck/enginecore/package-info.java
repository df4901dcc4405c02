/**
 * The engine-core face of {@code play}: simulated engine cores behind a real vLLM frontend, over vLLM's ZeroMQ and
 * msgpack protocol (the codecs of {@code dev.tapedeck.protocol.enginecore}). {@link EngineCoreAgent} is one engine core
 * as an Agrona agent: the handshake, then in every duty cycle the frontend's ADD, ABORT and UTILITY messages in, the
 * engine advanced, and one {@code EngineCoreOutputs} per step and client out (the package-private {@code OutputBatcher}
 * is its {@link dev.tapedeck.engine.OutputSink}). {@link PlayServer} runs N agents; {@link PlayOptions} holds the
 * face's settings.
 * <p>
 * The face reads the clock ({@link PlayOptions#engineClock()}, {@link System#nanoTime()} by default) and passes the
 * time to the engine. This package knows nothing of {@code dev.tapedeck.play}, which builds on it
 * ({@code PlayArchitectureTest}).
 * <p>
 * <b>Threading</b>: each agent runs on its own thread ({@code tapedeck-engine-n}), which creates, uses and closes its
 * ZeroMQ context and sockets and owns its engine and requests. {@link EngineCoreAgent#beginDrain()}, its readiness and
 * counters, and {@link PlayServer}'s accessors and shutdown are safe from any thread.
 */
package dev.tapedeck.enginecore;
