package dev.tapedeck.cli;

import java.nio.file.Path;

import picocli.CommandLine;

import dev.tapedeck.capture.CaptureSettings;

/**
 * Self-capture flags shared by {@code serve} and {@code play}: write every finished request to a trace file.
 */
public final class CaptureOptions
{
    @CommandLine.Option(names = "--trace-out", paramLabel = "FILE",
        description = "Write every finished request to this trace (JSONL, vllm-vcr schema; gzip when it ends " +
            "with .gz), flushed per batch so it can be read while running (docs/traces.md).")
    Path traceOut;

    @CommandLine.Option(names = "--record-tokens",
        description = "With --trace-out: also record each request's output token ids.")
    boolean recordTokens;

    @CommandLine.Option(names = "--trace-block-size", defaultValue = "16", paramLabel = "TOKENS",
        description = "With --trace-out: tokens per block of the prompt fingerprints in block_hashes; 0 for none " +
            "(default: ${DEFAULT-VALUE}).")
    int traceBlockSize;

    /**
     * @return the capture the flags describe.
     * @throws IllegalArgumentException if the flags contradict each other.
     */
    CaptureSettings settings()
    {
        return new CaptureSettings(traceOut, recordTokens, traceBlockSize);
    }
}
