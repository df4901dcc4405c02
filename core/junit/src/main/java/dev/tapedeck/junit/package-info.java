/**
 * JUnit 5 and JMH support for users' tests: {@link TapedeckFleet}, a simulated vLLM fleet in the test's own JVM (a
 * {@code serve} started through {@link dev.tapedeck.serve.Serve#start(dev.tapedeck.serve.ServeContext)} on free ports
 * of 127.0.0.1, with KV events when asked), used as a {@code @RegisterExtension} field or started and closed by hand;
 * and {@link MetricsSnapshot}, one parsed scrape of {@code /metrics}.
 * <p>
 * <b>Threading</b>: a fleet is started and stopped from one thread (JUnit's or JMH's); its URL and endpoint accessors
 * may then be read from any thread, and its engines run on the fleet's own event loops. A {@link MetricsSnapshot} is
 * immutable.
 */
package dev.tapedeck.junit;
