/**
 * How long engine work takes: {@link LatencyModel}, which the engine asks for the duration of every step (a
 * {@link StepShape}) and for a request's first-token delay, and its two models: {@link StepLatencyModel}, which costs a
 * step by its batch with {@link StepCoefficients} fitted to real vLLM runs, and {@link KnobLatencyModel},
 * llm-d-inference-sim's TTFT and inter-token-latency flags. {@link SeededRandom} is the seedable generator behind every
 * jitter and token draw; {@link Durations} parses and prints the command line's durations.
 * <p>
 * Depends on nothing else of tapedeck (the engine implements {@link StepShape}) and reads no clock: a model turns work
 * into a duration, and the engine places it in time.
 * <p>
 * <b>Threading</b>: models, coefficients and {@link Durations} are immutable or stateless and may be shared between
 * engines; a model is called on an engine's thread with a generator of that engine. A {@link SeededRandom} is not
 * thread safe and belongs to one thread.
 */
package dev.tapedeck.latency;
