/**
 * {@code tapedeck simulate}: the engine of {@code serve} and {@code play} (same scheduler, KV cache and latency
 * models) driven through a workload in virtual time, reported as {@code load} reports a measured run.
 * {@link dev.tapedeck.simulate.SimulateContext} holds the settings, {@link dev.tapedeck.simulate.Simulate#run} runs
 * them.
 */
package dev.tapedeck.simulate;
