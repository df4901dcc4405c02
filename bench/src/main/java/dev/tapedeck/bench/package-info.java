/**
 * Benchmarks, built as {@code bench/target/benchmarks.jar} (not installed): JMH microbenchmarks of the hot paths
 * ({@link EngineStepBenchmark}, {@link BlockPoolBenchmark}, {@link EngineCoreCodecBenchmark}) and of a user's client
 * against an embedded fleet ({@link RouterClientBenchmark}), and end-to-end runs with a {@code main}:
 * {@link ScaleBench} ({@code tapedeck serve} against the bare-Netty ceiling {@link BareSseServer}, each a real process
 * driven by {@link SseLoadClient}), {@link EngineCoreScaleBench} (a {@code play} engine over ZeroMQ loopback against
 * raw JeroMQ) and {@link PacedSendBench} (what a JeroMQ send costs a sender that works between messages); the
 * {@code play} engine's step without its socket is {@code dev.tapedeck.enginecore.PlayStepBenchmark}, in that package
 * for the engine-core face's package-private batcher. docs/performance.md has the numbers and how to reproduce them.
 * <p>
 * Nothing depends on this module. <b>Threading</b>: JMH state is per thread ({@code Scope.Thread}) except
 * {@link RouterClientBenchmark}'s fleet ({@code Scope.Benchmark}); the end-to-end runs start on {@code main}, and
 * {@link BareSseServer} and {@link SseLoadClient} each run on one event loop of their own.
 */
package dev.tapedeck.bench;
