/**
 * Test support shared by the modules' own tests (a test-scoped dependency of serve, play, cli, junit and the system
 * tests; no main code uses it): {@link Sse} parses SSE bodies strictly, as OpenAI clients read them;
 * {@link KvEventSubscriber} reads KV-event batches in sequence, filling gaps from the publisher's replay socket;
 * {@link NoNettyLeaks} fails a test class when Netty reports a leaked buffer; {@link LeakDetectionOff} turns Netty's
 * leak detector off around an allocation measurement.
 * <p>
 * <b>Threading</b>: a {@link KvEventSubscriber} is confined to the test thread that made it (JeroMQ sockets are
 * thread-confined); {@link LeakDetectionOff} changes a process-wide setting and is not for concurrent use; {@link Sse}
 * is stateless.
 */
package dev.tapedeck.testing;
