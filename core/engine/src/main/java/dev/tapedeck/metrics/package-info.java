/**
 * vLLM's Prometheus metrics: {@link EngineMetrics}, the counters and {@link Histogram}s one engine keeps, with vLLM's
 * buckets and observation rules; {@link MetricsSource}, an engine as {@code /metrics} sees it (the engine implements
 * it); {@link PrometheusExposition}, which renders engines' metrics as vLLM's Python frontend does; and
 * {@link LoraRequestsInfo}, the {@code vllm:lora_requests_info} gauge. {@link GoFloat} prints numbers as
 * prometheus_client does.
 * <p>
 * Depends on nothing else of tapedeck. Only {@link LoraRequestsInfo} reads a clock: the system's, once, when it is
 * created, to turn engine times (taken to be {@link System#nanoTime()}) into Unix seconds.
 * <p>
 * <b>Threading</b>: single writer. The engine's thread updates {@link EngineMetrics} and its histograms, and
 * {@code /metrics} is rendered on that same thread (in {@code serve}, the instance's event loop). Nothing here is
 * thread safe except {@link GoFloat}, which is stateless.
 */
package dev.tapedeck.metrics;
