/**
 * Fault injection shared by the faces: what a fault is ({@link dev.tapedeck.fault.RequestFault}, one grammar for the
 * request header, the {@code --failure-types} list and the schedule file), how often one is drawn
 * ({@link dev.tapedeck.fault.FaultMix}), the timeline file ({@link dev.tapedeck.fault.FaultSchedule}) and the
 * counters behind {@code tapedeck:faults_injected_total} ({@link dev.tapedeck.fault.FaultCounters}).
 */
package dev.tapedeck.fault;
