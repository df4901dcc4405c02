/**
 * The vllm-vcr trace format, field for field: {@link TraceRecord} (one finished request) and {@link TraceMeta} (the
 * optional meta line), read by {@link TraceReader}, written by {@link TraceWriter}, and checked by
 * {@link TraceValidation} (a record's cross-field rules) and {@link TraceValidator} (a whole file).
 * {@link RequestCapture} builds a record from what a capture sees; {@link PromptBlockHashes} and
 * {@link ConfigFingerprint} compute the fingerprints vllm-vcr computes; {@link TraceFiles} opens files, gzip or not.
 * <p>
 * Files only: no threads, no sockets, no engine; depends on nothing else of tapedeck. Self-capture, {@code record}, the
 * workload loaders and {@code inspect} all read or write traces through it.
 * <p>
 * <b>Threading</b>: readers, writers, records, meta lines and {@link RequestCapture}s are not thread safe (one thread
 * each); {@link TraceFiles}, {@link TraceValidation}, {@link TraceValidator}, {@link PromptBlockHashes} and
 * {@link ConfigFingerprint} are stateless and safe from any thread.
 */
package dev.tapedeck.trace;
