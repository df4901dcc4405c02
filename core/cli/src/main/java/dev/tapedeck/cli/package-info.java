/**
 * The {@code tapedeck} command line (picocli): {@link Main} and one command per product ({@link ServeCommand},
 * {@link PlayCommand}, {@link RecordCommand}, {@link LoadCommand}, {@link DemoCommand}, and {@code inspect} in
 * {@code dev.tapedeck.cli.inspect}), with the flag groups they share (engine, latency, KV events, capture). A command
 * turns its flags into a product's settings ({@code ServeContext}, {@code PlayContext}, {@code RecordContext},
 * {@code LoadContext}) and starts the product; no serving, simulation or load logic lives here.
 * <p>
 * <b>Threading</b>: picocli runs a command on the main thread. {@code serve} and {@code play} return once started,
 * leave the JVM to the products' threads and stop them from a shutdown hook ({@code tapedeck-shutdown});
 * {@code record}, {@code load} and {@code demo} hold the main thread until they end, and a shutdown hook (SIGINT,
 * SIGTERM) ends them early.
 */
package dev.tapedeck.cli;
