/**
 * The load generator's HTTP/1.1 client, on Netty. {@link LoadClient} runs OpenAI requests ({@link Exchange}s) on a few
 * event loops, with a lane of keep-alive connections per loop and server and one exchange per connection at a time: it
 * sends each exchange at its intended time, reads streamed and whole responses, times every token-bearing event and
 * tells an {@link ExchangeListener} how each exchange ended.
 * <p>
 * Depends on nothing of {@code dev.tapedeck.load} (only on {@code dev.tapedeck.net}): the client knows no plans,
 * recorders or reports ({@code LoadArchitectureTest}).
 * <p>
 * <b>Threading</b>: {@link LoadClient#submit(Exchange)} and the spare methods are safe from any thread. An exchange
 * handed to the client belongs from then on to one lane's event loop ({@code tapedeck-load-n}), where it is written,
 * read, timed and timed out, and where the listener is called (it must not block).
 */
package dev.tapedeck.load.client;
