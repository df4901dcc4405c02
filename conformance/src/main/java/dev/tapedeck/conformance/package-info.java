/**
 * Encoder regression vectors, tapedeck's own bytes (the goldens of real engines are listed in {@code manifest.toml}
 * and checked by {@code inspect conformance}): {@link EncoderVectors} gives, for every supported vLLM line, the exact
 * bytes tapedeck's engine-core codecs write for each kind of message (handshake, registration, outputs with and
 * without cached tokens and finishes, utility replies) from fixed inputs. The vectors are kept under
 * {@code conformance/encoder-vectors/<line>/}; {@code EncoderVectorsTest} fails when the codecs drift from them, and
 * {@link EncoderVectors#main(String[])} regenerates them when a change is meant.
 * <p>
 * Depends on {@code protocol} only, never on an engine. <b>Threading</b>: stateless; every call builds its own buffers,
 * so any thread.
 */
package dev.tapedeck.conformance;
