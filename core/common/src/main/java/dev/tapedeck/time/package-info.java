/**
 * Deadline timers for the thread that owns a clock: {@link DeadlineTimers}, an Agrona timer wheel with a heap of exact
 * deadlines beside it, keeps an engine's end-of-step deadline and first-token holds, and a load run's send times.
 * <p>
 * Reads no clock: every call takes the time from its caller ({@code nowNs}, from {@link System#nanoTime()} or virtual),
 * and the caller arms its own wake-up at {@link DeadlineTimers#earliestDeadlineNs()}. Timers fire at or after their
 * deadline, never before. Depends on nothing else of tapedeck (the common module depends on no other, and
 * {@code CommonArchitectureTest} keeps its packages apart).
 * <p>
 * <b>Threading</b>: not thread safe. A {@link DeadlineTimers} belongs to the one thread that schedules and polls it: an
 * engine's thread, or a load run's dispatcher.
 */
package dev.tapedeck.time;
