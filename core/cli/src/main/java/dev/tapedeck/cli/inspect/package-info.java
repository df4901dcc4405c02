/**
 * {@code tapedeck inspect}: offline tools for traces, workloads and load reports, one subcommand each under
 * {@link InspectCommand}: {@code convert}, {@code summarize}, {@code perfetto}, {@code validate}, {@code fingerprint},
 * {@code gen-demo} and {@code report}. The commands parse flags and call logic that lives elsewhere: the trace tools
 * and workloads of the traces module, the demo run of {@code dev.tapedeck.capture}, the reports of
 * {@code dev.tapedeck.load}.
 * <p>
 * <b>Threading</b>: every command runs on the calling thread and opens no socket, except {@code perfetto --open}: its
 * {@link TraceFileServer} serves one file on 127.0.0.1 from a thread of its own ({@code tapedeck-trace-server}) until
 * interrupted, and {@link TraceFileServer#close()} is safe from any thread.
 */
package dev.tapedeck.cli.inspect;
