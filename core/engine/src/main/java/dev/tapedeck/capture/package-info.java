/**
 * Self-capture: what an engine does with each request, written as vllm-vcr trace records. {@link CaptureObserver} is a
 * {@link dev.tapedeck.engine.RequestObserver} that turns each finished request into a
 * {@link dev.tapedeck.trace.TraceRecord}; {@link TraceRecorder} writes those records for {@code --trace-out} of
 * {@code serve} and {@code play}, set up by {@link CaptureSettings}; {@link DemoTraceRun} runs the
 * {@code inspect gen-demo} workload through a real engine in virtual time and captures it the same way.
 * <p>
 * <b>Threading</b>: the observer methods run on the engines' threads and keep per-request state on the request.
 * {@link TraceRecorder} passes finished records through a bounded many-to-one queue to its own writer thread
 * ({@code tapedeck-trace-writer}), dropping and counting records rather than stalling an engine, and is closed once the
 * engines have stopped. {@link DemoTraceRun} runs everything on the caller's thread.
 */
package dev.tapedeck.capture;
