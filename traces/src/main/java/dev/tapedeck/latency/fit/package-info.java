/**
 * Fitting the step model to real vLLM runs: {@link StepModelFit} estimates
 * {@link dev.tapedeck.latency.StepCoefficients} by least squares from per-request timestamps alone
 * ({@link MeasuredRequest}: queued, scheduled, first and last token), with no per-step trace. The shipped profiles were
 * fitted this way (docs/latency-models.md).
 * <p>
 * Used offline and by tests; the engine never calls it. <b>Threading</b>: stateless; any thread.
 */
package dev.tapedeck.latency.fit;
