/**
 * The OpenAI-compatible HTTP face of {@code serve}, on Netty. {@link HttpServer} binds N independent instances
 * (replicas), each with its own port, engines (one per data-parallel rank), metrics and connections;
 * {@link ServeOptions} holds the face's settings. Inside, admission parses, tokenizes and submits requests,
 * {@code HttpFront} drives each engine with one loop timer at its next deadline and is its
 * {@link dev.tapedeck.engine.OutputSink}, and {@code HttpStream} and {@code Choice} turn tokens into SSE or JSON bodies
 * with vLLM's frontend duties (UTF-8 boundaries, stop strings, usage).
 * <p>
 * The face reads time only through the clocks of its {@link ServeOptions}: {@link ServeOptions#nanoClock()} for
 * arrivals, steps and writes (it passes that time to the engine, which reads none) and
 * {@link ServeOptions#epochClock()} for {@code created} fields. It knows nothing of {@code dev.tapedeck.serve}, which
 * builds on it. {@code ServeArchitectureTest} checks both rules.
 * <p>
 * <b>Threading</b>: an instance is confined to one event loop ({@code tapedeck-http-n}; there are min(instances, cores)
 * loops, so instances may share one): its engines, channels, handlers and metrics all run there, so a token becomes an
 * SSE write with no thread hop and no lock. {@link HttpServer}'s start and shutdown may be called from any thread;
 * {@link HttpServer#onEngine(int, java.util.function.Function)} runs its task on the instance's loop and waits for it.
 */
package dev.tapedeck.http;
