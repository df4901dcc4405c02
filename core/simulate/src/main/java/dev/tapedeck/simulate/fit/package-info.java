/**
 * Fitting the step model to real vLLM runs replayed in virtual time: {@link
 * dev.tapedeck.simulate.fit.BlisExperiment} reads an inference-perf experiment (server arguments, shared-prefix
 * workload, per-stage latency distributions), {@link dev.tapedeck.simulate.fit.StageReplay} runs its stages through
 * the engine with given step coefficients, and {@link dev.tapedeck.simulate.fit.StepFit} searches the coefficients
 * that minimise the error of the measured means.
 */
package dev.tapedeck.simulate.fit;
