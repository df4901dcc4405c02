/**
 * What a face of the engine ({@code serve}, {@code play}) owns beside its engines and its transport:
 * {@link FaceResources} holds its {@link dev.tapedeck.kvevents.KvEventPublishers}, its self-capture
 * {@link dev.tapedeck.capture.TraceRecorder} and its tokenizer, and closes them in that order (the tokenizer only when
 * the face opened it) after the face has stopped its engines, so the last steps' events and records go out.
 * <p>
 * The engine package knows nothing of it; {@code dev.tapedeck.serve} and {@code dev.tapedeck.play} use it.
 * <p>
 * <b>Threading</b>: not thread safe. A {@link FaceResources} is filled while its face starts and closed once, on one
 * thread; the publishers and the recorder it holds run their own threads.
 */
package dev.tapedeck.face;
