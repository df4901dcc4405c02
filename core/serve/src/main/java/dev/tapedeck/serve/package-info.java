/**
 * The {@code serve} product. {@link Serve#start(ServeContext)} turns a {@link ServeContext} into running simulated vLLM
 * instances (the HTTP face of {@link dev.tapedeck.http.HttpServer}) with one engine per instance and data-parallel
 * rank, each with its own seed, plus their KV event publishers and self-capture; the {@link Serve} it returns reports
 * URLs and endpoints and shuts everything down. The CLI, {@code demo}, the JUnit fleet and the tests all start a server
 * this way.
 * <p>
 * <b>Threading</b>: a {@link ServeContext} is filled on one thread and must not change once handed to {@code start}.
 * {@code start} and {@code close} may be called from any thread, once each, and the accessors from any thread after
 * {@code start} returned. The engines run on the server's event loops, never on the caller's thread; KV events are
 * published on {@code tapedeck-kv-events} and the trace is written on {@code tapedeck-trace-writer}.
 */
package dev.tapedeck.serve;
