/**
 * The load generator. {@link Load#start(LoadContext)} turns a {@link LoadContext} (a workload replayed at its time
 * stamps, a rate, a fixed concurrency or a sweep) into {@link LoadPlan}s of {@link PlannedRequest}s with exact prompt
 * and output lengths, prefix blocks and sessions, runs each point ({@link LoadRun}) through the HTTP client of
 * {@code dev.tapedeck.load.client}, and reports TTFT, ITL, TPOT, end-to-end latency, throughput and goodput as a table
 * ({@link ResultTable}), JSON ({@link LoadReport}) and a self-contained HTML page ({@link HtmlReport}).
 * <p>
 * Never depends on the engine: it loads any OpenAI-compatible server over HTTP, tapedeck's like any other.
 * <p>
 * <b>Threading</b>: {@code start} reads the workload and builds the plans on the caller's thread; then one job thread
 * ({@code tapedeck-load-job}) runs the points and is each run's dispatcher: it owns the plan and the send timers and
 * hands requests to the client's event loops ({@code tapedeck-load-n}), which time every response into their own
 * {@link RunRecorder} (single writer) and report completions back through a many-to-one queue. {@link MetricsScraper}
 * samples on {@code tapedeck-scrape}. {@link Load#stop()} and {@link Load#await()} are safe from any thread; a
 * {@link LoadContext} is filled on one thread.
 */
package dev.tapedeck.load;
