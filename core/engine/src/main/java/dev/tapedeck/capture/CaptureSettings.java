package dev.tapedeck.capture;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.TextNode;

import dev.tapedeck.build.TapedeckVersion;
import dev.tapedeck.engine.EngineConfig;
import dev.tapedeck.trace.TraceMeta;

/**
 * Self-capture settings shared by {@code serve} and {@code play} ({@code --trace-out}, {@code --record-tokens},
 * {@code --trace-block-size}). Immutable.
 *
 * @param traceOut the trace file, or null for no capture.
 * @param recordTokens true to keep output token ids.
 * @param traceBlockSize tokens per block of the prompt fingerprints in {@code block_hashes}; 0 for none.
 * @param vllmTag the vLLM version the run imitates (the meta's {@code vllm_version}), or null.
 * @param engineConfig the run's canonical engine configuration ({@code ConfigFingerprint.engineConfig}: the engine
 *     flags and the vLLM flags accepted without effect), written to the meta with its {@code config_hash}; or null.
 */
public record CaptureSettings(Path traceOut, boolean recordTokens, int traceBlockSize, String vllmTag,
    String engineConfig)
{
    /** No capture. */
    public static final CaptureSettings OFF = new CaptureSettings(null, false, 0);

    /**
     * Settings without a configuration fingerprint.
     *
     * @param traceOut the trace file, or null for no capture.
     * @param recordTokens true to keep output token ids.
     * @param traceBlockSize tokens per block of the prompt fingerprints; 0 for none.
     */
    public CaptureSettings(final Path traceOut, final boolean recordTokens, final int traceBlockSize)
    {
        this(traceOut, recordTokens, traceBlockSize, null, null);
    }

    /**
     * @param tag the vLLM version the run imitates.
     * @param config the canonical engine configuration.
     * @return these settings, with the meta's {@code vllm_version}, {@code engine_config} and {@code config_hash}.
     */
    public CaptureSettings fingerprint(final String tag, final String config)
    {
        return new CaptureSettings(traceOut, recordTokens, traceBlockSize, tag, config);
    }

    /**
     * Validates the values.
     */
    public CaptureSettings
    {
        if (traceBlockSize < 0)
        {
            throw new IllegalArgumentException("--trace-block-size must be >= 0");
        }
        if (null == traceOut && recordTokens)
        {
            throw new IllegalArgumentException("--record-tokens needs --trace-out");
        }
    }

    /**
     * Start the capture and attach it to every engine, when a trace file is set.
     *
     * @param source the meta line's {@code source} ({@code tapedeck-serve}, {@code tapedeck-play}).
     * @param model the served model name, or null.
     * @param configs the engines' configurations, before any engine is built from them (the recorder becomes their
     *     request observer).
     * @param startNs the time that is {@code arrival_ms} 0, on the engines' clock.
     * @return the running recorder, or null without a trace file.
     * @throws IOException if the file cannot be created.
     */
    public TraceRecorder start(final String source, final String model, final List<EngineConfig> configs,
        final long startNs) throws IOException
    {
        if (null == traceOut)
        {
            return null;
        }
        final EngineConfig first = configs.get(0);
        final TraceMeta meta = new TraceMeta().source(source).model(model).maxNumSeqs((long)first.maxNumSeqs())
            .blockSize(0 == traceBlockSize ? null : (long)traceBlockSize);
        meta.extra().put("tapedeck_version", TextNode.valueOf(TapedeckVersion.version()));
        meta.extra().put("latency_model", TextNode.valueOf(first.latencyModel().describe()));
        meta.extra().put("engines", IntNode.valueOf(configs.size()));
        if (null != engineConfig)
        {
            // the flags of the vLLM deployment imitated, those without effect here included, as a tap records them
            meta.vllmVersion(vllmTag).configHash(dev.tapedeck.trace.ConfigFingerprint.hash("", null == vllmTag ? "" :
                vllmTag, engineConfig));
            meta.extra().put("engine_config", TextNode.valueOf(engineConfig));
        }
        final TraceRecorder recorder = TraceRecorder.start(traceOut, meta, recordTokens, traceBlockSize, startNs);
        for (final EngineConfig config : configs)
        {
            config.requestObserver(recorder);
        }
        return recorder;
    }
}
