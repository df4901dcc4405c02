/**
 * Request traces as workloads to replay. {@link Workloads} loads any supported format ({@link WorkloadFormat}:
 * tapedeck's workload file, vllm-vcr traces, Mooncake, Azure, kv-cache-tester, guidellm, vllm bench, AIPerf
 * multi_turn, BurstGPT) as a {@link Workload} of {@link WorkloadRequest}s (arrival, prompt and output lengths, prefix
 * block ids, sessions, inferred from chained block ids when the source names none), with notes on what was adjusted
 * or skipped.
 * {@link WorkloadReader} and {@link WorkloadWriter} read and write the workload file; {@link TraceConversion} turns
 * sources with measured results into vllm-vcr traces; {@link OutputLengthDistribution} is how long an uncapped answer
 * is (the engine draws from it).
 * <p>
 * Files only: no threads, no sockets, no engine; builds on {@code dev.tapedeck.trace} and
 * {@link dev.tapedeck.latency.SeededRandom}.
 * <p>
 * <b>Threading</b>: a {@link Workload} and its requests are immutable and safe to share; {@link Workloads},
 * {@link TraceConversion} and {@link OutputLengthDistribution} may be used from any thread
 * (draws take the caller's generator); readers and writers belong to one thread.
 */
package dev.tapedeck.workload;
