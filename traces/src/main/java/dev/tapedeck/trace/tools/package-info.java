/**
 * The logic of the {@code inspect} trace tools: {@link TraceSummary} and {@link TraceSummaryFormat} ({@code summarize},
 * with nearest-rank percentiles from {@link WeightedSamples}), {@link PerfettoExport} ({@code perfetto}, Chrome
 * trace-event JSON), {@link EngineConfigSettings} ({@code fingerprint --set}) and {@link DemoTraceGenerator}, the
 * workload of {@code gen-demo}. The command line only parses flags and calls these.
 * <p>
 * Does not depend on the engine: {@link DemoTraceGenerator} only draws the requests, and core runs them through the
 * engine ({@code dev.tapedeck.capture.DemoTraceRun}).
 * <p>
 * <b>Threading</b>: no threads of its own; everything runs on the caller's thread. {@link PerfettoExport},
 * {@link TraceSummaryFormat}, {@link EngineConfigSettings} and {@link DemoTraceGenerator} are stateless, a built
 * {@link TraceSummary} is immutable, and a {@link WeightedSamples} is not thread safe.
 */
package dev.tapedeck.trace.tools;
