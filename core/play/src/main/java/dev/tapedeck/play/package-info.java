/**
 * The {@code play} product. {@link Play#start(PlayContext)} turns a {@link PlayContext} into N simulated engine cores
 * behind a real vLLM frontend (the agents of {@link dev.tapedeck.enginecore.PlayServer}), each with its own seed, plus
 * their KV event publishers and self-capture; the {@link Play} it returns reports them and shuts them down. The CLI and
 * the tests start engines this way.
 * <p>
 * <b>Threading</b>: a {@link PlayContext} is filled on one thread and must not change once handed to {@code start}.
 * {@code start} and {@code close} may be called from any thread, once each, and the accessors from any thread after
 * {@code start} returned. Each engine runs on its own agent thread; KV events are published on
 * {@code tapedeck-kv-events} and the trace is written on {@code tapedeck-trace-writer}.
 */
package dev.tapedeck.play;
