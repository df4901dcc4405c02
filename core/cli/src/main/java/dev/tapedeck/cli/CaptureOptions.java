package dev.tapedeck.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.TextNode;
import picocli.CommandLine;

import dev.tapedeck.capture.TraceRecorder;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.trace.TraceMeta;

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
     * Start the capture and attach it to every engine, when {@code --trace-out} is given.
     *
     * @param source the meta line's {@code source} ({@code tapedeck-serve}, {@code tapedeck-play}).
     * @param model the served model name, or null.
     * @param configs the engines' configurations.
     * @param startNs the time that is {@code arrival_ms} 0.
     * @return the running recorder, or null without {@code --trace-out}.
     * @throws IOException if the file cannot be created.
     */
    TraceRecorder start(final String source, final String model, final List<EngineConfig> configs,
        final long startNs) throws IOException
    {
        if (traceBlockSize < 0)
        {
            throw new IllegalArgumentException("--trace-block-size must be >= 0");
        }
        if (null == traceOut)
        {
            if (recordTokens)
            {
                throw new IllegalArgumentException("--record-tokens needs --trace-out");
            }
            return null;
        }
        final EngineConfig first = configs.get(0);
        final TraceMeta meta = new TraceMeta().source(source).model(model).maxNumSeqs((long)first.maxNumSeqs())
            .blockSize(0 == traceBlockSize ? null : (long)traceBlockSize);
        meta.extra().put("tapedeck_version", TextNode.valueOf(VersionProvider.version()));
        meta.extra().put("latency_model", TextNode.valueOf(first.latencyModel().describe()));
        meta.extra().put("engines", IntNode.valueOf(configs.size()));
        final TraceRecorder recorder = TraceRecorder.start(traceOut, meta, recordTokens, traceBlockSize, startNs);
        for (final EngineConfig config : configs)
        {
            config.requestObserver(recorder);
        }
        return recorder;
    }
}
